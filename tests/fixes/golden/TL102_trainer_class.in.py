import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, loader, optimizer):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        return sum(F.mse_loss(self.model(x), y) for x, y in self.loader)

    def train_epoch(self):
        for x, y in self.loader:
            loss = F.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self, epochs):
        for _ in range(epochs):
            self.train_epoch()
            print(self.evaluate())
