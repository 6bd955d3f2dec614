"""Clean script: full-batch node classification with a two-layer GCN written in plain torch
(sparse normalized adjacency built once with `torch.sparse_coo_tensor`, `index_add_` message
passing for an edge-weighted variant), train/val/test masks, early stopping on validation
accuracy with a patience counter, the best state kept with `copy.deepcopy`, and a final test
under `torch.inference_mode()`; notebook-style top-level code after the definitions.
No rule may fire."""
import copy
import json
import logging
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("gcn")


def normalized_adjacency(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    self_loops = torch.arange(num_nodes, device=edge_index.device).repeat(2, 1)
    edges = torch.cat([edge_index, edge_index.flip(0), self_loops], dim=1)
    values = torch.ones(edges.size(1), device=edge_index.device)
    adj = torch.sparse_coo_tensor(edges, values, (num_nodes, num_nodes)).coalesce()
    deg = torch.sparse.sum(adj, dim=1).to_dense()
    d_inv_sqrt = deg.pow(-0.5)
    row, col = adj.indices()
    norm = d_inv_sqrt[row] * adj.values() * d_inv_sqrt[col]
    return torch.sparse_coo_tensor(adj.indices(), norm, (num_nodes, num_nodes)).coalesce()


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim)) if bias else None

    def forward(self, x, adj):
        out = torch.sparse.mm(adj, self.linear(x))
        return out + self.bias if self.bias is not None else out


class EdgeWeightedConv(nn.Module):
    """Sum of neighbour messages scaled by an edge weight, through `index_add_` on a new tensor."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.message = nn.Linear(in_dim, out_dim)
        self.root = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index, edge_weight):
        src, dst = edge_index
        messages = self.message(x)[src] * edge_weight.unsqueeze(-1)
        agg = torch.zeros(x.size(0), messages.size(1), device=x.device, dtype=messages.dtype)
        agg.index_add_(0, dst, messages)
        return agg + self.root(x)


class GCN(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, dropout=0.5):
        super().__init__()
        self.conv1 = GCNLayer(in_dim, hidden)
        self.conv2 = GCNLayer(hidden, n_classes)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, adj))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, adj)


def accuracy(logits, labels, mask):
    return (logits[mask].argmax(dim=-1) == labels[mask]).float().mean().item()


@torch.inference_mode()
def evaluate(model, x, adj, labels, mask):
    model.eval()
    logits = model(x, adj)
    return F.cross_entropy(logits[mask], labels[mask]).item(), accuracy(logits, labels, mask)


DATA = Path("data/cora.pt")
CONFIG = {"hidden": 16, "dropout": 0.5, "lr": 0.01, "weight_decay": 5e-4, "epochs": 400, "patience": 50}
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

graph = torch.load(DATA, weights_only=True)
x = graph["x"].to(device)
labels = graph["y"].to(device)
adj = normalized_adjacency(graph["edge_index"].to(device), x.size(0))
train_mask, val_mask, test_mask = (graph[k].to(device) for k in ("train_mask", "val_mask", "test_mask"))

model = GCN(x.size(1), CONFIG["hidden"], int(labels.max()) + 1, CONFIG["dropout"]).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"], weight_decay=CONFIG["weight_decay"])

best_acc, best_state, bad_epochs = 0.0, None, 0
for epoch in range(CONFIG["epochs"]):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    logits = model(x, adj)
    loss = F.cross_entropy(logits[train_mask], labels[train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        val_loss, val_acc = evaluate(model, x, adj, labels, val_mask)
        logger.info("epoch %03d train %.4f val %.4f acc %.3f", epoch, loss.item(), val_loss, val_acc)
        if val_acc > best_acc:
            best_acc, best_state, bad_epochs = val_acc, copy.deepcopy(model.state_dict()), 0
        else:
            bad_epochs += 10
            if bad_epochs >= CONFIG["patience"]:
                logger.info("early stop at epoch %d", epoch)
                break

if best_state is not None:
    model.load_state_dict(best_state)
test_loss, test_acc = evaluate(model, x, adj, labels, test_mask)
logger.info("test accuracy %.3f", test_acc)
Path("results.json").write_text(json.dumps({"val_acc": best_acc, "test_acc": test_acc, **CONFIG}))
