"""TL105 hardcoded-device: flags `.cuda()`, `.to("cuda")` and `device="cuda"` in a file that also
defines a device variable (`device = torch.device(...)`).
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import call_name, keyword, method_span


@register
class HardcodedDevice(Rule):
    """
    ## What it does
    Flags `.cuda()`, `.to("cuda")` and `device="cuda"` in a file that also defines a device
    variable (`device = torch.device(...)`).

    ## Why is this bad
    The file already decides where tensors live; a hardcoded `"cuda"` ignores that choice,
    so the code breaks on CPU-only machines and mixes devices on multi-GPU ones
    ("Expected all tensors to be on the same device").

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = batch.cuda()
    ```

    ## Use instead
    ```python
    x = batch.to(device)
    ```
    """

    code = "TL105"
    name = "hardcoded-device"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        device = _defined_device_variable(analysis)
        if device is None:
            return
        for call in analysis.calls:
            if analysis.call_qualname(call) == "torch.device":
                continue
            name = call_name(call)
            if name == "cuda" and isinstance(call.func, ast.Attribute) and analysis.qualname(call.func) is None:
                if _hardcoded_cuda_call(call):
                    yield self._report(method_span(call), f"`.{ast.unparse(call)[len(ast.unparse(call.func.value)) + 1:]}`", device, "cuda")
            elif name == "to" and isinstance(call.func, ast.Attribute):
                target = call.args[0] if call.args else getattr(keyword(call, "device"), "value", None)
                if _is_cuda_string(target):
                    yield self._report(method_span(call), f"`.to({ast.unparse(target)})`", device, "to")
            else:
                kw = keyword(call, "device")
                if kw is not None and _is_cuda_string(kw.value):
                    span = (kw.lineno, kw.col_offset, kw.end_lineno, kw.end_col_offset)
                    yield self._report(span, f"`device={ast.unparse(kw.value)}`", device, "keyword")

    def _report(self, span, what: str, device: str, form: str) -> Finding:
        message = (
            f"{what} hardcodes the GPU although this file defines `{device}`; on a CPU-only machine or another "
            f"GPU the tensors end up on different devices. Use `{device}` instead."
        )
        return self.finding_at(span, message, f"Use `{device}`", data={"device": device, "form": form})


def _hardcoded_cuda_call(call: ast.Call) -> bool:
    """`.cuda()` / `.cuda(0)` on a value — not `super().cuda(device)` in an override."""
    target = call.func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
        return False
    if call.keywords and any(kw.arg in ("device", None) for kw in call.keywords):
        return False
    return all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in call.args)


def _is_cuda_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _defined_device_variable(analysis: Analysis) -> str | None:
    """The name of a device variable the file defines (`device = torch.device(...)` or similar)."""
    from torch_lsp.roles import DEVICE_NAME, constructed_kind

    for stmt in analysis.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if constructed_kind(analysis, value) == "device":
                return name
            if DEVICE_NAME.match(name) and isinstance(value, ast.IfExp):
                return name
    return None
