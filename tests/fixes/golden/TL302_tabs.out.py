import torch


@torch.no_grad()
def score(model, batches):
	model.eval()
	scores = []
	for batch in batches:
		# one score per batch
		scores.append(torch.sigmoid(model(batch)))
	return torch.cat(scores)


if __name__ == "__main__":
	model = torch.nn.Linear(4, 1)
	model.eval()
	with torch.no_grad():
		for batch in torch.randn(8, 2, 4):
			print(model(batch))
