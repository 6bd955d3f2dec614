"""TL103 probe: inference helpers of a tabular churn model — a notebook-style `inference_mode` block, a
`predict_*` function under `@torch.no_grad()`, and near misses that only call a loss module, an activation
module, a model already switched to eval mode, or a probe built in place only from Linear/ReLU layers (eval()
changes nothing)."""
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


def probe_accuracy(train_x, train_y, test_x, test_y, n_classes):
    probe = nn.Sequential(nn.Linear(train_x.size(1), 64), nn.ReLU(), nn.Linear(64, n_classes))
    optimizer = torch.optim.LBFGS(probe.parameters(), lr=0.5)

    def closure():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(probe(train_x), train_y)
        loss.backward()
        return loss

    for _ in range(5):
        optimizer.step(closure)
    with torch.no_grad():
        return (probe(test_x).argmax(1) == test_y).float().mean()  # clean
