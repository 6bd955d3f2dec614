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
