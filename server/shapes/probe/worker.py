"""The shape probe's worker: runs a module's real `forward` on meta tensors, in the user's Python.

Started by torch-lsp as `<probe.python> worker.py`, in its own process group, with
resource limits and a scrubbed environment (see `client.py`).  It needs only the
standard library and torch, so torch-lsp need not be installed where it runs; it loads
`program.py` (which statements of a file it may run) from its own folder by path.

Protocol: one JSON object per line.  On start it writes `{"ready": true, "torch": ...}`
(or `{"ready": false, "error": ...}` when torch cannot be imported).  Then, for each
request line `{"id", "op": "probe", ...}` (see `run_probe`), one answer line with the
same id.  The protocol has a file descriptor of its own: whatever user code prints goes
to a capture buffer, never into the answers.
"""
from __future__ import annotations

import ast
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import os
import sys
import traceback
from pathlib import Path

MAX_CAPTURED = 2000  # characters of user output returned with an answer
SHAPE_ERRORS = (RuntimeError, ValueError, IndexError, AssertionError)
# Errors of these kinds that say nothing about the model's shapes: what meta tensors cannot
# do, a GPU or its driver, memory.
NOT_SHAPES = ("meta", "cuda", "driver", "allocate", "out of memory")


def load_program_module():
    path = Path(__file__).with_name("program.py")
    spec = importlib.util.spec_from_file_location("_torch_lsp_probe_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class WorkspaceImports(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of the user's own files (under the workspace folders) run only what a module
    may keep (`program.probe_program`): a sibling `model.py` brings its classes, not its
    top-level side effects."""

    def __init__(self, program_module):
        self.program_module = program_module
        self.folders: list[str] = []

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path if path is not None else self.folders)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        if not is_workspace_file(spec.origin, self.folders):
            return None
        spec.loader = self
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = Path(module.__spec__.origin).read_text(encoding="utf-8")
        program = self.program_module.probe_program(source, None)
        exec(compile(program, module.__spec__.origin, "exec"), module.__dict__)


def protocol_channel() -> io.TextIOWrapper:
    """The answers' own descriptor; fd 1 and 2 then point at /dev/null, so a C library or a
    user's `os.write(1, ...)` can never corrupt the protocol."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    return channel


def is_workspace_file(origin: str | None, folders: list[str]) -> bool:
    """A file of the user's own code: under a workspace folder, not in an installed package
    (a virtual environment inside the workspace holds torch itself)."""
    if not origin:
        return False
    origin = os.path.abspath(origin)
    installed = ("site-packages", "dist-packages")
    if any(part in installed for part in Path(origin).parts) or origin.startswith(sys.prefix + os.sep):
        return False
    return any(origin.startswith(folder + os.sep) for folder in folders)


def forget_workspace_modules(folders: list[str]) -> None:
    """Drop earlier requests' modules: the user may have edited those files since."""
    for name, module in list(sys.modules.items()):
        if name.startswith("_torch_lsp_probed_") or is_workspace_file(getattr(module, "__file__", None), folders):
            del sys.modules[name]


class Probe:
    """One request: build the module from the file's extracted program and run it."""

    def __init__(self, torch, program_module, imports: WorkspaceImports, request: dict):
        self.torch = torch
        self.program_module = program_module
        self.imports = imports
        self.request = request
        self.path = request["path"]
        self.device = request.get("device", "meta")
        self.note = None
        if self.device == "cuda" and not torch.cuda.is_available():
            self.device = "meta"
            self.note = "CUDA is not available in the probe's Python, so the probe ran on meta tensors instead."

    def namespace(self) -> dict:
        roots = set(self.request["roots"])
        program = self.program_module.probe_program(self.request["source"], roots)
        module = self.fresh_module()
        exec(compile(program, self.path, "exec"), module.__dict__)
        return module.__dict__

    def fresh_module(self):
        folders = [os.path.abspath(f) for f in self.request.get("folders") or [os.path.dirname(self.path)]]
        self.imports.folders[:] = folders
        forget_workspace_modules(folders)
        sys.path[:0] = [f for f in folders if f not in sys.path]
        name = "_torch_lsp_probed_" + str(self.request["id"])
        module = type(sys)(name)
        module.__file__ = self.path
        sys.modules[name] = module  # dataclasses and typing look classes' modules up here
        return module

    def inputs(self, device: str, batch: int | None) -> list:
        tensors = []
        for spec in self.request["inputs"]:
            shape = list(spec["shape"])
            batch_dim = spec.get("batch_dim")
            if batch is not None and batch_dim is not None:
                shape[batch_dim] = batch
            dtype = getattr(self.torch, spec.get("dtype", "float32"))
            tensors.append(self.torch.zeros(shape, dtype=dtype, device=device))
        return tensors

    def build(self, namespace: dict, device: str):
        with self.torch.device(device):
            return eval(compile(self.request["init"], self.path, "eval"), namespace)

    def forward(self, model, device: str, batch: int | None = None, saved: "SavedActivations | None" = None) -> dict:
        """Output shapes of the model and of every submodule (forward hooks).  With `saved`,
        the pass builds the autograd graph and counts what it saves for backward (the memory
        estimate), so one forward serves both: on meta tensors a batch-norm layer in training
        mode costs milliseconds per call, and a ResNet has twenty."""
        seen: dict[str, list] = {}
        handles = []
        for name, sub in model.named_modules():
            if name:
                handles.append(sub.register_forward_hook(self.recorder(seen, name, type(sub).__name__)))
        try:
            if saved is not None:
                with self.torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
                    output = model(*self.inputs(device, batch))
            else:
                with self.torch.no_grad():
                    output = model(*self.inputs(device, batch))
        finally:
            for handle in handles:
                handle.remove()
        return {"output": shapes_of(self.torch, output), "submodules": seen}

    def recorder(self, seen: dict, name: str, kind: str):
        def record(module, args, output):
            seen.setdefault(name, {"type": kind, "outputs": []})["outputs"].append(shapes_of(self.torch, output))
        return record

    def run(self) -> dict:
        namespace = self.namespace()
        try:
            return self.run_on(namespace, self.device)
        except SHAPE_ERRORS + (NotImplementedError,):
            # Meta tensors lack a few kernels and every data-dependent op (`.item()`), and
            # their shape errors read differently: rerun a model small enough on the CPU,
            # so what is reported is what the user's own run would raise.
            if self.device != "meta" or not self.affordable_on_cpu(namespace):
                raise
            return self.run_on(namespace, "cpu")

    def affordable_on_cpu(self, namespace: dict) -> bool:
        model = self.build(namespace, "meta")
        size = sum(p.numel() * p.element_size() for p in model.parameters())
        return size <= self.request.get("cpu_fallback_bytes", 0)

    def run_on(self, namespace: dict, device: str) -> dict:
        model = self.build(namespace, device)
        saved = SavedActivations(model) if self.request.get("memory") else None
        result = {"device": device, **self.forward(model, device, saved=saved)}
        batches = self.request.get("vary_batch")
        if batches:
            result["varied"] = self.forward(model, device, batches)
        if saved is not None:
            result["memory"] = memory_estimate(self.torch, model, self.inputs(device, None),
                                               self.request.get("optimizer"), saved.bytes)
        return result


class ScriptProbe(Probe):
    """A script's top-level tensor statements (`program.script_statements`), run one by one
    under the probe's device, recording the shape of every tensor each one binds.  A
    statement that raises is recorded and the next ones still run (one that reads what it
    failed to bind then fails with a NameError, which is no shape error)."""

    def run(self) -> dict:
        result = self.run_on(self.device)
        if self.device == "meta" and result["failures"] \
                and self.tensor_bytes <= self.request.get("cpu_fallback_bytes", 0):
            return self.run_on("cpu")  # the messages the user's own run would print
        return result

    def run_on(self, device: str) -> dict:
        tree, statements = self.program_module.script_statements(self.request["source"])
        namespace = self.fresh_module().__dict__
        bindings, failures = [], []
        self.tensor_bytes = 0
        with self.torch.device(device):
            for statement in statements:
                try:
                    exec(compile(ast.Module([statement], []), self.path, "exec"), namespace)
                except Exception as error:  # noqa: BLE001 - the user's code failing is the answer
                    failures.append(failure(error, self.path))
                    continue
                shapes = {name: shapes_of(self.torch, namespace.get(name))
                          for name in sorted(self.program_module.bound_names(statement))
                          if isinstance(namespace.get(name), self.torch.Tensor)}
                self.tensor_bytes = max(self.tensor_bytes, sum(
                    t.numel() * t.element_size() for t in namespace.values() if isinstance(t, self.torch.Tensor)))
                if shapes:
                    bindings.append({"line": statement.lineno, "shapes": shapes})
        return {"device": device, "bindings": bindings, "failures": failures}


def shapes_of(torch, value):
    """A JSON image of an output: a tensor's shape, or a list of them for tuples and lists."""
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (tuple, list)):
        return [shapes_of(torch, v) for v in value]
    if isinstance(value, dict):
        return {str(k): shapes_of(torch, v) for k, v in value.items()}
    return None


