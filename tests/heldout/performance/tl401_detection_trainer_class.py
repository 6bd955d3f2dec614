"""TL401 probe: a detection trainer class with AMP; per-step syncs inside a method
(`grad_norm.item()` into a list, loss dict values `.cpu()` every step), against a periodic
print under `if i % 20 == 0 and ...` and a sync after the loop."""
import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


class DetectorTrainer:
    def __init__(self, model, optimizer, device, grad_clip=10.0):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device
        self.scaler = torch.amp.GradScaler("cuda")
        self.grad_clip = grad_clip
        self.grad_norms = []
        self.loss_history = []

    def train_epoch(self, loader, epoch):
        self.model.train()
        total = torch.zeros((), device=self.device)
        for i, (images, targets) in enumerate(loader):
            images = [img.to(self.device, non_blocking=True) for img in images]
            targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]
            with torch.autocast("cuda", dtype=torch.float16):
                loss_dict = self.model(images, targets)
                loss = sum(loss_dict.values())
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.grad_norms.append(grad_norm.item())  # expect: TL401
            self.loss_history.append(loss.detach().cpu())  # expect: TL401
            total += loss.detach()
            if i % 20 == 0 and is_main_process():
                print(epoch, i, {k: round(v.item(), 3) for k, v in loss_dict.items()})  # clean
        return total.item() / max(len(loader), 1)  # clean
