import torch


def test_accuracy(model, loader):
    correct = total = 0
    with torch.inference_mode():
        # score every batch
        model.eval()
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
            total += labels.numel()
    return correct / total
