"""TL403 probe: a validation loop that collects logits with the `acc = x if acc is None else
torch.cat([acc, x])` form and stacks per-batch metrics onto a growing tensor, against greedy
decoding, where the growing sequence is the model's input on every step (it cannot be
collected in a list and joined once)."""
import torch


@torch.inference_mode()
def collect_predictions(model, loader, device):
    model.eval()
    all_logits = None
    batch_losses = torch.empty(0)
    criterion = torch.nn.CrossEntropyLoss()
    for batch in loader:
        input_ids = batch["input_ids"].to(device)
        labels = batch["labels"].to(device)
        logits = model(input_ids).float()
        all_logits = logits.cpu() if all_logits is None else torch.cat([all_logits, logits.cpu()])  # expect: TL403
        loss = criterion(logits, labels).cpu()
        batch_losses = torch.cat([batch_losses, loss.unsqueeze(0)])  # expect: TL403
    return all_logits, batch_losses.mean()


@torch.inference_mode()
def greedy_decode(model, prompt_ids, eos_id, max_new_tokens=64):
    model.eval()
    ids = prompt_ids
    for _ in range(max_new_tokens):
        next_logits = model(ids)[:, -1, :]
        next_id = next_logits.argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)  # clean
        if (next_id == eos_id).all():
            break
    return ids
