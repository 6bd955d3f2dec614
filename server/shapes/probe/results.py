"""What the probe found in one file, in the terms the front ends show.

`ProbeReport` holds, per file version:

  * `failures`: each probe that raised, placed on the innermost line of this file that the
    error passed through (the rest of the traceback as related lines), with the runtime
    error text: TL502;
  * `observed`: the real shape of names, by (line, name): a script's top-level bindings,
    and in a probed `forward`, the names bound from a submodule call (`x = self.fc(x)`),
    recorded by forward hooks;
  * `varies`: for those, which dims followed the batch when it was changed;
  * `memory`: per probed class, the estimate of parameters, gradients, optimizer state and
    saved activations;
  * `notes`: why something could not be probed (no torch, a timeout, a crash), one
    sentence each.

`note_for(line, name, static_dims)` is what a hover adds: "confirmed by probe" or the
disagreement.
"""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field

from torch_lsp.shapes.probe.plan import ProbeTarget


@dataclass(frozen=True)
class ProbeFailure:
    line: int  # 1-based
    col: int  # UTF-8 byte column, as `ast`
    end_line: int
    end_col: int
    message: str
    # The traceback's other lines in this file: (line, col, end_line, end_col, what happens there).
    related: tuple[tuple[int, int, int, int, str], ...] = ()


@dataclass
class ProbeReport:
    failures: list[ProbeFailure] = field(default_factory=list)
    observed: dict[tuple[int, str], list] = field(default_factory=dict)
    varies: dict[tuple[int, str], list[bool]] = field(default_factory=dict)
    memory: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    torch_version: str | None = None
    probed: list[str] = field(default_factory=list)  # labels of the targets that ran
    # Per probed class: its input and output as shown to the user (`[B, 784]`, `[B, 10]`).
    outputs: dict[str, tuple[str, str]] = field(default_factory=dict)

    def note_for(self, line: int, name: str, static_dims: list) -> str | None:
        """"confirmed by probe", the probed shape where it differs, or None (not probed)."""
        probed = self.observed.get((line, name))
        if not isinstance(probed, list) or not all(isinstance(d, int) for d in probed):
            return None
        varies = self.varies.get((line, name))
        if len(static_dims) == len(probed) and all(
                agrees(static, real, varies[i] if varies else None)
                for i, (static, real) in enumerate(zip(static_dims, probed))):
            return "confirmed by probe"
        shown = ", ".join(str(d) for d in probed)
        return f"probe: [{shown}] (torch {self.torch_version})" if self.torch_version else f"probe: [{shown}]"


def hover_with_probe(markdown: str, probe: ProbeReport | None, binding) -> str:
    """A tensor's hover text with what the probe says of it, when it ran there."""
    note = probe.note_for(binding.line, binding.name, binding.dims) if probe and binding else None
    return f"{markdown}\n\n*{note}*" if note else markdown


def memory_table(estimate: dict) -> str:
    """The probe's memory estimate of one module, as hover markdown."""
    def size(count: int) -> str:
        for unit in ("B", "KiB", "MiB", "GiB"):
            if count < 1024 or unit == "GiB":
                return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
            count /= 1024
        return ""

    optimizer = estimate.get("optimizer")
    rows = [("parameters", estimate["parameters"]), ("gradients", estimate["gradients"]),
            (f"optimizer state ({optimizer})" if optimizer else "optimizer state (none seen)",
             estimate["optimizer_state"]),
            ("activations saved for backward", estimate["activations"])]
    total = sum(count for _, count in rows)
    lines = [f"| {what} | {size(count)} |" for what, count in rows]
    if "measured_peak" in estimate:
        lines.append(f"| measured peak of one forward + backward (cuda) | {size(estimate['measured_peak'])} |")
    return ("**Memory for one training step** (shape probe, meta tensors: estimates, at the probed input size)\n\n"
            "| | |\n|---|---|\n" + "\n".join(lines) + f"\n| **total** | **{size(total)}** |")


def hover_with_memory(markdown: str, probe: ProbeReport | None, class_name: str | None) -> str:
    """A module summary's hover with the probe's memory estimate, when it probed the class."""
    estimate = probe.memory.get(class_name) if probe is not None and class_name else None
    return f"{markdown}\n\n{memory_table(estimate)}" if estimate else markdown


def probed_hint(hint, probe: ProbeReport | None, binding):
    """An inlay hint switched to the probed shape where the probe disagrees with the static
    one (the tooltip says so); else the hint as it is."""
    if probe is None or binding is None:
        return hint
    note = probe.note_for(binding.line, binding.name, binding.dims)
    probed = probe.observed.get((binding.line, binding.name))
    if not note or note == "confirmed by probe" or not isinstance(probed, list):
        return hint
    label = ": [" + ", ".join(map(str, probed)) + "]"
    return dataclasses.replace(hint, label=label, tooltip=f"{note}; static analysis: {hint.label[2:]}")


def agrees(static, real: int, varies: bool | None) -> bool:
    """A static dim agrees with a probed size: the same number, or a symbol the probe saw
    follow the batch (a symbol it could not vary is not contradicted either)."""
    if isinstance(static, int):
        return static == real and not varies
    if isinstance(static, str) and static not in ("?", "*"):
        return varies is not False
    return False


