"""TL407 probe: gradient clearing in code of the `Variable` era, ported to current torch. A GAN
loop zeroes the discriminator's gradients parameter by parameter with `p.grad.data.zero_()`, a
pointer-network trainer fills them with `p.grad.fill_(0)` behind a `None` test, and a
teacher/student loop calls `optimizer.zero_grad(set_to_none=False)`; near misses are
`p.grad = None`, `optimizer.zero_grad()` / `zero_grad(set_to_none=True)`, `zero_()` on a
gradient-free buffer (a running confusion matrix) and `fill_(0)` on a mask."""
import torch
import torch.nn.functional as F


def train_gan_legacy(netG, netD, loader, optG, optD, nz=100):
    for real, _ in loader:
        for p in netD.parameters():
            if p.grad is not None:
                p.grad.data.zero_()  # expect: TL407
        z = torch.randn(real.size(0), nz)
        d_loss = F.softplus(-netD(real)).mean() + F.softplus(netD(netG(z).detach())).mean()
        d_loss.backward()
        optD.step()
        for p in netG.parameters():
            p.grad = None  # clean
        g_loss = F.softplus(-netD(netG(z))).mean()
        g_loss.backward()
        optG.step()


def train_pointer(model, loader, optimizer, clip=2.0):
    for src, tgt in loader:
        for p in model.parameters():
            if p.grad is not None:
                p.grad.fill_(0)  # expect: TL407
        log_probs = model(src)
        loss = F.nll_loss(log_probs.flatten(0, 1), tgt.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()


def distill(student, teacher, loader, optimizer, T=4.0):
    teacher.eval()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)  # expect: TL407
        with torch.no_grad():
            t = teacher(x)
        s = student(x)
        loss = F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean")
        loss.backward()
        optimizer.step()


def distill_fixed(student, teacher, loader, optimizer, n_classes, T=4.0):
    teacher.eval()
    confusion = torch.zeros(n_classes, n_classes, dtype=torch.long)
    for epoch in range(3):
        confusion.zero_()  # clean
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)  # clean
            with torch.no_grad():
                t = teacher(x)
            s = student(x)
            loss = F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean")
            loss.backward()
            optimizer.step()
            mask = torch.ones_like(y, dtype=torch.bool)
            mask.fill_(0)  # clean
            confusion += torch.bincount(y * n_classes + s.argmax(1), minlength=n_classes ** 2).view(n_classes, n_classes)
    return confusion
