"""TL408 probe: notebook-style top-level code chasing NaNs in a graph net's training:
`torch.autograd.set_detect_anomaly(True)` at the top of the notebook that then trains, and
`with torch.autograd.detect_anomaly(check_nan=True):` around a training step of the trainer
class; near misses are `set_detect_anomaly(False)` after the hunt, anomaly detection behind a
debug flag passed as the argument (`set_detect_anomaly(cfg.debug_anomaly)`), and a
`torch.isnan` check (the cheap way)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.loader import DataLoader as GeoLoader
from torch_geometric.nn import GCNConv

torch.autograd.set_detect_anomaly(True)  # expect: TL408


class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.conv1 = GCNConv(d_in, d_hidden)
        self.conv2 = GCNConv(d_hidden, n_classes)

    def forward(self, x, edge_index):
        return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)


class Trainer:
    def __init__(self, model, optimizer, cfg):
        self.model = model
        self.optimizer = optimizer
        self.cfg = cfg
        torch.autograd.set_detect_anomaly(cfg.debug_anomaly)  # clean

    def step(self, data):
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autograd.detect_anomaly(check_nan=True):  # expect: TL408
            out = self.model(data.x, data.edge_index)
            loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
            loss.backward()
        self.optimizer.step()
        return loss.detach()


model = GCN(1433, 64, 7)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
trainer = Trainer(model, opt, cfg=type("Cfg", (), {"debug_anomaly": False})())
graphs = []
loader = GeoLoader(graphs, batch_size=1, num_workers=2)
for epoch in range(200):
    for data in loader:
        loss = trainer.step(data)
        if torch.isnan(loss):  # clean
            raise RuntimeError(f"NaN loss at epoch {epoch}")

torch.autograd.set_detect_anomaly(False)  # clean
