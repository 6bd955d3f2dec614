"""TL107 probe: `no_grad` / `inference_mode` reached through aliases (`from torch import no_grad`,
`import torch as th`), and an `enable_grad` block nested inside a no_grad region as the near miss."""
import torch as th
from torch import no_grad


def saliency_broken(model, image, label):
    model.eval()
    image = image.clone().requires_grad_()
    with no_grad():
        score = model(image[None])[0, label]
        score.backward()  # expect: TL107
    return image.grad.abs().amax(dim=0)


def integrated_gradients_broken(model, image, label, steps=32):
    model.eval()
    alphas = th.linspace(0, 1, steps, device=image.device)
    path = (alphas[:, None, None, None] * image[None]).requires_grad_()
    with th.inference_mode():
        scores = model(path)[:, label].sum()
        scores.backward()  # expect: TL107
    return image * path.grad.mean(dim=0)


@th.no_grad()
def saliency(model, image, label):
    model.eval()
    with th.enable_grad():
        image = image.clone().requires_grad_()
        score = model(image[None])[0, label]
        score.backward()  # clean
    return image.grad.abs().amax(dim=0)


def smoothgrad(model, image, label, n=16, sigma=0.1):
    model.eval()
    with no_grad():
        noisy = image[None] + sigma * th.randn(n, *image.shape, device=image.device)
    noisy.requires_grad_()
    model(noisy)[:, label].sum().backward()  # clean
    return noisy.grad.abs().mean(dim=0)
