"""TL409 (missing-compile) names the model the loop trains: a network the loop only runs
under `torch.no_grad()` (a DQN/SAC target network soft-updated from the trained one, a
frozen teacher) is not trained there, so the hint names the first model run with autograd
on; a loop that trains no model it calls directly stays silent. Checked with the real CLI."""
from __future__ import annotations

import json

from tests.test_cli import write

DQN = """\
import copy
import torch
import torch.nn.functional as F

device = torch.device("cuda")
q_network = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 18)).to(device)
target_network = copy.deepcopy(q_network)
optimizer = torch.optim.Adam(q_network.parameters(), lr=1e-4)
for step in range(1_000_000):
    obs, actions, rewards, next_obs = replay.sample(256)
    with torch.no_grad():
        target_max, _ = target_network(next_obs).max(dim=1)
        td_target = rewards + 0.99 * target_max
    old_val = q_network(obs).gather(1, actions).squeeze()
    loss = F.mse_loss(td_target, old_val)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for target_param, param in zip(target_network.parameters(), q_network.parameters()):
        target_param.data.copy_(0.005 * param.data + 0.995 * target_param.data)
"""


def _tl409(tmp_path, cli) -> list[tuple[int, str]]:
    completed = cli("check", "--format", "json", "--select", "TL409", "train.py", cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return [(item["line"], item["message"]) for item in json.loads(completed.stdout) if item["code"] == "TL409"]


def test_the_hint_names_the_trained_network_not_the_target_network(tmp_path, cli):
    write(tmp_path, {"train.py": DQN})
    assert _tl409(tmp_path, cli) == [
        (14, "`q_network` is trained without `torch.compile`. Try `q_network = torch.compile(q_network)` "
             "for faster steps.")]


def test_a_loop_that_runs_its_only_model_without_grad_is_silent(tmp_path, cli):
    """The update runs in a helper the file cannot see into; the loop itself only acts."""
    write(tmp_path, {"train.py": DQN.replace("    old_val = q_network(obs).gather(1, actions).squeeze()\n", "")
                     .replace("F.mse_loss(td_target, old_val)", "update(td_target)")})
    assert _tl409(tmp_path, cli) == []


MODEL = """\
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv1d(dim, dim, 5, padding=2), nn.ReLU())
        self.{layer}


class Seq2Mel(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.embedding = nn.Embedding(148, dim)
        self.encoder = Encoder(dim)
        self.project = nn.Linear(dim, 80)
"""

TRAIN = """\
import torch
import torch.nn.functional as F
from model import Seq2Mel


def load_model():
    model = Seq2Mel().cuda()
    return model


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return model, optimizer, state["iteration"]


def train(loader, checkpoint):
    model = load_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if checkpoint is not None:
        model, optimizer, iteration = load_checkpoint(checkpoint, model, optimizer)
    for epoch in range(500):
        for text, mel in loader:
            loss = F.mse_loss(model(text.cuda()), mel.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_a_model_a_project_file_builds_from_an_lstm_is_not_flagged(tmp_path, cli):
    """Tacotron 2's train.py: `load_model()` builds `Tacotron2` of model.py, whose encoder
    holds an `nn.LSTM`; Dynamo graph-breaks there, so compiling would capture little."""
    write(tmp_path, {"model.py": MODEL.format(layer="lstm = nn.LSTM(dim, dim // 2, batch_first=True, bidirectional=True)"),
                     "train.py": TRAIN})
    assert _tl409(tmp_path, cli) == []


def test_a_model_a_project_file_builds_from_convolutions_is_flagged(tmp_path, cli):
    write(tmp_path, {"model.py": MODEL.format(layer="out = nn.Conv1d(dim, dim, 1)"), "train.py": TRAIN})
    assert [line for line, _ in _tl409(tmp_path, cli)] == [25]
