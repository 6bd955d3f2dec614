"""TL301/TL302 probe: a speech distillation loop that keeps the student's per-step KD losses in
`self.kd_history` (a trainer attribute living across steps), a best-checkpoint tracker that stores the
loss tensor itself as `best_loss` and appends the improving losses, and a `predict_logits` helper run
after `student.eval()` over a loader without no_grad; near misses keep `best_loss = loss.item()`,
`self.kd_history.append(kd.detach())`, run the frozen teacher under `torch.no_grad()`, and an
`evaluate_saliency` helper that backpropagates to the inputs."""
import torch
import torch.nn.functional as F


class DistillTrainer:
    def __init__(self, student, teacher, optimizer, temperature=2.0):
        self.student = student
        self.teacher = teacher.eval()
        self.optimizer = optimizer
        self.temperature = temperature
        self.kd_history = []
        self.kd_detached = []

    def fit(self, loader, epochs=5):
        best_loss, improvements = float("inf"), []
        for epoch in range(epochs):
            for feats, labels in loader:
                with torch.no_grad():
                    t_logits = self.teacher(feats)  # clean
                s_logits = self.student(feats)
                kd = F.kl_div(F.log_softmax(s_logits / self.temperature, dim=-1),
                              F.softmax(t_logits / self.temperature, dim=-1), reduction="batchmean")
                loss = kd * self.temperature ** 2 + F.cross_entropy(s_logits, labels)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                self.kd_history.append(kd)  # expect: TL301
                self.kd_detached.append(kd.detach())  # clean
                if loss < best_loss:
                    best_loss = loss
                    improvements.append(loss)  # expect: TL301
        return best_loss, improvements


def fit_tracking_floats(student, loader, optimizer):
    best_loss = float("inf")
    student.train()
    for feats, labels in loader:
        loss = F.cross_entropy(student(feats), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        best_loss = min(best_loss, loss.item())  # clean
    return best_loss


def predict_logits(student, loader):
    student.eval()
    outs = []
    for feats, _ in loader:
        outs.append(student(feats).float())  # expect: TL302
    return torch.cat(outs)


def evaluate_saliency(student, feats, target):
    student.eval()
    feats = feats.clone().requires_grad_(True)
    score = student(feats)[:, target].sum()  # clean
    score.backward()
    return feats.grad.abs()
