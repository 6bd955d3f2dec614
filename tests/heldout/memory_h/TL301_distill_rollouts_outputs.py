"""TL301 probe: model outputs and rewards kept across iterations: a distillation loop that stores the
student's logits for an epoch-end calibration plot, a PPO update loop summing the policy loss into an
epoch total, an early-stopping loop tracking the best loss tensor, and an SWA fine-tune appending
predictions; near misses keep teacher logits computed under `no_grad`, store `logits.detach().cpu()`,
and sum `loss.item()` into an epoch total."""
import torch
import torch.nn.functional as F


def distill_epoch(student, teacher, loader, optimizer, T=2.0):
    teacher.eval()
    student.train()
    student_logits, teacher_logits = [], []
    for x, y in loader:
        with torch.no_grad():
            t = teacher(x)
        s = student(x)
        loss = F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        student_logits.append(s)  # expect: TL301
        teacher_logits.append(t)  # clean
    return torch.cat(student_logits), torch.cat(teacher_logits)


def distill_epoch_detached(student, teacher, loader, optimizer, T=2.0):
    teacher.eval()
    student.train()
    student_logits = []
    for x, y in loader:
        with torch.no_grad():
            t = teacher(x)
        s = student(x)
        loss = F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        student_logits.append(s.detach().cpu())  # clean
    return torch.cat(student_logits)


def ppo_update(policy, optimizer, batches, clip=0.2, epochs=4):
    total = 0
    for _ in range(epochs):
        for obs, actions, old_logp, adv in batches:
            dist = torch.distributions.Categorical(logits=policy(obs))
            ratio = (dist.log_prob(actions) - old_logp).exp()
            loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total = total + loss  # expect: TL301
    return total


def ppo_update_item(policy, optimizer, batches, clip=0.2, epochs=4):
    total = 0.0
    for _ in range(epochs):
        for obs, actions, old_logp, adv in batches:
            dist = torch.distributions.Categorical(logits=policy(obs))
            ratio = (dist.log_prob(actions) - old_logp).exp()
            loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()  # clean
    return total


def early_stop_track(model, loader, optimizer, epochs=20):
    best = None
    for epoch in range(epochs):
        epoch_losses = []
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss)  # expect: TL301
        mean = torch.stack(epoch_losses).mean()
        if best is None or mean < best:
            best = mean
    return best


def swa_predictions(model, swa_model, loader, optimizer):
    preds = []
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        out = model(x)
        F.cross_entropy(out, y).backward()
        optimizer.step()
        swa_model.update_parameters(model)
        preds.append(out.argmax(-1))  # clean
    return torch.cat(preds)
