"""TL105 and TL106 probe: a training script with a device variable that still hard-codes "cuda" in
its GPU augmentation (a noise mask drawn with `device="cuda"`, a mixup permutation moved with
`.cuda()`, a frozen captioning encoder moved with `.to("cuda")`), and module `forward`s that build
CPU tensors next to their inputs: a random flip mask in a GPU augmentation module, the VAE's
reparameterisation noise, a flow's log-determinant accumulator, sinusoidal time embeddings of a
U-Net, and a learned position table indexed with `torch.arange`; near misses use the device
variable, a CUDA test around `.cuda()`, `*_like` factories, `device=x.device`, and a 0-d constant."""
import math

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def gpu_augment(images, p_erase=0.25):
    keep = torch.rand(images.size(0), 1, 1, 1, device="cuda") > p_erase  # expect: TL105
    return images * keep


def gpu_augment_device_variable(images, p_erase=0.25):
    keep = torch.rand(images.size(0), 1, 1, 1, device=device) > p_erase  # clean
    return images * keep


def mixup(images, labels, alpha=0.2):
    lam = float(torch.distributions.Beta(alpha, alpha).sample())
    perm = torch.randperm(images.size(0)).cuda()  # expect: TL105
    return lam * images + (1 - lam) * images[perm], labels, labels[perm], lam


def mixup_guarded(images, labels, alpha=0.2):
    lam = float(torch.distributions.Beta(alpha, alpha).sample())
    perm = torch.randperm(images.size(0))
    if torch.cuda.is_available():
        perm = perm.cuda()  # clean
    return lam * images + (1 - lam) * images[perm], labels, labels[perm], lam


def build_captioner(cnn, decoder):
    cnn = cnn.to("cuda").eval()  # expect: TL105
    cnn.requires_grad_(False)
    return cnn, decoder.to(device)  # clean


class RandomFlip(nn.Module):
    def forward(self, x):
        flip = (torch.rand(x.size(0), 1, 1, 1) < 0.5).to(x.dtype)  # expect: TL106
        return flip * x.flip(-1) + (1 - flip) * x


class RandomFlipOnDevice(nn.Module):
    def forward(self, x):
        flip = (torch.rand(x.size(0), 1, 1, 1, device=x.device) < 0.5).to(x.dtype)  # clean
        return flip * x.flip(-1) + (1 - flip) * x


class VAE(nn.Module):
    def __init__(self, d_in=784, d_z=16):
        super().__init__()
        self.enc = nn.Linear(d_in, 2 * d_z)
        self.dec = nn.Sequential(nn.Linear(d_z, d_in), nn.Sigmoid())

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        eps = torch.randn(mu.shape)  # expect: TL106
        z = mu + eps * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


class VAELike(VAE):
    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()  # clean
        return self.dec(z), mu, logvar


class AffineCouplingFlow(nn.Module):
    def __init__(self, dim, n_layers=4):
        super().__init__()
        self.nets = nn.ModuleList(nn.Linear(dim // 2, dim) for _ in range(n_layers))

    def forward(self, x):
        log_det = torch.zeros(x.size(0))  # expect: TL106
        for net in self.nets:
            a, b = x.chunk(2, dim=-1)
            log_s, t = net(a).chunk(2, dim=-1)
            log_s = torch.tanh(log_s)
            x = torch.cat([b * log_s.exp() + t, a], dim=-1)
            log_det = log_det + log_s.sum(-1)
        prior = -0.5 * (x ** 2 + math.log(2 * math.pi)).sum(-1)
        return prior + log_det


class TimeEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, 4 * dim)

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)  # expect: TL106
        args = t[:, None].float() * freqs[None]
        return self.proj(torch.cat([args.sin(), args.cos()], dim=-1))


class TimeEmbeddingOnDevice(TimeEmbedding):
    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)  # clean
        args = t[:, None].float() * freqs[None] * torch.tensor(1.0)  # clean
        return self.proj(torch.cat([args.sin(), args.cos()], dim=-1))


class CaptionDecoder(nn.Module):
    def __init__(self, vocab, dim, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, feats, tokens):
        positions = torch.arange(tokens.size(1))  # expect: TL106
        h = self.tok(tokens) + self.pos(positions)[None]
        y, _ = self.rnn(h, feats[None])
        return self.out(y)


def train(model, loader, optimizer):
    model.to(device).train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