OPTIMIZER_STATE_COPIES = {"adam": 2, "adamw": 2, "sgd": 1, "rmsprop": 1, "adagrad": 1, "none": 0}


class SavedActivations:
    """Counts the bytes a forward pass saves for backward, through saved-tensor hooks.  A
    tensor saved by two operations (ReLU's output, read again by the next Linear) is stored
    once, and so is a view of it (`weight.t()`); parameters are counted apart."""

    def __init__(self, model):
        self.parameter_ids = {id(p) for p in model.parameters()}
        self.counted: set[int] = set()
        self.bytes = 0

    def pack(self, tensor):
        owner = tensor._base if tensor._base is not None else tensor
        if id(owner) not in self.parameter_ids and id(owner) not in self.counted:
            self.counted.add(id(owner))
            self.bytes += owner.numel() * owner.element_size()
        return tensor

    @staticmethod
    def unpack(tensor):
        return tensor


def memory_estimate(torch, model, inputs: list, optimizer: str | None, activation_bytes: int) -> dict:
    """Bytes for parameters, their gradients, the optimizer's state and the activations a
    forward pass saved for backward (`SavedActivations`), on meta tensors."""
    parameters = list(model.parameters())
    parameter_bytes = sum(p.numel() * p.element_size() for p in parameters)
    gradient_bytes = sum(p.numel() * p.element_size() for p in parameters if p.requires_grad)
    copies = OPTIMIZER_STATE_COPIES.get((optimizer or "none").lower(), 0)
    estimate = {
        "parameters": parameter_bytes,
        "gradients": gradient_bytes,
        "optimizer_state": copies * gradient_bytes,
        "activations": activation_bytes,
        "optimizer": optimizer,
    }
    if inputs and inputs[0].device.type == "cuda":
        estimate["measured_peak"] = cuda_peak(torch, model, inputs)
    return estimate


