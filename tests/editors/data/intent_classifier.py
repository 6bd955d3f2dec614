"""Intent classifier for a support chatbot: the file the real-editor tests open.

Markers follow the corpus convention: `# expect: CODE` on each line that must be reported.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class IntentNet(nn.Module):
    def __init__(self, vocab=30000, dim=128, n_intents=20):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(dim, n_intents)

    def forward(self, tokens, offsets):
        return self.out(self.drop(self.emb(tokens, offsets)))


def train(model, loader, optimizer, epochs=5):
    model.train()
    losses = []
    for epoch in range(epochs):
        for tokens, offsets, labels in loader:  # expect: TL101
            logits = model(tokens.to(device), offsets.to(device))
            loss = F.cross_entropy(logits, labels.to(device))
            loss.backward()
            optimizer.step()
            losses.append(loss)  # expect: TL301
    return losses


def predict(model, tokens, offsets):
    model.eval()
    with torch.no_grad():
        logits = model(tokens.to(device), offsets.to(device))
    return {"intention": logits.argmax(-1), "confiance 📈é": F.softmax(logits)}  # expect: TL201


if __name__ == "__main__":
    # Smoke test on random token ids: 8 utterances of 16 tokens, flattened into bags.
    tokens = torch.randint(0, 30000, (8, 16))
    offsets = torch.arange(0, tokens.numel(), 16)
    print(predict(IntentNet().to(device), tokens.flatten(), offsets))
