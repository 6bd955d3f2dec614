import torch


def sgd_step(w, lr):
	if w.grad is not None:
		w -= lr * w.grad  # in place


w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
	w.add_(1)
