"""TL407 probe: mixed-precision training with `GradScaler` and gradient accumulation, and a
contrastive trainer: `optimizer.zero_grad(set_to_none=False)` after each accumulated step,
`p.grad.data.zero_()` over the projection head's parameters in a warm-up branch, and
`p.grad.fill_(0)` over the temperature parameter list; near misses are `zero_grad()` (its default
frees), `set_to_none=True`, `p.grad = None`, a gradient-accumulation buffer of our own zeroed with
`.zero_()` (not a `.grad`), and `fill_(0.0)` of an EMA copy's weights (not gradients)."""
import torch
import torch.nn.functional as F


def train_amp(model, loader, optimizer, scaler, accum_steps, device):
    model.train()
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x.to(device)), y.to(device)) / accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=False)  # expect: TL407


def train_contrastive(encoder, head, log_temp, loader, optimizer, warmup_steps):
    temps = [log_temp]
    grad_buffer = [torch.zeros_like(p) for p in encoder.parameters()]
    for step, (a, b) in enumerate(loader):
        za = F.normalize(head(encoder(a)), dim=-1)
        zb = F.normalize(head(encoder(b)), dim=-1)
        logits = za @ zb.T * log_temp.exp()
        loss = F.cross_entropy(logits, torch.arange(za.size(0), device=za.device))
        optimizer.zero_grad()  # clean
        loss.backward()
        if step < warmup_steps:
            for p in head.parameters():
                p.grad.data.zero_()  # expect: TL407
            for t in temps:
                t.grad.fill_(0)  # expect: TL407
        for buf, p in zip(grad_buffer, encoder.parameters()):
            buf.add_(p.grad)
        optimizer.step()
        if step % 100 == 0:
            for buf in grad_buffer:
                buf.zero_()  # clean


def train_plain(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)  # clean
        F.mse_loss(model(x), y).backward()
        optimizer.step()


def reset_ema(ema_model):
    with torch.no_grad():
        for p in ema_model.parameters():
            p.fill_(0.0)  # clean
            p.grad = None  # clean
