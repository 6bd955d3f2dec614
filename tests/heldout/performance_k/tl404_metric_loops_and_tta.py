"""TL404 probe: per-sample loops in evaluation and metric code. A segmentation evaluator runs the
model on `images[i:i + 1]` for each index of the batch to get per-image dice, a retrieval
evaluator embeds `queries[i].unsqueeze(0)` one query at a time, and a multi-label scorer runs the
model on each sample of the batch inside a list comprehension; near misses are per-sample loops
that only compute metrics on already batched outputs, a loop over the members of an ensemble, a
loop over test-time augmentations of the whole batch, and a per-sample loop over a Python list of
variable-sized images (no batch to use)."""
import torch
import torch.nn.functional as F


def dice(pred, gt, eps=1e-6):
    inter = (pred * gt).sum()
    return (2 * inter + eps) / (pred.sum() + gt.sum() + eps)


@torch.no_grad()
def per_image_dice(model, images, masks):
    model.eval()
    scores = []
    for i in range(images.size(0)):
        logits = model(images[i:i + 1])  # expect: TL404
        scores.append(dice(logits.argmax(1), masks[i:i + 1]).item())
    return scores


@torch.no_grad()
def per_image_dice_batched(model, images, masks):
    model.eval()
    preds = model(images).argmax(1)
    return [dice(preds[i], masks[i]).item() for i in range(images.size(0))]  # clean


@torch.no_grad()
def embed_queries(encoder, queries):
    encoder.eval()
    out = []
    for i in range(len(queries)):
        out.append(encoder(queries[i].unsqueeze(0)))  # expect: TL404
    return torch.cat(out)


@torch.no_grad()
def multilabel_probs(model, batch):
    model.eval()
    return torch.stack([torch.sigmoid(model(batch[i][None]))[0] for i in range(batch.shape[0])])  # expect: TL404


@torch.no_grad()
def ensemble_probs(models, images):
    for m in models:
        m.eval()
    return torch.stack([m(images).softmax(-1) for m in models]).mean(0)  # clean


@torch.no_grad()
def tta_probs(model, images):
    model.eval()
    views = [images, images.flip(-1), images.flip(-2)]
    return torch.stack([model(v).softmax(1) for v in views]).mean(0)  # clean


@torch.no_grad()
def predict_variable_sizes(model, image_list):
    model.eval()
    outs = []
    for img in image_list:
        outs.append(F.interpolate(model(img.unsqueeze(0)), size=img.shape[-2:]))  # clean
    return outs
