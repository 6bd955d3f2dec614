"""TL205 probe: `torch.tensor` of `argmax` / `cumsum` results (tensors); near misses wrap `x.shape`,
`x.size()`, `.numpy()`, `.item()` and `.tolist()` results, which are not tensors."""
import torch


@torch.no_grad()
def predicted_ids(model, x):
    model.eval()
    logits = model(x)
    return torch.tensor(logits.argmax(dim=-1), dtype=torch.long)  # expect: TL205


def lengths_to_offsets(lengths: torch.Tensor):
    offsets = torch.cumsum(lengths, dim=0)
    return torch.tensor(offsets)  # expect: TL205


def shape_tensor(x: torch.Tensor):
    return torch.tensor(x.shape), torch.tensor(x.size())  # clean


def host_copies(x: torch.Tensor):
    return torch.tensor(x.numpy()), torch.tensor(x.sum().item()), torch.tensor(x.tolist())  # clean
