"""Findings that depend on a whole file (framework GPU use, DP beside DDP, inference code), and
fixes checked the strong way: the flagged code is run before and after the fix (tiny models, CPU)."""
from __future__ import annotations

import textwrap

import pytest

from torch_lsp.checker import check_source
from torch_lsp.codeactions import fix_all, fix_offers
from torch_lsp.settings import Selection, Settings

torch = pytest.importorskip("torch")


def findings(source: str, code: str, path: str = "train.py") -> list:
    settings = Settings().with_selection(Selection(select=(code,)))
    return [f for f in check_source(textwrap.dedent(source), path, settings).findings if f.code == code]


def fixed(source: str, code: str) -> str:
    settings = Settings().with_selection(Selection(select=(code,)))
    return fix_all(textwrap.dedent(source), "train.py", settings, unsafe=False).source


def run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "train.py", "exec"), namespace)  # noqa: S102 - our own test snippet
    return namespace


# ----------------------------------------------------------------- TL401: a framework puts work on the GPU
FABRIC_SCRIPT = """
    import torch
    from lightning.fabric import Fabric

    def main(model, optimizer, loader):
        fabric = Fabric(accelerator="auto")
        model, optimizer = fabric.setup(model, optimizer)
        loader = fabric.setup_dataloaders(loader)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            fabric.backward(loss)
            optimizer.step()
            print(loss.item())
"""


def test_sync_found_where_fabric_places_the_work():
    assert [f.line for f in findings(FABRIC_SCRIPT, "TL401")] == [13]


def test_no_sync_finding_when_fabric_runs_on_the_cpu():
    assert findings(FABRIC_SCRIPT.replace('accelerator="auto"', 'accelerator="cpu"'), "TL401") == []


# ----------------------------------------------------------------- TL406: deliberate DataParallel
DP_BESIDE_DDP = """
    import torch
    from torch import nn

    def setup(model, distributed, gpu):
        if distributed:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
        else:
            model = nn.DataParallel(model).cuda()
        return model

    def wrap_single_node(model):
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
        return model
"""

DP_FOR_INFERENCE = """
    import torch
    from torch import nn

    def predict(model, loader):
        model = nn.DataParallel(model)
        model.eval()
        with torch.no_grad():
            return [model(x) for x in loader]
"""


def test_data_parallel_as_the_fallback_of_ddp_is_not_reported():
    assert [f.line for f in findings(DP_BESIDE_DDP, "TL406")] == [14]


def test_data_parallel_in_inference_code_is_not_reported():
    assert findings(DP_FOR_INFERENCE, "TL406") == []


# ----------------------------------------------------------------- TL104: run before and after the fix
LEAF_UPDATES = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    W = torch.randn(3, 2, requires_grad=True)
    student = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))
    teacher = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2))


    def global_sgd(lr):
        global W
        W.grad = torch.ones_like(W)
        W -= lr * W.grad


    def teacher_update(decay):
        for p, q in zip(teacher.parameters(), student.parameters()):
            p.mul_(decay).add_(q, alpha=1 - decay)


    def zero_classifier_bias():
        student[2].bias[:] = 0.0
"""


@pytest.mark.parametrize("function", ["global_sgd", "teacher_update", "zero_classifier_bias"])
def test_indirect_parameter_updates_raise_and_the_fix_makes_them_run(function):
    assert len(findings(LEAF_UPDATES, "TL104")) == 3
    before = run(textwrap.dedent(LEAF_UPDATES))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        before[function](*([0.5] if function != "zero_classifier_bias" else []))
    after_source = fixed(LEAF_UPDATES, "TL104")
    assert after_source.count("with torch.no_grad():") == 3
    after = run(after_source)
    after[function](*([0.5] if function != "zero_classifier_bias" else []))
    if function == "zero_classifier_bias":
        assert torch.equal(after["student"][2].bias, torch.zeros(2))


# ----------------------------------------------------------------- TL301: a trainer's running total
TRAINER = """
    import torch
    import torch.nn as nn


    class Trainer:
        def __init__(self):
            torch.manual_seed(0)
            self.model = nn.Linear(4, 1)
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.running_loss = 0.0
            self.history = {"loss": []}

        def fit(self, batches):
            for x, y in batches:
                self.optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                self.running_loss += loss
                self.history["loss"].append(loss)
            return self.running_loss