def statement_span(tree: ast.Module, line: int, lines) -> tuple[int, int, int, int]:
    """The innermost statement starting on `line`, as an `ast` span (its first line only)."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line:
            best = node
    if best is None:
        text = lines.line_text(line)
        indent = len(text) - len(text.lstrip())
        return line, indent, line, len(text.encode("utf-8"))
    if best.end_lineno == line:
        return line, best.col_offset, line, best.end_col_offset
    return line, best.col_offset, line, len(lines.line_text(line).encode("utf-8"))


def describe_inputs(request: dict) -> str:
    shapes = [f"[{', '.join(map(str, spec['shape']))}]" for spec in request.get("inputs", ())]
    return " and ".join(shapes) + (" input" if len(shapes) == 1 else " inputs")


def failure_of(target: ProbeTarget, answer: dict, path: str, tree: ast.Module, lines) -> ProbeFailure | None:
    """TL502 for an answer whose run raised a shape error in this file, else None."""
    frames = [f for f in answer.get("frames", ()) if f.get("path") == path]
    if not answer.get("shape_error") or not frames:
        return None
    innermost = frames[-1]
    span = statement_span(tree, innermost["line"], lines)
    if target.kind == "script":
        what = "this file's top-level tensor code"
    else:
        what = f"`{target.label}` on a {describe_inputs(target.request)}"
    message = f"The shape probe ran {what} and it raised {answer['error']}"
    if not message.endswith((".", ")")):
        message += "."
    related = tuple((*statement_span(tree, f["line"], lines), f"the probe's run passed here, in `{f['function']}`")
                    for f in reversed(frames[:-1]))
    return ProbeFailure(*span, message, related)


def add_failure(report: ProbeReport, target: ProbeTarget, answer: dict, path: str, tree: ast.Module,
                lines) -> bool:
    """Record a run that raised a shape error in this file; False when it is not one."""
    failure = failure_of(target, answer, path, tree, lines)
    if failure is None:
        return False
    # The script and a module target often meet the same error: report it once.
    if failure_span(failure) not in map(failure_span, report.failures):
        report.failures.append(failure)
    return True


def failure_span(failure: ProbeFailure) -> tuple[int, int, int, int]:
    return failure.line, failure.col, failure.end_line, failure.end_col


def forward_bindings(forward: ast.FunctionDef) -> list[tuple[int, str, str]]:
    """(line, name, submodule attribute) for each `name = self.attr(...)` in `forward`."""
    found = []
    for node in ast.walk(forward):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            call = node.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "self":
                found.append((node.lineno, node.targets[0].id, call.func.attr))
    return found


def add_answer(report: ProbeReport, target: ProbeTarget, answer: dict, path: str, tree: ast.Module, lines) -> None:
    """Fold one worker answer into the report."""
    if answer.get("torch"):
        report.torch_version = answer["torch"]
    if answer.get("note") and answer["note"] not in report.notes:
        report.notes.append(answer["note"])
    if not answer.get("ok"):
        if not add_failure(report, target, answer, path, tree, lines) and answer.get("error"):
            report.notes.append(f"{target.label} could not be probed: {answer['error']}")
        return
    report.probed.append(target.label)
    for failed in answer.get("failures", ()):  # a script goes on after a statement that raised
        add_failure(report, target, failed, path, tree, lines)
    if target.kind == "script":
        for binding in answer.get("bindings", ()):
            for name, shape in binding["shapes"].items():
                report.observed[(binding["line"], name)] = shape
        return
    submodules = answer.get("submodules", {})
    varied = (answer.get("varied") or {}).get("submodules", {})
    for line, name, attribute in forward_bindings(target.forward):
        outputs = submodules.get(attribute, {}).get("outputs", [])
        if len(outputs) != 1:
            continue  # called more than once: which call is which is not known here
        report.observed[(line, name)] = outputs[0]
        other = varied.get(attribute, {}).get("outputs", [])
        if len(other) == 1 and isinstance(outputs[0], list) and isinstance(other[0], list) \
                and len(other[0]) == len(outputs[0]):
            report.varies[(line, name)] = [a != b for a, b in zip(outputs[0], other[0])]
    if answer.get("memory"):
        report.memory[target.class_name] = answer["memory"]
    report.outputs[target.class_name] = (
        describe_shapes([spec["shape"] if spec.get("batch_dim") is None else
                         ["B" if i == spec["batch_dim"] else d for i, d in enumerate(spec["shape"])]
                         for spec in target.request.get("inputs", ())]),
        describe_shapes([batch_named(answer.get("output"), (answer.get("varied") or {}).get("output"))]))


def batch_named(output, varied_output):
    """The output shape with each dim that changed with the batch shown as `B`."""
    if not isinstance(output, list) or not all(isinstance(d, int) for d in output):
        return output
    if isinstance(varied_output, list) and len(varied_output) == len(output):
        return ["B" if a != b else a for a, b in zip(output, varied_output)]
    return output


def describe_shapes(shapes: list) -> str:
    def one(shape) -> str:
        if isinstance(shape, list) and all(isinstance(d, (int, str)) for d in shape):
            return "[" + ", ".join(map(str, shape)) + "]"
        if isinstance(shape, list):
            return "(" + ", ".join(one(s) for s in shape) + ")"
        return "?" if shape is None else str(shape)
    return "; ".join(one(s) for s in shapes)
