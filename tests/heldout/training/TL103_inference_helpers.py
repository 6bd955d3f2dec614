"""TL103 probe: inference helpers of a tabular churn model — a notebook-style `inference_mode` block, a
`predict_*` function under `@torch.no_grad()`, and near misses that only call a loss module, an activation
module, or a model already switched to eval mode."""
import torch
from torch import nn

FEATURES = 42


class ChurnNet(nn.Module):
    def __init__(self, n_features=FEATURES):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 1)
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


clf = ChurnNet()
clf.load_state_dict(torch.load("churn.pt", map_location="cpu", weights_only=True))
holdout = torch.load("holdout.pt", weights_only=True)

with torch.inference_mode():
    holdout_scores = clf(holdout["x"])  # expect: TL103
print("positives:", (holdout_scores > 0).sum())


@torch.no_grad()
def predict_proba(model, features):
    return torch.sigmoid(model(features))  # expect: TL103


criterion = nn.BCEWithLogitsLoss()
squash = nn.Sigmoid()


@torch.no_grad()
def validation_loss(logits, targets):
    return criterion(logits, targets)  # clean


@torch.no_grad()
def predict_from_logits(logits):
    return squash(logits)  # clean


@torch.no_grad()
def predict_proba_fixed(model, features):
    model.eval()
    return torch.sigmoid(model(features))  # clean