"""


def test_trainer_accumulation_fix_keeps_the_values_and_drops_the_graph():
    assert [f.line for f in findings(TRAINER, "TL301")] == [20, 21]
    batches = [(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(3)]
    before = run(textwrap.dedent(TRAINER))["Trainer"]()
    total_before = before.fit(batches)
    assert total_before.grad_fn is not None
    after = run(fixed(TRAINER, "TL301"))["Trainer"]()
    total_after = after.fit(batches)
    assert total_after.grad_fn is None and torch.allclose(total_before.detach(), total_after)
    assert all(v.grad_fn is None for v in after.history["loss"])


# ----------------------------------------------------------------- TL407: zeros that later code adds into
PARAMETER_SERVER = """
    import torch
    import torch.nn as nn


    class ParameterServer:
        def __init__(self):
            self.model = nn.Linear(2, 1)
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.model(torch.ones(1, 2)).sum().backward()
            self.optimizer.zero_grad(set_to_none=False)

        def add_gradients(self, grads):
            for p, g in zip(self.model.parameters(), grads):
                p.grad += g
"""


def test_zeroed_gradients_that_are_added_into_are_left_alone():
    assert findings(PARAMETER_SERVER, "TL407") == []
    server = run(textwrap.dedent(PARAMETER_SERVER))["ParameterServer"]()
    server.add_gradients([torch.ones(1, 2), torch.ones(1)])
    # what the fix would have done: `set_to_none=True`, after which `+=` fails
    broken = run(textwrap.dedent(PARAMETER_SERVER).replace("set_to_none=False", "set_to_none=True"))
    with pytest.raises(TypeError):
        broken["ParameterServer"]().add_gradients([torch.ones(1, 2), torch.ones(1)])


# ----------------------------------------------------------------- TL206: a softmax head, no rewrite offered
SOFTMAX_HEAD = """
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))

        def forward(self, x):
            return self.head(x)


    net = Net()
    criterion = nn.CrossEntropyLoss()


    def step(x, y):
        return criterion(net(x), y)
"""


def test_softmax_head_is_reported_without_an_automatic_rewrite():
    settings = Settings().with_selection(Selection(select=("TL206",)))
    result = check_source(textwrap.dedent(SOFTMAX_HEAD), "train.py", settings)
    assert [f.line for f in result.findings] == [19]
    assert fix_offers(result.analysis, result.findings[0]) == []


# ----------------------------------------------------------------- TL705: a file that pickles whole modules
WHOLE_MODULE_SCRIPT = """
    import torch

    def save_model(path, decoder):
        torch.save(decoder, path)

    def load_model(path):
        return torch.load(path)
"""


def test_loading_a_pickled_module_is_reported_as_such_and_weights_only_is_not_offered(tmp_path):
    [finding] = findings(WHOLE_MODULE_SCRIPT, "TL705")
    assert finding.line == 8 and "loads a pickled module here" in finding.message
    assert "`state_dict()`" in finding.message and finding.fix is None
    assert finding.related and finding.related[0].line == 5  # the torch.save of the module
    namespace = run(textwrap.dedent(WHOLE_MODULE_SCRIPT))
    path = str(tmp_path / "decoder.pt")
    namespace["save_model"](path, torch.nn.Linear(2, 2))
    with pytest.raises(Exception, match="Weights only load failed"):  # what the message warns of, on torch 2.6+
        namespace["load_model"](path)
    assert isinstance(torch.load(path, weights_only=False), torch.nn.Linear)


def test_a_state_dict_load_beside_a_module_save_keeps_the_weights_only_advice():
    source = WHOLE_MODULE_SCRIPT + """
    def load_weights(model, path):
        model.load_state_dict(torch.load(path))
"""
    messages = {f.line: f.message for f in findings(source, "TL705")}
    assert "pickled module" in messages[8] and "Pass `weights_only=True`" in messages[11]


# A script at module level, where a name's convention alone gives no role: NCF saves whole models
# and reads the pretrained ones back into names of models (`GMF_model`), not into a checkpoint
# dict read by key (OpenNMT's release tool sets `model["optim"] = None` and saves it again).
PRETRAINED_SCRIPT = """
    import torch

    GMF_model = torch.load(gmf_path)
    checkpoint_model = torch.load(release_path)
    checkpoint_model["optim"] = None
    torch.save(checkpoint_model, output_path)
    model = NeuMF(GMF_model)
    torch.save(model, model_path)
"""


def test_module_level_loads_into_model_names_read_back_pickled_modules(tmp_path):
    messages = {f.line: f.message for f in findings(PRETRAINED_SCRIPT, "TL705")}
    assert "loads a pickled module here" in messages[4]
    assert "Pass `weights_only=True`" in messages[5]  # read by key: a checkpoint dict
    module_file, dict_file = str(tmp_path / "GMF.pth"), str(tmp_path / "release.pt")
    torch.save(torch.nn.Linear(2, 2), module_file)
    torch.save({"model": {"w": torch.ones(1)}, "optim": {"lr": 0.1}}, dict_file)
    with pytest.raises(Exception, match="Weights only load failed"):  # the advice for line 4 would refuse it
        torch.load(module_file, weights_only=True)
    assert torch.load(dict_file, weights_only=True)["optim"] == {"lr": 0.1}  # line 5's advice loads it


# ----------------------------------------------------------------- TL103: a forward whose output is discarded
LAZY_INIT = """
    import torch

    def build(make_net, batch, features):
        net = make_net()
        HOOK
        with torch.no_grad():
            net(batch)
        return torch.optim.Adam(net.parameters())
