"""TL103/TL302 probe around Lightning-style code: a `LightningModule` with manual optimization for a
GAN (two optimizers, `manual_backward`, toggled discriminator) whose `validation_step`, `test_step` and
`predict_step` run the model without `.eval()` or `no_grad` (Lightning switches both around those hooks,
so they are near misses), next to plain-torch helpers of the same project that export predictions and
score a checkpoint outside the Trainer, where nothing switches the mode or turns grad off."""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn


class LitGAN(L.LightningModule):
    def __init__(self, gen: nn.Module, disc: nn.Module, z_dim=128):
        super().__init__()
        self.gen, self.disc, self.z_dim = gen, disc, z_dim
        self.automatic_optimization = False

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(self.disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
        return opt_g, opt_d

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        real = batch
        z = torch.randn(real.size(0), self.z_dim, device=self.device)
        fake = self.gen(z)
        self.toggle_optimizer(opt_d)
        d_loss = F.softplus(self.disc(fake.detach())).mean() + F.softplus(-self.disc(real)).mean()
        opt_d.zero_grad(set_to_none=True)
        self.manual_backward(d_loss)
        opt_d.step()
        self.untoggle_optimizer(opt_d)
        self.toggle_optimizer(opt_g)
        g_loss = F.softplus(-self.disc(fake)).mean()
        opt_g.zero_grad(set_to_none=True)
        self.manual_backward(g_loss)
        opt_g.step()
        self.untoggle_optimizer(opt_g)
        self.log_dict({"d_loss": d_loss, "g_loss": g_loss}, prog_bar=True)

    def validation_step(self, batch, batch_idx):
        score = self.disc(batch)  # clean
        self.log("val_real_score", score.mean())

    def test_step(self, batch, batch_idx):
        fake = self.gen(torch.randn(batch.size(0), self.z_dim, device=self.device))  # clean
        self.log("test_fake_score", self.disc(fake).mean())  # clean

    def predict_step(self, batch, batch_idx):
        return self.gen(batch)  # clean


def export_samples(generator, latents, batch_size=64):
    samples = []
    with torch.no_grad():
        for z in latents.split(batch_size):
            samples.append(generator(z).clamp(-1, 1).cpu())  # expect: TL103
    return torch.cat(samples)


def export_samples_eval(generator, latents, batch_size=64):
    generator.eval()
    samples = []
    with torch.no_grad():
        for z in latents.split(batch_size):
            samples.append(generator(z).clamp(-1, 1).cpu())  # clean
    return torch.cat(samples)


def score_checkpoint(path, disc, loader):
    disc.load_state_dict(torch.load(path, map_location="cpu", weights_only=True)["disc"])
    disc.eval()
    scores = []
    for real in loader:
        scores.append(disc(real).mean().item())  # expect: TL302
    return sum(scores) / len(scores)


@torch.no_grad()
def score_checkpoint_no_grad(path, disc, loader):
    disc.load_state_dict(torch.load(path, map_location="cpu", weights_only=True)["disc"])
    disc.eval()
    return sum(disc(real).mean().item() for real in loader) / len(loader)  # clean
