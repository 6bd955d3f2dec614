"""TL105 probe: a diffusion sampler module whose device variable is a plain string, next to functions that
hard-code "cuda" / "cuda:0"; near misses check the device type and synchronise."""
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"  # clean


def sample(unet: nn.Module, betas: torch.Tensor, shape):
    unet.eval()
    x = torch.randn(shape, device="cuda:0")  # expect: TL105
    alphas = 1.0 - betas
    alpha_bar = torch.cumprod(alphas, dim=0)
    with torch.no_grad():
        for t in reversed(range(len(betas))):
            t_batch = torch.full((shape[0],), t, device=x.device, dtype=torch.long)
            eps = unet(x, t_batch)
            x = (x - betas[t] * (1 - alpha_bar[t]).rsqrt() * eps) * alphas[t].rsqrt()
            if t > 0:
                x = x + betas[t].sqrt() * torch.randn_like(x)
    return x


def load_unet(factory, path):
    unet = factory()
    unet.load_state_dict(torch.load(path, map_location=device, weights_only=True))
    return unet.to("cuda")  # expect: TL105


def timed_sample(unet, betas, shape):
    if torch.device(device).type == "cuda":  # clean
        torch.cuda.synchronize()
    out = sample(unet, betas.to(device), shape)
    torch.cuda.empty_cache()
    return out
