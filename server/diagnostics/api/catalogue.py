"""The PyTorch APIs TL701, TL704 and TL706 know: removed, deprecated and non-public names,
with the version that deprecated or removed them and what to use instead.

The lists cover PyTorch 2.x: every function TorchFix lists, and the other names that
PyTorch itself deprecates with a warning or in its documentation.  `drop_in` says that
the replacement takes the same arguments and means the same, so renaming the call (or
the import) keeps behaviour; the fixes of the others rewrite only the cases listed in
`torch_lsp.codeactions.fixes.tl704_use_replacement`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiChange:
    qualname: str
    since: str  # the version that deprecated it ("2.4"; torchvision's own for torchvision names)
    instead: str  # what to use, as the message says it
    replacement: str | None = None  # the qualified name a fix renames to
    drop_in: bool = False
    removed_in: str | None = None  # the version without it (TL701 from there on)


def _api(qualname: str, since: str, instead: str, replacement: str | None = None, drop_in: bool = False,
         removed_in: str | None = None) -> ApiChange:
    return ApiChange(qualname, since, instead, replacement, drop_in, removed_in)


# Removed from PyTorch: absent from every 2.x release (deprecated in 1.9, removed by 2.0).
REMOVED = {a.qualname: a for a in (
    _api("torch.solve", "1.9", "`torch.linalg.solve(A, B)` (note the swapped arguments)", removed_in="2.0"),
    _api("torch.symeig", "1.9", "`torch.linalg.eigh(A)` (or `torch.linalg.eigvalsh(A)` for eigenvalues only)",
         removed_in="2.0"),
    _api("torch.eig", "1.9", "`torch.linalg.eig(A)` (or `torch.linalg.eigvals(A)`)", removed_in="2.0"),
    _api("torch.lstsq", "1.9", "`torch.linalg.lstsq(A, B)` (note the swapped arguments)", removed_in="2.0"),
    _api("torch.matrix_rank", "1.9", "`torch.linalg.matrix_rank(A)`", removed_in="2.0"),
    _api("torch._six", "1.13", "the standard library (`math.inf`, `str`, `collections.abc`)", removed_in="2.0"),
)}

# What replaces each name `torch._six` held, for a message about importing that one name.
SIX_NAMES = {"inf": "`math.inf`", "nan": "`math.nan`", "string_classes": "`str`", "int_classes": "`int`",
             "container_abcs": "`collections.abc`"}

# Tensor methods of the removed functions: `a.symeig()` where `a` is known to be a tensor.
REMOVED_METHODS = {"solve": "torch.solve", "symeig": "torch.symeig", "eig": "torch.eig",
                   "lstsq": "torch.lstsq", "matrix_rank": "torch.matrix_rank"}

DEPRECATED = {a.qualname: a for a in (
    # linear algebra: torch.linalg replaces these (1.9 and later)
    _api("torch.qr", "1.9", "`torch.linalg.qr(A)` (`some=False` is `mode=\"complete\"`)", "torch.linalg.qr"),
    _api("torch.cholesky", "1.9", "`torch.linalg.cholesky(A)` (`upper=True` is `.mH` of it)", "torch.linalg.cholesky"),
    _api("torch.chain_matmul", "1.9", "`torch.linalg.multi_dot([A, B, C])`", "torch.linalg.multi_dot"),
    _api("torch.svd", "1.9", "`torch.linalg.svd(A, full_matrices=False)`, which returns `Vh`, not `V`"),
    _api("torch.norm", "1.9", "`torch.linalg.vector_norm` or `torch.linalg.matrix_norm`"),
    _api("torch.ger", "1.8", "`torch.outer`", "torch.outer", drop_in=True),
    _api("torch.triangular_solve", "1.11", "`torch.linalg.solve_triangular(A, B, upper=...)` (swapped arguments)"),
    _api("torch.lu", "1.13", "`torch.linalg.lu_factor(A)` (or `torch.linalg.lu(A)`)"),
    _api("torch.lu_solve", "1.13", "`torch.linalg.lu_solve(LU, pivots, B)` (new argument order)"),
    _api("torch.range", "0.4", "`torch.arange(start, end + step, step)`: `arange` excludes `end`", "torch.arange"),
    # nn
    _api("torch.nn.UpsamplingNearest2d", "0.4.1", "`nn.Upsample(..., mode=\"nearest\")`"),
    _api("torch.nn.UpsamplingBilinear2d", "0.4.1", "`nn.Upsample(..., mode=\"bilinear\", align_corners=True)`"),
    _api("torch.nn.functional.upsample", "0.4.1", "`torch.nn.functional.interpolate`",
         "torch.nn.functional.interpolate", drop_in=True),
    _api("torch.nn.functional.upsample_nearest", "0.4.1", "`torch.nn.functional.interpolate(..., mode=\"nearest\")`"),
    _api("torch.nn.functional.upsample_bilinear", "0.4.1",
         "`torch.nn.functional.interpolate(..., mode=\"bilinear\", align_corners=True)`"),
    _api("torch.nn.utils.weight_norm", "2.1", "`torch.nn.utils.parametrizations.weight_norm` (its state-dict keys "
         "differ: `parametrizations.weight.original0/1`)"),
    # testing, defaults, memory statistics (the `cached` names became `reserved`)
    _api("torch.testing.assert_allclose", "1.12", "`torch.testing.assert_close` (stricter default tolerances)"),
    _api("torch.set_default_tensor_type", "2.1", "`torch.set_default_dtype` and `torch.set_default_device`"),
    _api("torch.cuda.memory_cached", "1.4", "`torch.cuda.memory_reserved`", "torch.cuda.memory_reserved", drop_in=True),
    _api("torch.cuda.max_memory_cached", "1.4", "`torch.cuda.max_memory_reserved`", "torch.cuda.max_memory_reserved",
         drop_in=True),
    # pytree, attention
    _api("torch.utils._pytree._register_pytree_node", "2.2", "`torch.utils._pytree.register_pytree_node`",
         "torch.utils._pytree.register_pytree_node", drop_in=True),
    _api("torch.backends.cuda.sdp_kernel", "2.3", "`torch.nn.attention.sdpa_kernel(backends)`"),
    # automatic mixed precision: one device-generic API from 2.4
    _api("torch.cuda.amp.autocast", "2.4", "`torch.amp.autocast(\"cuda\", ...)`", "torch.amp.autocast"),
    _api("torch.cpu.amp.autocast", "2.4", "`torch.amp.autocast(\"cpu\", ...)`", "torch.amp.autocast"),
    _api("torch.cuda.amp.GradScaler", "2.4", "`torch.amp.GradScaler(\"cuda\", ...)`", "torch.amp.GradScaler"),
    _api("torch.cuda.amp.custom_fwd", "2.4", "`torch.amp.custom_fwd(device_type=\"cuda\")`", "torch.amp.custom_fwd"),
    _api("torch.cuda.amp.custom_bwd", "2.4", "`torch.amp.custom_bwd(device_type=\"cuda\")`", "torch.amp.custom_bwd"),
    # ... and its state, asked and set per device type (each warns when called)
    _api("torch.get_autocast_gpu_dtype", "2.4", "`torch.get_autocast_dtype(\"cuda\")`"),
    _api("torch.set_autocast_gpu_dtype", "2.4", "`torch.set_autocast_dtype(\"cuda\", dtype)`"),
    _api("torch.get_autocast_cpu_dtype", "2.4", "`torch.get_autocast_dtype(\"cpu\")`"),
    _api("torch.set_autocast_cpu_dtype", "2.4", "`torch.set_autocast_dtype(\"cpu\", dtype)`"),
    _api("torch.is_autocast_cpu_enabled", "2.4", "`torch.is_autocast_enabled(\"cpu\")`"),
    _api("torch.set_autocast_cpu_enabled", "2.4", "`torch.set_autocast_enabled(\"cpu\", enabled)`"),
    # functorch became torch.func in 2.0
    *(_api(f"functorch.{name}", "2.0", f"`torch.func.{name}`", f"torch.func.{name}", drop_in=True)
      for name in ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")),
    _api("functorch.make_functional", "2.0", "`torch.func.functional_call(model, params, inputs)`"),
    _api("functorch.make_functional_with_buffers", "2.0", "`torch.func.functional_call(model, (params, buffers), inputs)`"),
    _api("functorch.combine_state_for_ensemble", "2.0", "`torch.func.stack_module_state`"),
)}

# Tensor methods of deprecated functions, found on values known to be tensors.
DEPRECATED_METHODS = {"qr": "torch.qr", "cholesky": "torch.cholesky", "svd": "torch.svd", "ger": "torch.ger",
                      "triangular_solve": "torch.triangular_solve", "lu": "torch.lu", "lu_solve": "torch.lu_solve"}

# Non-public aliases of public functions (TL706).
NON_PUBLIC = {
    "torch.utils.data._utils.collate.default_collate": "torch.utils.data.dataloader.default_collate",
    "torch.utils.data._utils.collate.default_convert": "torch.utils.data.dataloader.default_convert",
    "torch.utils.data._utils.worker.get_worker_info": "torch.utils.data.get_worker_info",
}


def version_text(version: tuple[int, int] | None) -> str:
    return "the newest PyTorch" if version is None else f"PyTorch {version[0]}.{version[1]}"


def at_least(version: tuple[int, int] | None, text: str) -> bool:
    """Whether the target `version` (None: the newest) is `text` ("2.0") or later."""
    if version is None:
        return True
    wanted = tuple(int(part) for part in text.split(".")[:2])
    return version >= wanted
