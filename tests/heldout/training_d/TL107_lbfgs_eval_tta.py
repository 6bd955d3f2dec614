"""TL107 probe: an evaluation helper under `@torch.inference_mode()` that fine-tunes a calibration
temperature with a backward pass, and an LBFGS style-transfer step whose closure backpropagates inside a
`with torch.no_grad():` block of the caller; near misses re-enable autograd with `torch.enable_grad()`
around the closure, run the closure outside the block, and call `.backward()` in a Lightning-style
`training_step` helper that is not under no_grad."""
import torch
from torch import nn
import torch.nn.functional as F


@torch.inference_mode()
def calibrate_and_score(model: nn.Module, loader, steps=50):
    model.eval()
    logits = torch.cat([model(x) for x, _ in loader])
    labels = torch.cat([y for _, y in loader])
    temperature = torch.ones(1, requires_grad=True)
    opt = torch.optim.LBFGS([temperature], lr=0.01, max_iter=steps)
    loss = F.cross_entropy(logits / temperature, labels)
    loss.backward()  # expect: TL107
    opt.step(lambda: F.cross_entropy(logits / temperature, labels))
    return temperature.detach()


def stylize(image, content_feats, style_grams, extractor, steps=300):
    image = image.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([image], max_iter=20)
    with torch.no_grad():
        for _ in range(steps // 20):
            optimizer.zero_grad()
            feats = extractor(image)
            loss = F.mse_loss(feats[-1], content_feats) + sum(
                F.mse_loss(f.flatten(2) @ f.flatten(2).transpose(1, 2), g) for f, g in zip(feats, style_grams))
            loss.backward()  # expect: TL107
            image.clamp_(0, 1)
    return image.detach()


def stylize_fixed(image, content_feats, extractor, steps=300):
    image = image.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([image], max_iter=20)

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(extractor(image)[-1], content_feats)
        loss.backward()  # clean
        return loss

    for _ in range(steps // 20):
        optimizer.step(closure)
        with torch.no_grad():
            image.clamp_(0, 1)
    return image.detach()


@torch.no_grad()
def adapt_bn_then_score(model: nn.Module, batch, optimizer):
    with torch.enable_grad():
        entropy = -(model(batch).softmax(dim=-1) * model(batch).log_softmax(dim=-1)).sum(dim=-1).mean()
        entropy.backward()  # clean
        optimizer.step()
    return model(batch).argmax(dim=-1)


def manual_step(model, batch, optimizer):
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()  # clean
    optimizer.step()
    return loss.detach()
