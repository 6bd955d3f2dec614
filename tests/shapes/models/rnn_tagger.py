"""A BiLSTM part-of-speech tagger and a GRU sequence classifier."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size, tagset_size, embedding_dim=32, hidden_dim=48, num_layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers=num_layers, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(0.1)
        self.hidden2tag = nn.Linear(hidden_dim * 2, tagset_size)

    def forward(self, tokens):
        embeds = self.embedding(tokens)
        lstm_out, (h_n, c_n) = self.lstm(embeds)
        lstm_out = self.dropout(lstm_out)
        tag_space = self.hidden2tag(lstm_out)
        tag_scores = F.log_softmax(tag_space, dim=-1)
        return tag_scores


class GRUClassifier(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, batch_first=False)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        output, hidden = self.gru(x)
        last = hidden[-1]
        return self.fc(last)


def tagging_loss(scores, tags):
    flat_scores = scores.view(-1, scores.size(-1))
    flat_tags = tags.view(-1)
    return F.nll_loss(flat_scores, flat_tags)


if __name__ == "__main__":
    tagger = BiLSTMTagger(vocab_size=500, tagset_size=12)
    sentences = torch.randint(1, 500, (3, 7))
    tags = torch.randint(0, 12, (3, 7))
    scores = tagger(sentences)
    loss = tagging_loss(scores, tags)
    classifier = GRUClassifier(16, 24, 5)
    sequence = torch.randn(9, 4, 16)
    logits = classifier(sequence)
