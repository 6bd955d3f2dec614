"""Is this expression a tensor?  The evidence TL601 accepts, strongest first.

The shape pass knows layer outputs and torch factories (`self.proj(x)`, `torch.zeros(...)`),
but an unannotated parameter is an opaque symbol there, which it treats as a size.  Inside
compiled code the rest follows the value: a parameter annotated `torch.Tensor`, a `torch.*`
op that returns a tensor, a tensor method on a tensor, arithmetic or a comparison with a tensor
operand, a name whose reaching assignment is one of these, a parameter every call of its function in
this file passes a tensor for, and reductions (`.sum()`, `.any()`,
`.max()` over the whole tensor) whose receiver only a tensor (or an ndarray, which Dynamo traces
as one) has.
Unknown is not a tensor: TL601 stays silent on it (`if n > 2` on a config int).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.roles import reaching_assignment
from torch_lsp.shapes.values import Tensor
from torch_lsp.syntax_nodes import call_name, has_star_args

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.report import ShapeReport

TENSOR_ANNOTATIONS = {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"}
# Methods and `torch.` functions that return something other than a tensor.
NOT_TENSOR_RESULTS = {
    "item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride",
    "data_ptr", "get_device", "is_contiguous", "is_floating_point", "is_complex", "is_tensor", "is_storage",
    "equal", "allclose", "is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled", "storage",
    "untyped_storage", "type", "dim_order", "is_nonzero", "is_same_size", "is_set_to", "register_hook",
    "backward", "__len__", "get_default_dtype", "manual_seed", "set_grad_enabled", "is_compiling", "device",
    "finfo", "iinfo", "no_grad", "enable_grad", "inference_mode", "autocast", "compile", "load", "save",
    "broadcast_shapes", "result_type", "promote_types", "can_cast", "typename", "get_num_threads", "vmap",
    "set_printoptions", "set_default_dtype", "use_deterministic_algorithms", "is_deterministic_algorithms_warn_only_enabled",
}
# Reductions only a tensor (or an ndarray) has: evidence even on a receiver nothing else knows.
TENSOR_REDUCTIONS = {"sum", "mean", "any", "all", "amax", "amin", "argmax", "argmin", "norm", "std", "var",
                     "abs", "isnan", "isinf", "isfinite"}
# Where a lower-case function returns a tensor: `torch.*` itself and the op namespaces (not
# `torch.accelerator.is_available()`, `torch.cuda.device_count()`, `torch.compiler.is_compiling()`).
_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")
_NOT_TENSOR_PREFIXES = ("is_", "get_", "set_", "use_", "are_", "has_")
_MAX_DEPTH = 12


def is_tensor(analysis: "Analysis", report: "ShapeReport", node: ast.AST, depth: int = 0) -> bool:
    """`node` surely evaluates to a tensor; unknown is False."""
    if depth > _MAX_DEPTH:
        return False
    value = report.value_of(node)
    if isinstance(value, Tensor) and not value.claimed:
        return True  # (a shape a comment claims, `# target_size: [T, H, W]`, may describe a list)
    deeper = depth + 1
    if isinstance(node, ast.Name):
        return _name_is_tensor(analysis, report, node, deeper)
    if isinstance(node, ast.Call):
        return _call_is_tensor(analysis, report, node, deeper)
    if isinstance(node, ast.Compare):
        return compares_values(node) and any(is_tensor(analysis, report, n, deeper)
                                             for n in (node.left, *node.comparators))
    if isinstance(node, ast.BoolOp):
        return any(is_tensor(analysis, report, v, deeper) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return is_tensor(analysis, report, node.operand, deeper)
    if isinstance(node, ast.BinOp):
        return is_tensor(analysis, report, node.left, deeper) or is_tensor(analysis, report, node.right, deeper)
    if isinstance(node, ast.Subscript):
        return is_tensor(analysis, report, node.value, deeper)
    return False


def compares_values(node: ast.Compare) -> bool:
    """`==`, `<`, ...: not `is`/`in`, which compare identities and never read a tensor's data."""
    return all(isinstance(op, (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops)


def _name_is_tensor(analysis: "Analysis", report: "ShapeReport", name: ast.Name, depth: int) -> bool:
    assignment = reaching_assignment(analysis, name)
    if assignment is not None:
        return is_tensor(analysis, report, assignment.value, depth)
    function = analysis.context(name).function
    if function.is_module or name.id not in function.params:
        return False
    if analysis.roles_for(function).assignments.get(name.id):
        return False  # a parameter rebound on some path: which value reaches here is not known
    args = function.node.args
    for param in args.posonlyargs + args.args + args.kwonlyargs:
        if param.arg == name.id and param.annotation is not None:
            return analysis.qualname(param.annotation) in TENSOR_ANNOTATIONS
    return _every_caller_passes_a_tensor(analysis, report, function, name.id, depth)


def _every_caller_passes_a_tensor(analysis: "Analysis", report: "ShapeReport", function, param: str,
                                  depth: int) -> bool:
    """`def _keep(self, boxes, scores)` called only as `self._keep(boxes, torch.where(...))`: the
    parameter holds what every call of this file passes.  Only for a function the file calls
    by name and never hands elsewhere (a callback may be called with anything), whose name no
    other function shares, and with an argument at every call (not a default, not `*args`)."""
    if len(analysis.function_named(function.name)) != 1 or function.name in _referenced_uncalled(analysis):
        return False
    sites = analysis.callers(function)
    if not sites:
        return False
    for site in sites:
        if has_star_args(site):
            return False
        passed = analysis.argument_for(site, function, param)
        if passed is None or not is_tensor(analysis, report, passed, depth):
            return False
    return True


_UNCALLED: FactKey[frozenset[str]] = FactKey("names of functions or methods used other than by a call")


def _referenced_uncalled(analysis: "Analysis") -> frozenset[str]:
    """Names read other than as the callee of a call (`map(self._keep, ...)`, `hooks.append(f)`)."""
    def collect() -> frozenset[str]:
        callees = {id(call.func) for call in analysis.calls}
        found = set()
        for node in ast.walk(analysis.tree):
            if id(node) in callees:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                found.add(node.attr)
        return frozenset(found)
    return analysis.facts.get_or_compute(_UNCALLED, collect)


def _call_is_tensor(analysis: "Analysis", report: "ShapeReport", call: ast.Call, depth: int) -> bool:
    name = call_name(call)
    if name is None or name in NOT_TENSOR_RESULTS:
        return False
    qualname = analysis.call_qualname(call)
    if qualname is not None:
        in_torch = (qualname.startswith("torch.") and qualname.count(".") == 1) or qualname.startswith(_OP_NAMESPACES)
        return in_torch and name[:1].islower() and not name.startswith(_NOT_TENSOR_PREFIXES)
    if not isinstance(call.func, ast.Attribute):
        return False
    owner = call.func.value
    whole = name in ("max", "min") and not call.args and not call.keywords  # `.max(1)` is (values, indices)
    if (name in TENSOR_REDUCTIONS or whole) and not _is_self_or_its_attribute(owner):
        return True  # `self.norm(x)`, `self.stats.mean()`: a layer or an object of the user's, not a reduction
    return is_tensor(analysis, report, owner, depth)


def _is_self_or_its_attribute(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"
