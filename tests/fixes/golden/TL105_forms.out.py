import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load(model_cls, path):
    model = model_cls()
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.to(device).eval()


def prepare(batch):
    images = batch["images"].to(device, non_blocking=True)
    noise = torch.randn(images.shape, device=device)
    return images + 0.01 * noise
