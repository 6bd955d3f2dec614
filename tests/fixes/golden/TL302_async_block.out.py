import torch


async def evaluate(model, request):
    batch = await request.tensor()
    model.eval()
    with torch.no_grad():
        logits = model(batch)
    probs = torch.softmax(logits, dim=-1)
    return probs.tolist()
