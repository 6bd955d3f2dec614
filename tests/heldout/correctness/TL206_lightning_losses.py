"""TL206 probe: Lightning-style steps that feed `Tensor.softmax` / `torch.log_softmax` output to a
`CrossEntropyLoss` attribute and `torch.sigmoid` output to functional BCE-with-logits; near misses are
distillation (softmax as the *target*), NLL on log-probabilities and KL divergence."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L


class SceneClassifier(L.LightningModule):
    def __init__(self, backbone: nn.Module, n_classes=365, T=4.0):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(512, n_classes)
        self.loss_fn = nn.CrossEntropyLoss()
        self.T = T

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        probs = self(x).softmax(dim=-1)
        loss = self.loss_fn(probs, y)  # expect: TL206
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(torch.log_softmax(self(x), dim=1), y)  # expect: TL206
        self.log("val/loss", loss)

    def distill_step(self, x, teacher_logits):
        soft_targets = F.softmax(teacher_logits / self.T, dim=-1)
        return F.cross_entropy(self(x) / self.T, soft_targets)  # clean

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)


def multilabel_loss(logits, targets, pos_weight):
    return F.binary_cross_entropy_with_logits(torch.sigmoid(logits), targets, pos_weight=pos_weight)  # expect: TL206


def nll_from_log_probs(logits, y):
    return nn.NLLLoss()(F.log_softmax(logits, dim=-1), y)  # clean


def kd_loss(student_logits, teacher_logits, T=4.0):
    return F.kl_div(F.log_softmax(student_logits / T, dim=-1), F.softmax(teacher_logits / T, dim=-1),
                    reduction="batchmean")  # clean
