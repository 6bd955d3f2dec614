"""TL601 probe: compiled training steps. A distillation step decorated with `@torch.compile`
returns `loss.item()` and prints the temperature-scaled loss, a contrastive step compiled with
`torch.compile(step_fn, mode="reduce-overhead")` converts the accuracy with `float(...)` and
returns the in-batch predictions `.tolist()`; near misses are the same step returning the detached
loss (read outside the compiled function), a branch on a Python float argument, a shape test,
and `.item()` in the uncompiled loop that calls the steps."""
import torch
import torch.nn.functional as F


@torch.compile
def kd_step(student, teacher, x, y, optimizer, T: float = 4.0, alpha: float = 0.9):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1), reduction="batchmean")
    loss = alpha * kd * T * T + (1 - alpha) * F.cross_entropy(s_logits, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print("kd loss", kd)  # expect: TL601
    return loss.item()  # expect: TL601


@torch.compile
def kd_step_fixed(student, teacher, x, y, optimizer, T: float = 4.0, alpha: float = 0.9):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    if alpha < 1.0:  # clean
        ce = F.cross_entropy(s_logits, y)
    else:
        ce = torch.zeros((), device=x.device)
    if x.shape[0] == 1:  # clean
        s_logits = s_logits.view(1, -1)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), F.softmax(t_logits / T, dim=-1), reduction="batchmean")
    loss = alpha * kd * T * T + (1 - alpha) * ce
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def contrastive_step(encoder, x1, x2, optimizer, tau: float = 0.1):
    z1, z2 = F.normalize(encoder(x1), dim=-1), F.normalize(encoder(x2), dim=-1)
    logits = z1 @ z2.T / tau
    labels = torch.arange(z1.size(0), device=z1.device)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    acc = float((logits.argmax(1) == labels).float().mean())  # expect: TL601
    return loss.detach(), acc, logits.argmax(1).tolist()  # expect: TL601


compiled_contrastive_step = torch.compile(contrastive_step, mode="reduce-overhead")


def train(student, teacher, loader, optimizer, device, log_every=100):
    student.train()
    teacher.eval()
    for step, (x, y) in enumerate(loader):
        loss = kd_step_fixed(student, teacher, x.to(device), y.to(device), optimizer)
        if step % log_every == 0:
            print(step, loss.item())  # clean