"""


def test_a_discarded_forward_evaluates_nothing_unless_hooks_collect_features():
    assert findings(LAZY_INIT.replace("HOOK", "pass"), "TL103") == []
    hooked = LAZY_INIT.replace("HOOK", "net.fc.register_forward_hook(lambda m, i, o: features.append(o))")
    assert [f.line for f in findings(hooked, "TL103")] == [8]


# ----------------------------------------------------------------- TL409: recurrent layers deep in the model
PICKED_MODEL = """
    import torch
    import torch.nn.functional as F

    class Depth(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.lstm = torch.nn.LSTM(dim, dim, 1, bias=False)

        def forward(self, x):
            return self.lstm(x)[0]

    class GeniePathLayer(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.breadth = torch.nn.Linear(dim, dim)
            self.depth = Depth(dim)

        def forward(self, x):
            return self.depth(torch.tanh(self.breadth(x)))

    class GeniePath(torch.nn.Module):
        def __init__(self, dim, classes):
            super().__init__()
            self.layers = torch.nn.ModuleList([GeniePathLayer(dim) for _ in range(4)])
            self.head = torch.nn.Linear(dim, classes)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.head(x)

    class Wide(torch.nn.Module):
        def __init__(self, dim, classes):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                            torch.nn.Linear(4 * dim, classes))

        def forward(self, x):
            return self.body(x)

    def train(name, loader, dim, classes):
        variants = {'GeniePath': GeniePath, 'Other': OTHER}
        model = variants[name](dim, classes)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
"""


def test_no_compile_hint_for_a_model_whose_lstm_sits_classes_deep():
    assert findings(PICKED_MODEL.replace("OTHER", "GeniePath"), "TL409") == []
    # One class to pick from has no recurrent layer: compiling it pays.
    assert [f.line for f in findings(PICKED_MODEL.replace("OTHER", "Wide"), "TL409")] == [48]


# ----------------------------------------------------------------- TL705: a test of torch.load itself
LOAD_DEFAULT_TEST = """
    import pytest
    import torch
    from pickle import UnpicklingError

    def test_default_refuses_objects(tmp_path):
        path = tmp_path / "obj.pt"
        torch.save(object(), path)
        with pytest.raises(UnpicklingError):
            torch.load(path)

    def test_registered_globals_load(tmp_path):
        path = tmp_path / "w.pt"
        torch.save({"w": torch.ones(2)}, path)
        torch.load(path)

    def test_weights_round_trip(tmp_path):
        path = tmp_path / "w.pt"
        torch.save({"w": torch.ones(2)}, path)
        state = torch.load(path)
        assert state["w"].sum() == 2
"""


def test_tl705_spares_a_test_of_the_load_default_but_not_a_test_that_reads_weights():
    lines = [f.line for f in findings(LOAD_DEFAULT_TEST, "TL705", path="tests/test_serialization.py")]
    assert lines == [20]  # the round trip reads what it loads; the other two test the default itself
    # The same code outside a test file is an ordinary load each time.
    assert len(findings(LOAD_DEFAULT_TEST, "TL705", path="scripts/serialization.py")) == 3


def test_tl705_test_of_the_load_default_really_behaves_as_tested(tmp_path):
    namespace = run(textwrap.dedent(LOAD_DEFAULT_TEST))
    for name in ("test_default_refuses_objects", "test_registered_globals_load", "test_weights_round_trip"):
        namespace[name](tmp_path)


# ----------------------------------------------------------------- TL104: an EMA copy detached in place
EMA_DETACHED = """
    import copy
    import torch

    class EMA:
        def __init__(self, model):
            self.model = model
            self.ema_model = copy.deepcopy(model)
            for param in self.ema_model.parameters():
                param.detach_()

        def update(self, momentum):
            for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
                ema_p.mul_(1.0 - momentum).add_(model_p.data, alpha=momentum)
"""


def test_tl104_spares_parameters_detached_in_place_and_the_update_really_runs():
    assert findings(EMA_DETACHED, "TL104") == []
    # Without the `detach_()` the same update is the autograd error TL104 reports.
    assert len(findings(EMA_DETACHED.replace("param.detach_()", "pass"), "TL104")) == 1
    namespace = run(textwrap.dedent(EMA_DETACHED))
    ema = namespace["EMA"](torch.nn.Linear(3, 2))
    ema.update(0.5)
