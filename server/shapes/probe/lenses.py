"""The "Probe shapes…" code lens over each module class, and the shapes it suggests.

With the probe enabled, every `nn.Module` class of the file with a `forward` gets a lens:

  * `Probe: [B, 3, 32, 32] → [B, 10]` once the probe ran it (the input it used and the
    output it saw; a dim that followed the batch is shown as the batch's name);
  * `Probe shapes: [B, 784]` when the user gave an input that has not run yet;
  * `Probe shapes…` otherwise.

Running the lens runs the command `torch-lsp.probeShapes` with the document's URI and the
class name; the editor asks for an input shape (VS Code: an input box; elsewhere the server
offers the shapes `suggested_inputs` derives from what the class's first layers require),
the server remembers it (`given_inputs`) and probes the class on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.roles import local_module_classes
from torch_lsp.shapes.probe.given_inputs import render_input_shapes
from torch_lsp.shapes.probe.plan import forward_of
from torch_lsp.shapes.values import Tensor

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.probe.results import ProbeReport
    from torch_lsp.shapes.report import ShapeReport

PROBE_COMMAND = "torch-lsp.probeShapes"
SUGGESTED_SPATIAL_SIZES = (32, 224)  # unknown trailing sizes of an image input
SUGGESTED_LENGTH = 16  # an unknown sequence length


@dataclass(frozen=True)
class ProbeLens:
    line: int  # 1-based, the `class` line
    col: int  # UTF-8 byte column of `class`
    title: str
    class_name: str
    current: str | None  # the remembered input, as the user would type it


def probe_lenses(analysis: "Analysis", given: dict[str, list[dict]], probe: "ProbeReport | None") -> list[ProbeLens]:
    lenses = []
    for name, node in local_module_classes(analysis).items():
        if forward_of(node) is None:
            continue
        current = render_input_shapes(given[name]) if name in given else None
        outcome = probe.outputs.get(name) if probe is not None else None
        if outcome is not None:
            title = f"Probe: {outcome[0]} → {outcome[1]}"
        elif current is not None:
            title = f"Probe shapes: {current}"
        else:
            title = "Probe shapes…"
        lenses.append(ProbeLens(node.lineno, node.col_offset, title, name, current))
    return sorted(lenses, key=lambda lens: lens.line)


def suggested_inputs(report: "ShapeReport", class_name: str) -> list[str]:
    """Input shapes to offer for a class, from what its `forward`'s parameters are known to
    need (`[*, 3, ?, ?]` from a first `Conv2d(3, ...)` gives `[B, 3, 32, 32]` and
    `[B, 3, 224, 224]`); empty when a parameter is not known to be a tensor."""
    node = local_module_classes(report.analysis).get(class_name)
    forward = forward_of(node) if node is not None else None
    if forward is None:
        return []
    params = [a.arg for a in forward.args.args[1:]]
    frames = report.engine.frames_by_function.get(forward, ())
    if not params or not frames:
        return []
    frame = frames[0]
    suggestions = []
    for spatial in SUGGESTED_SPATIAL_SIZES:
        parts = []
        for name in params:
            value = frame.params.get(name)
            if value.__class__ is not Tensor or not value.dims:
                return []
            dims = ["B"] if value.variadic else []
            known = [d.as_int() if d is not None else None for d in value.dims]
            if not value.variadic and known and known[0] is None:
                known = known[1:]
                dims = ["B"]
            unknown_tail = sum(1 for d in known if d is None)
            for size in known:
                dims.append(size if size is not None else (spatial if unknown_tail >= 2 else SUGGESTED_LENGTH))
            prefix = "long " if value.dtype == "long" else ""
            parts.append(prefix + "[" + ", ".join(map(str, dims)) + "]")
        text = "; ".join(parts)
        if text not in suggestions:
            suggestions.append(text)
    return suggestions
