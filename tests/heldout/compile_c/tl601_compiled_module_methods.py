"""TL601 probe: modules compiled as a whole (`torch.compile(model, mode=...)` and
`model.compile()`) whose `forward` calls helper methods on `self`: boolean-mask reading of
detections in a decode helper, `.tolist()` of kept boxes, `math.exp` of a learnable
temperature (an `nn.Parameter`), and a debugging `print` in the forward of a subclass;
against `math.sqrt` of a Python head size, a helper decorated `torch.compiler.disable`,
`print` in `__init__`, masked writes (`x[mask] = 0`), branches on `self.training` and on a
tensor's `dtype`, and `torch.where` with three arguments."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    def __init__(self, dim=512, proj=256, init_temperature=0.07):
        super().__init__()
        print(f"building contrastive head {dim}->{proj}")  # clean
        self.img = nn.Linear(dim, proj)
        self.txt = nn.Linear(dim, proj)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / init_temperature)))  # clean
        self.scale = 1.0 / math.sqrt(proj)  # clean

    def forward(self, image_feats, text_feats):
        img = F.normalize(self.img(image_feats), dim=-1)
        txt = F.normalize(self.txt(text_feats), dim=-1)
        logits = img @ txt.T * math.exp(self.logit_scale)  # expect: TL601
        labels = torch.arange(img.size(0), device=img.device)
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


head = torch.compile(ContrastiveHead(), mode="max-autotune")


class DetectionPostprocess(nn.Module):
    def __init__(self, score_thresh=0.05, max_dets=100):
        super().__init__()
        self.score_thresh = score_thresh
        self.max_dets = max_dets

    @torch.compiler.disable
    def log_stats(self, scores):
        print("mean score", scores.mean().item())  # clean

    def _keep(self, boxes, scores):
        keep = scores > self.score_thresh
        return boxes[keep], scores[keep]  # expect: TL601

    def _to_python(self, boxes):
        return boxes.round().int().tolist()  # expect: TL601

    def forward(self, boxes, logits):
        if logits.dtype == torch.float16:  # clean
            logits = logits.float()
        scores = logits.sigmoid()
        scores = torch.where(scores > self.score_thresh, scores, torch.zeros_like(scores))  # clean
        boxes = boxes.clone()
        boxes[boxes < 0] = 0  # clean
        if not self.training:  # clean
            self.log_stats(scores)
        kept_boxes, kept_scores = self._keep(boxes, scores)
        return self._to_python(kept_boxes), kept_scores


post = DetectionPostprocess()
post.compile()


class Encoder(nn.Module):
    def __init__(self, dim=256, depth=4):
        super().__init__()
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, pad_mask=None):
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad_mask)
        return self.norm(x)


class DebugEncoder(Encoder):
    def forward(self, x, pad_mask=None):
        out = super().forward(x, pad_mask)
        print("encoder out", out.shape, out.std())  # expect: TL601
        return out


encoder = torch.compile(DebugEncoder().eval())
