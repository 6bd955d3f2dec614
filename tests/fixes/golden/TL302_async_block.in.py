import torch


async def evaluate(model, request):
    batch = await request.tensor()
    model.eval()
    logits = model(batch)
    probs = torch.softmax(logits, dim=-1)
    return probs.tolist()
