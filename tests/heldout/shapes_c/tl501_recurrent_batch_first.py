"""TL501 probe: recurrent models with `batch_first` both ways: a text classifier whose LSTM
input size is not the embedding width, a bidirectional GRU whose head is sized for one
direction, and a time-major LSTM state read into a `Linear` of the wrong width; against an
`Embedding` -> `LSTM(batch_first=True)` -> last step head, a time-major (T, B, F) LSTM, a
bidirectional head of `2 * hidden`, and the final hidden state of a stacked LSTM (`h_n[-1]`).
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=5000, embed_dim=128, hidden=256, n_classes=4, lstm_input=None):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(lstm_input or embed_dim, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, tokens):
        emb = self.embed(tokens)  # clean
        out, (h_n, c_n) = self.lstm(emb)  # clean
        return self.head(out[:, -1])  # clean


class MismatchedTextClassifier(nn.Module):
    def __init__(self, vocab_size=5000, embed_dim=300, hidden=256, n_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(256, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))  # expect: TL501
        return self.head(out[:, -1, :])


class BiGRUTagger(nn.Module):
    def __init__(self, n_features=40, hidden=128, n_tags=9, head_width=None):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(head_width or 2 * hidden, n_tags)

    def forward(self, frames):
        out, _ = self.gru(frames)
        return self.head(out)  # clean


def case_text_classifier():
    model = TextClassifier()
    tokens = torch.randint(1, 5000, (8, 40))
    return model(tokens)


def case_lstm_input_is_not_embedding_width():
    model = MismatchedTextClassifier()
    return model(torch.randint(0, 5000, (8, 40)))


def case_bigru_tagger():
    return BiGRUTagger()(torch.randn(4, 200, 40))


def case_bigru_head_for_one_direction():
    gru = nn.GRU(40, 128, batch_first=True, bidirectional=True)
    head = nn.Linear(128, 9)
    out, _ = gru(torch.randn(4, 200, 40))
    return head(out)  # expect: TL501


def case_time_major_lstm():
    lstm = nn.LSTM(input_size=64, hidden_size=32, num_layers=3)
    seq = torch.randn(50, 16, 64)
    out, (h_n, c_n) = lstm(seq)  # clean
    last = h_n[-1]
    return nn.Linear(32, 1)(last) + out[-1].sum(dim=-1, keepdim=True)  # clean


def case_time_major_state_into_wide_head():
    lstm = nn.LSTM(64, 32, num_layers=2)
    _, (h_n, _) = lstm(torch.randn(50, 16, 64))
    regressor = nn.Linear(64, 1)
    return regressor(h_n[-1])  # expect: TL501
