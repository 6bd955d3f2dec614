"""TL501 probe: batched products and pooling arithmetic as recommenders, retrieval and audio
code write them: `bmm` of user and item towers whose embedding widths differ, `matmul` of a
query batch against an item table that was not transposed, a 1-D conv stack whose strided output
length is mis-computed for the `Linear` after it, and `expand` to a size the tensor cannot
broadcast to; against `bmm` with `unsqueeze`, `matmul` broadcasting a (B, 1, D) query over
(N, D).T, `einsum` dot products, `-1` in `view`, and pooling sizes computed correctly.
Each `case_*` function runs with torch (tests/shapes/test_definite_errors_runtime.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoTower(nn.Module):
    def __init__(self, n_users=1000, n_items=5000, user_dim=64, item_dim=64):
        super().__init__()
        self.users = nn.Embedding(n_users, user_dim)
        self.items = nn.Embedding(n_items, item_dim)

    def forward(self, user_ids, item_ids):
        u = self.users(user_ids).unsqueeze(1)          # (B, 1, D)
        v = self.items(item_ids)                       # (B, K, D)
        return torch.bmm(u, v.transpose(1, 2)).squeeze(1)  # clean


def case_two_tower_scores():
    model = TwoTower()
    return model(torch.randint(0, 1000, (16,)), torch.randint(0, 5000, (16, 20)))


def case_towers_of_different_width():
    users = nn.Embedding(1000, 64)
    items = nn.Embedding(5000, 96)
    u = users(torch.randint(0, 1000, (16,))).unsqueeze(1)
    v = items(torch.randint(0, 5000, (16, 20)))
    return torch.bmm(u, v.transpose(1, 2))  # expect: TL501


def case_query_against_untransposed_table():
    queries = F.normalize(torch.randn(32, 128), dim=-1)
    table = F.normalize(torch.randn(10000, 128), dim=-1)
    return torch.matmul(queries, table)  # expect: TL501


def case_query_against_table():
    queries = F.normalize(torch.randn(32, 128), dim=-1)
    table = F.normalize(torch.randn(10000, 128), dim=-1)
    scores = queries.unsqueeze(1) @ table.T  # clean
    dots = torch.einsum("bd,nd->bn", queries, table)  # clean
    return scores.squeeze(1).topk(10).indices, dots.argmax(dim=1)


class FrameEncoder(nn.Module):
    """80 mel bins x 400 frames -> three stride-2 convs -> 50 frames."""

    def __init__(self, n_mels=80, frames=400, channels=64, out_dim=256, frames_after=None):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(n_mels, channels, kernel_size=3, stride=2, padding=1), nn.GELU(),
            nn.Conv1d(channels, channels, kernel_size=3, stride=2, padding=1), nn.GELU(),
            nn.Conv1d(channels, channels, kernel_size=3, stride=2, padding=1), nn.GELU(),
        )
        self.proj = nn.Linear(channels * (frames_after or frames // 8), out_dim)

    def forward(self, mel):
        h = self.convs(mel)
        return self.proj(h.view(h.size(0), -1))  # clean


class FrameEncoderMiscounted(FrameEncoder):
    def forward(self, mel):
        h = self.convs(mel)
        h = F.avg_pool1d(h, kernel_size=2)
        return self.proj(h.flatten(1))  # expect: TL501


def case_frame_encoder():
    return FrameEncoder()(torch.randn(4, 80, 400))


def case_frame_encoder_extra_pool():
    return FrameEncoderMiscounted()(torch.randn(4, 80, 400))


def case_expand_wrong_size():
    cls_token = torch.zeros(1, 1, 768)
    patches = torch.randn(8, 196, 768)
    cls = cls_token.expand(patches.size(0), -1, -1)  # clean
    pos = torch.zeros(1, 197, 768)
    tokens = torch.cat([cls, patches], dim=1) + pos  # clean
    return tokens + pos[:, :196]  # expect: TL501
