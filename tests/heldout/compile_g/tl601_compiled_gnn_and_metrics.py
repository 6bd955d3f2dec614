"""TL601 probe: a message-passing layer compiled through `torch.compile(model)` at the call
site of a training script, and a compiled metric function: in the compiled model's `forward`,
`num_nodes = int(edge_index.max().item()) + 1` and an `if` on `deg.min() == 0`; in the
`@torch.compile` metric, a boolean-mask index `labels[preds == labels]` (a data-dependent output
shape), `.tolist()` of per-class counts and a `print` of the accuracy; near
misses are `edge_index.size(1)` (a size, not a value), a branch on `x.dim()`, a branch on a
keyword flag, `torch.where` for the data-dependent choice, and the eager evaluation loop's
`.item()` (not compiled)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanAggregate(nn.Module):
    def __init__(self, d_in, d_out, add_self_loops=True):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.add_self_loops = add_self_loops

    def forward(self, x, edge_index):
        num_nodes = int(edge_index.max().item()) + 1  # expect: TL601
        n_edges = edge_index.size(1)  # clean
        if x.dim() == 1:  # clean
            x = x.unsqueeze(-1)
        src, dst = edge_index
        deg = torch.zeros(num_nodes, device=x.device).index_add_(0, dst, torch.ones(n_edges, device=x.device))
        if deg.min() == 0:  # expect: TL601
            deg = deg.clamp(min=1)
        if self.add_self_loops:  # clean
            deg = deg + 1
        agg = torch.zeros(num_nodes, x.size(-1), device=x.device).index_add_(0, dst, x[src])
        return self.lin(agg / deg.unsqueeze(-1))


class GraphNet(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.layer1 = MeanAggregate(d_in, d_hidden)
        self.head = nn.Linear(d_hidden, n_classes)

    def forward(self, x, edge_index):
        return self.head(F.relu(self.layer1(x, edge_index)))


@torch.compile
def class_accuracy(logits, labels, n_classes: int):
    preds = logits.argmax(-1)
    correct = torch.bincount(labels[preds == labels], minlength=n_classes)  # expect: TL601
    total = torch.bincount(labels, minlength=n_classes)
    per_class = torch.where(total > 0, correct / total.clamp(min=1), torch.zeros_like(correct, dtype=torch.float))  # clean
    counts = total.tolist()  # expect: TL601
    acc = (preds == labels).float().mean()
    print("accuracy", acc)  # expect: TL601
    return per_class, counts


def main(x, edge_index, labels, masks, epochs=100):
    model = torch.compile(MeanAggregate(x.size(-1), 7))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        out = model(x, edge_index)
        loss = F.cross_entropy(out[masks["train"]], labels[masks["train"]])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with torch.no_grad():
        out = model(x, edge_index)
        val_loss = F.cross_entropy(out[masks["val"]], labels[masks["val"]]).item()  # clean
    return val_loss
