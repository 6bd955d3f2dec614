"""TL403 probe: a self-supervised kNN monitor that grows its feature bank with `torch.cat`, and
a diffusion sampler that grows its trajectory with `torch.cat` over a thousand steps, against
a test-time augmentation doubling over a literal few views and a concatenation that is not an
accumulator."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def build_feature_bank(backbone, memory_loader, device):
    backbone.eval()
    feature_bank = torch.empty(0, device=device)
    bank_labels = []
    for images, labels in memory_loader:
        feats = F.normalize(backbone(images.to(device, non_blocking=True)), dim=1)
        feature_bank = torch.cat([feature_bank, feats], dim=0)  # expect: TL403
        bank_labels.append(labels)
    return feature_bank.t().contiguous(), torch.cat(bank_labels).to(device)  # clean


@torch.no_grad()
def sample_trajectory(denoiser, alphas, alphas_cumprod, shape, device, timesteps=1000):
    denoiser.eval()
    x_t = torch.randn(shape, device=device)
    trajectory = x_t.unsqueeze(0)
    for t in reversed(range(timesteps)):
        t_batch = torch.full((shape[0],), t, device=device, dtype=torch.long)
        eps = denoiser(x_t, t_batch)
        a, a_bar = alphas[t], alphas_cumprod[t]
        x_t = (x_t - (1 - a) / (1 - a_bar).sqrt() * eps) / a.sqrt()
        if t > 0:
            x_t = x_t + (1 - a).sqrt() * torch.randn_like(x_t)
        trajectory = torch.cat((trajectory, x_t.unsqueeze(0)), dim=0)  # expect: TL403
    return trajectory


@torch.no_grad()
def tta_logits(model, images):
    model.eval()
    views = images
    for _ in range(2):
        views = torch.cat([views, views.flip(-1)], dim=0)  # clean
    logits = model(views)
    return logits.view(4, images.size(0), -1).mean(0)


def bidirectional_summary(states_fwd, states_bwd):
    summaries = []
    for h_f, h_b in zip(states_fwd, states_bwd):
        summaries.append(torch.cat([h_f[-1], h_b[0]], dim=-1))  # clean
    return torch.stack(summaries)
