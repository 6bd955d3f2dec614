"""TL601 probe: a diffusion sampler whose UNet is compiled with `unet = torch.compile(unet,
fullgraph=False)` at module level after the class definition: in the UNet's `forward`, a
`while` on a tensor condition (`t.min() > 0`) and `.tolist()` of coarse timestep buckets;
the guidance function compiled with the decorator form `@torch.compile(dynamic=True)` branches
on `guidance_scale > 1` where the scale is a tensor argument annotated `torch.Tensor`; near
misses branch on `t.dtype`, on `self.training`, index a Python list with a Python int, and
run the same tensor branch in the eager sampling loop."""
import torch
import torch.nn as nn


class TinyUNet(nn.Module):
    def __init__(self, ch=64, n_steps=1000):
        super().__init__()
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.mid = nn.Conv2d(ch, ch, 3, padding=1)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)
        self.time_emb = nn.Embedding(n_steps, ch)
        self.scales = [1.0, 0.5, 0.25]

    def forward(self, x, t):
        if t.dtype != torch.long:  # clean
            t = t.long()
        steps = (t // 100).tolist()  # expect: TL601
        h = self.inp(x) + self.time_emb(t)[:, :, None, None]
        while t.min() > 0:  # expect: TL601
            t = t - 100
            h = h + self.mid(h)
        if self.training:  # clean
            h = nn.functional.dropout(h, 0.1)
        return self.out(h * self.scales[len(steps) % 3])  # clean


unet = TinyUNet()
unet = torch.compile(unet, fullgraph=False)


@torch.compile(dynamic=True)
def guided_eps(eps_cond: torch.Tensor, eps_uncond: torch.Tensor, guidance_scale: torch.Tensor):
    if guidance_scale > 1:  # expect: TL601
        return eps_uncond + guidance_scale * (eps_cond - eps_uncond)
    return eps_cond


@torch.no_grad()
def sample(shape, steps=50, guidance=3.0):
    unet.eval()
    x = torch.randn(shape)
    scale = torch.tensor(guidance)
    for i in reversed(range(steps)):
        t = torch.full((shape[0],), i, dtype=torch.long)
        eps = guided_eps(unet(x, t), unet(x, torch.zeros_like(t)), scale)
        x = x - eps / steps
        if x.abs().max() > 10:  # clean
            x = x.clamp(-10, 10)
    return x
