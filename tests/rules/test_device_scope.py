"""TL105 counts a device variable of the same function (or a parameter) or of the module only."""
from __future__ import annotations

import json

from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

SOURCE = '''import torch


def test_moves(model):
    dst_device = torch.device("cuda", 0)
    model.to(dst_device)


def test_cuda(model):
    model.cuda()


def helper(model, device):
    return model.cuda()


def local(model):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return model.cuda()
'''


def test_device_variable_of_another_function_does_not_count():
    result = check_source(SOURCE, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert sorted(f.line for f in result.findings) == [14, 19]


SCRIPT = '''import torch


def load_model(path):
    model = torch.load(path, weights_only=False)
    model.cuda()
    return model.eval()


def embed(tokens):
    return torch.as_tensor(tokens).cuda()


if __name__ == "__main__":
    model = load_model("model.pt")
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    model = model.to(device)
    print(model(embed([1, 2, 3])))
'''


def test_a_function_run_before_the_module_defines_the_device_gets_no_safe_fix(tmp_path, cli):
    """`load_model` runs before `device` is assigned: `.to(device)` there would raise NameError,
    so the finding stands but its fix is only offered as unsafe; `embed` runs after: safe."""
    result = check_source(SCRIPT, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert {f.line: f.fix.safety for f in result.findings} == {6: "unsafe", 11: "safe"}
    (tmp_path / "sample.py").write_text(SCRIPT, encoding="utf-8")
    completed = cli("check", "--select", "TL105", "--diff", "sample.py", cwd=tmp_path)
    assert "+    model.to(device)" not in completed.stdout
    assert "+    return torch.as_tensor(tokens).to(device)" in completed.stdout


FEATURES = '''import torch


@torch.no_grad()
def extract_features(model, loader, count, gather_on_cpu=False):
    gather_device = torch.device("cpu") if gather_on_cpu else torch.device("cuda")
    features = None
    for samples, index in loader:
        feats = model(samples.cuda(non_blocking=True))
        if features is None:
            features = torch.zeros(count, feats.shape[-1], device=gather_device)
        features.index_copy_(0, index.to(gather_device), feats.to(gather_device))
    return features


@torch.no_grad()
def extract_on(model, loader, use_cpu=False):
    run_device = torch.device("cpu") if use_cpu else torch.device("cuda")
    return [model(samples.cuda()) for samples in loader]


def shuffled_batches(users, items, cpu_dataloader=False):
    dataloader_device = "cpu" if cpu_dataloader else "cuda"
    order = torch.randperm(len(users), device=dataloader_device)
    return [(users[i].cuda(), items[i].cuda()) for i in order.split(1024)]
'''


def test_a_device_named_for_where_results_are_kept_is_not_the_compute_device(tmp_path, cli):
    """DINOv2's feature extraction runs the model on the GPU by design; `gather_device` only
    says where the gathered features are kept, so the `.cuda()` beside it ignores no choice; so
    too NCF's `dataloader_device`, where the shuffled data is kept before each batch moves.
    `run_device` is the device the work runs on: `.cuda()` beside it is reported."""
    (tmp_path / "features.py").write_text(FEATURES, encoding="utf-8")
    completed = cli("check", "--select", "TL105", "--format", "json", "features.py", cwd=tmp_path)
    reported = [(d["line"], d["message"]) for d in json.loads(completed.stdout)]
    assert [line for line, _ in reported] == [19]
    assert "`run_device`" in reported[0][1]


PIPELINE = '''import torch
from torch import nn
from torchsummary import summary

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
blocks = [nn.Conv2d(3, 64, 3), nn.Conv2d(64, 64, 3), nn.Conv2d(64, 128, 3), nn.Linear(128, 10)]

block_1 = blocks[0].cuda(0)
block_2 = blocks[1].cuda(0)
block_3 = blocks[2].cuda(2)
head = blocks[3].to("cuda:3")
summary(block_1, input_size=(3, 32, 32), device="cuda")
inputs = torch.randn(8, 3, 32, 32).cuda()
'''


def test_gpus_placed_by_hand_and_torchsummary_device_strings_are_not_hardcoded_devices(tmp_path, cli):
    """Blocks placed on GPUs 0, 2 and 3 by number are model (pipeline) parallelism, which one
    device variable cannot express; torchsummary's `device=` takes "cuda" or "cpu" only, a
    `torch.device` would fail there.  The bare `.cuda()` of the inputs still ignores `device`."""
    (tmp_path / "pipeline.py").write_text(PIPELINE, encoding="utf-8")
    completed = cli("check", "--select", "TL105", "--format", "json", "pipeline.py", cwd=tmp_path)
    assert [d["line"] for d in json.loads(completed.stdout)] == [13]


THROWAWAY = '''import os

import torch

if "TEST_DEVICE" in os.environ:
    _ = torch.device(os.environ["TEST_DEVICE"])  # only checks that the name is a device


def flash_probe():
    if not torch.cuda.is_available():
        return False
    return torch.empty(1, device="cuda")


def loaded(model):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return model.cuda()
'''


def test_a_device_thrown_away_into_underscore_is_no_device_variable():
    result = check_source(THROWAWAY, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert [(f.line, "`device`" in f.message) for f in result.findings] == [(17, True)]


CELLS = '''import torch

cpu_a = torch.rand(4, 3)
gpu_a = cpu_a.cuda()
print(gpu_a.type())

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
gpu_b = cpu_a.cuda()
'''


def test_module_code_above_the_device_assignment_gets_no_safe_fix(tmp_path, cli):
    """A tensor-basics notebook shows `.cuda()` a few cells before it introduces `device`:
    `.to(device)` there would raise NameError, so that finding's fix is only offered as
    unsafe and its message says where to define the variable; below the assignment: safe."""
    result = check_source(CELLS, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert {f.line: f.fix.safety for f in result.findings} == {4: "unsafe", 8: "safe"}
    above = next(f for f in result.findings if f.line == 4)
    assert "defines `device` further down" in above.message
    (tmp_path / "cells.py").write_text(CELLS, encoding="utf-8")
    completed = cli("check", "--select", "TL105", "--diff", "cells.py", cwd=tmp_path)
    assert "+gpu_a = cpu_a.to(device)" not in completed.stdout
    assert "+gpu_b = cpu_a.to(device)" in completed.stdout


LABEL_SCRIPT = '''import torch


def to_distributed(tensor):
    orig_device = "cpu" if not tensor.is_cuda else "gpu"
    if not tensor.is_cuda:
        tensor = tensor.cuda()
    return tensor, orig_device


def to_device(tensor, use_gpu):
    device = "cuda" if use_gpu else "cpu"
    return tensor.cuda(), device
'''


def test_a_label_no_torch_device_takes_is_no_device_variable():
    """sam2's `orig_device = "cpu" if ... else "gpu"` only records where a tensor came from ("gpu" is
    no torch device): the `.cuda()` beside it ignores no device choice.  `"cuda" if ... else "cpu"`
    is one."""
    result = check_source(LABEL_SCRIPT, "t.py", Settings().with_selection(Selection(select=("TL105",))))
    assert [f.line for f in result.findings] == [13]


PER_RANK = '''import os

import torch

device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
torch.cuda.set_device(device)


def batches(loader):
    for x, y in loader:
        yield x.cuda(non_blocking=True), y.to(device="cuda", non_blocking=True)


model = torch.nn.Linear(4, 2).cuda()
table = torch.zeros(4, device="cuda:0")
'''


def test_a_bare_cuda_is_the_device_a_per_rank_program_made_current():
    """`device = torch.device("cuda", local_rank)` made current with `torch.cuda.set_device(device)`:
    a bare `.cuda()` or "cuda" is that very device; "cuda:0" is another rank's GPU."""
    select = Settings().with_selection(Selection(select=("TL105",)))
    assert [f.line for f in check_source(PER_RANK, "t.py", select).findings] == [15]
    without_set_device = PER_RANK.replace("torch.cuda.set_device(device)\n", "")
    assert [f.line for f in check_source(without_set_device, "t.py", select).findings] == [10, 10, 13, 14]


PINNED = '''import torch

scorer = torch.nn.Linear(8, 1)
scorer_device = torch.device("cuda:{}".format(1))
scorer.to(scorer_device)


def score(batch):
    return scorer(batch.to(scorer_device))


def generate(policy, prompts):
    policy.to("cuda")
    return policy(prompts.cuda())


def score_on_gpu(batch):
    return scorer(batch.cuda()) if scorer_device else None
'''


def test_a_function_placing_its_own_model_beside_one_pinned_by_number():
    """The module pins one model to a GPU by number with no CPU fallback (`scorer_device =
    torch.device("cuda:{}".format(1))`); `generate` never reads that variable and puts its own
    model and inputs on "cuda": GPUs placed by hand, and the script needs them anyway.  A function
    that reads the variable and still writes `.cuda()` is flagged, and so is every call once the
    variable has a CPU fallback."""
    select = Settings().with_selection(Selection(select=("TL105",)))
    assert [f.line for f in check_source(PINNED, "t.py", select).findings] == [18]
    fallback = PINNED.replace('scorer_device = torch.device("cuda:{}".format(1))\n',
                              'scorer_device = torch.device("cuda:{}".format(1))\n'
                              'if not torch.cuda.is_available():\n    scorer_device = "cpu"\n')
    assert [f.line for f in check_source(fallback, "t.py", select).findings] == [15, 16, 20]