def cuda_peak(torch, model, inputs: list) -> int:
    """The measured peak of GPU memory over one forward and backward pass (a real run)."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    outputs = [t for t in tensors_in(torch, model(*inputs)) if t.requires_grad]
    if outputs:
        sum(t.float().sum() for t in outputs).backward()
    torch.cuda.synchronize()
    model.zero_grad(set_to_none=True)
    return int(torch.cuda.max_memory_allocated())


def tensors_in(torch, value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in tensors_in(torch, item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors_in(torch, item)]
    return []


def failure(error: BaseException, path: str) -> dict:
    """The error as the user should read it, and the frames of the probed file it passed."""
    frames = [
        {"path": frame.filename, "line": frame.lineno, "function": frame.name}
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == path
    ]
    message = f"{type(error).__name__}: {error}".strip()
    return {
        "ok": False,
        "error": message.splitlines()[0] if message else type(error).__name__,
        "kind": type(error).__name__,
        "shape_error": isinstance(error, SHAPE_ERRORS) and not any(word in str(error).lower() for word in NOT_SHAPES),
        "meta_unsupported": "meta" in str(error).lower() or isinstance(error, NotImplementedError),
        "frames": frames,
    }


def answer(torch, program_module, imports: WorkspaceImports, request: dict) -> dict:
    captured = io.StringIO()
    kind = ScriptProbe if request.get("op") == "script" else Probe
    probe = kind(torch, program_module, imports, request)
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            result = {"ok": True, **probe.run()}
        except BaseException as error:  # noqa: BLE001 - any failure of user code is an answer
            if isinstance(error, KeyboardInterrupt):
                raise
            result = failure(error, probe.path)
    result["id"] = request["id"]
    if probe.note:
        result["note"] = probe.note
    result["output_text"] = captured.getvalue()[:MAX_CAPTURED]
    return result


def main() -> int:
    channel = protocol_channel()
    sys.stdout = sys.stderr = io.StringIO()  # anything printed outside a request is dropped
    # Python put this folder first on sys.path: a user's `import client` must not find ours.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - no torch, or a broken one: say which
        channel.write(json.dumps({"ready": False, "error": f"{type(error).__name__}: {error}",
                                  "python": sys.executable}) + "\n")
        return 1
    with contextlib.suppress(Exception):  # the first meta op costs seconds: pay it at start
        torch.nn.functional.linear(torch.empty(2, 3, device="meta"), torch.empty(4, 3, device="meta"))
    program_module = load_program_module()
    imports = WorkspaceImports(program_module)
    sys.meta_path.insert(0, imports)
    channel.write(json.dumps({"ready": True, "torch": torch.__version__, "python": sys.executable,
                              "cuda": bool(torch.cuda.is_available())}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as error:
            channel.write(json.dumps({"id": None, "ok": False, "error": f"bad request: {error}"}) + "\n")
            continue
        channel.write(json.dumps(answer(torch, program_module, imports, request)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
