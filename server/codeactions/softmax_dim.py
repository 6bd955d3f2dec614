"""Where a softmax-family call takes `dim`: what the TL201 and TL202 fixes both edit."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.diagnostics.correctness.provenance import torch_module_class
from torch_lsp.diagnostics.correctness.torch_names import FUNCTIONAL_SOFTMAX, SOFTMAX_METHODS, SOFTMAX_MODULES, TORCH_SOFTMAX

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def softmax_dim_position(analysis: "Analysis", call: ast.Call) -> int | None:
    """Where a softmax-family call takes `dim` positionally (None: not a softmax call)."""
    if torch_module_class(analysis, call) in SOFTMAX_MODULES:
        return 0
    qualname = analysis.call_qualname(call)
    if qualname in FUNCTIONAL_SOFTMAX or qualname in TORCH_SOFTMAX:
        return 1
    if qualname is None and isinstance(call.func, ast.Attribute) and call.func.attr in SOFTMAX_METHODS:
        return 0
    return None
