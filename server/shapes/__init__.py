"""Tensor shapes, inferred statically: no torch, no LSP, only the standard library.

One entry point, computed once per document version and cached on its `Analysis`:

    from torch_lsp.shapes import infer_shapes
    report = infer_shapes(analysis)            # ShapeReport, cached on `analysis`

    report.bindings        -> [ShapeBinding(line, col, end_col, name, kind, tensor)]
                              every tensor-valued name binding with some shape known
                              (assignment, tuple-unpacking and `for` targets, parameters);
                              `.dims` is JSON-ready: 8, "B", "3*n_embd", "(H-3)//2+1",
                              "?" for an unknown size, a leading "*" for unknown leading dims;
                              `.origin` says where the shape came from.
    report.hover(line, col) -> Hover(line, col, end_line, end_col, markdown) | None
                              a tensor (`x: Tensor[B, T, 3*n_embd]` + its origin), a
                              module attribute (`self.fc: Linear(128 → 64)`, in → out),
                              a call's output, a function's signature, or, on an
                              `nn.Module` subclass name, a torchinfo-like summary.
    report.inlay_hints()   -> [InlayHint(line, col, label, tooltip)]  (`: [B, nh, T, hs]`)
    report.mismatches      -> [ShapeMismatch(line, col, end_line, end_col, message, kind)]
                              definite contradictions only: kind "shape" (TL501),
                              "dtype" (TL503)
    report.tensor_at(node) -> Tensor | None   the shape of any expression of the file
                              (rules use it: TL202 asks for the rank and dim 0)
    report.class_summary(name) -> str | None
    report.complete        -> False when the pass stopped early (work cap, or an internal
                              error, whose traceback is `report.error`: shapes found
                              before it are kept, the other diagnostics are unaffected)

Positions are `ast` positions: 1-based lines, UTF-8 byte columns (0-based); the
front ends convert them with `torch_lsp.text.LineIndex`.

Imported model classes (`from model import GPT`) are followed through an
`ImportResolver` (see `resolver.py`): pass one as `infer_shapes(analysis, resolver)`,
or install one for every caller (the rules call `infer_shapes(analysis)` inside
`check_source`) with `set_default_resolver(WorkspaceResolver([root]))` once at
start-up.  Without one, imported classes are unknown.

How it works: `dims` (a small integer-polynomial algebra with floor division),
`values` / `pyvalues` (abstract values and their join), `ops` (shape rules of tensor
operations), `functions/` and `layers/` (torch functions and tensor methods, `torch.nn`
layers: one module per family, each rule registered under its literal name, so
`grep -rn '"conv2d"' server/shapes` finds it; a new op or layer goes into its family's
module, see the package docstrings),
`stated` (comments, jaxtyping annotations, docstrings), `interpret` / `frame` /
`expressions` / `calls` / `syntax` / `limits` (the abstract interpreter), `components`
(the file's independent parts, each run on its own and kept across an open document's
edits), `loaders`
(datasets and the batches a `DataLoader` yields), `report` and `listing` (what the front
ends read), `contexts` (names for sizes that differ between a function's call contexts:
`B`, `in_channels`, `H//2`), `symbols` (where a symbol comes from, and the annotation that
would name an unknown size), `parameters` (parameter totals of modules), `batch` (which
dim is the batch: the view TL202 needs), `resolver` (other files, open ones as the
editor has them).  TL202 and TL203 read their shapes here, from
`symbolic_tensor_at` / `symbolic_size_at` and `batch`: there is no other shape path.
Unknown stays unknown: a wrong shape is worse than none.
"""
from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.shapes.resolver import ImportResolver, WorkspaceResolver

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.report import Hover, InlayHint, ShapeBinding, ShapeMismatch, ShapeReport

# `report` brings the whole engine (about a third of the language server's start-up):
# loaded on first use, so that importing `torch_lsp.shapes.probe.client` for its settings
# or `set_default_resolver` at start-up does not wait for it.
_FROM_REPORT = ("Hover", "InlayHint", "ShapeBinding", "ShapeMismatch", "ShapeReport")


def __getattr__(name: str):
    if name in _FROM_REPORT:
        from torch_lsp.shapes import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_SHAPE_REPORT: "FactKey[ShapeReport]" = FactKey("shape report")
_default_resolver: ImportResolver | None = None


def set_default_resolver(resolver: ImportResolver | None) -> None:
    """The resolver `infer_shapes` uses when its caller passes none (None: no other files)."""
    global _default_resolver
    _default_resolver = resolver


def infer_shapes(analysis: "Analysis", resolver: ImportResolver | None = None) -> ShapeReport:
    """The shapes of one analysed document version (computed on first use, then cached); a
    part's analysis (`part_analysis`) reads the whole file's."""
    if analysis.part_of is not None:
        return infer_shapes(analysis.part_of, resolver)
    return analysis.facts.get_or_compute(_SHAPE_REPORT, lambda: _shape_report(analysis, resolver))


def shapes_if_inferred(analysis: "Analysis") -> ShapeReport | None:
    """The shapes of the version if they were inferred already (never infers them)."""
    if analysis.part_of is not None:
        return shapes_if_inferred(analysis.part_of)
    return analysis.facts.peek(_SHAPE_REPORT)


def _shape_report(analysis: "Analysis", resolver: ImportResolver | None) -> ShapeReport:
    from torch_lsp.shapes.interpret import Engine
    from torch_lsp.shapes.limits import Superseded
    from torch_lsp.shapes.report import ShapeReport

    resolver = resolver or _default_resolver
    if analysis.uses_torch:
        from torch_lsp.shapes.components import run_in_parts

        try:
            parts = run_in_parts(analysis, resolver, lambda part: Engine(analysis, resolver, part))
        except (Exception, RecursionError):  # noqa: BLE001 - the whole-file run below keeps what it finds
            parts = None
        if parts is not None:
            return ShapeReport(analysis, parts)
    engine = Engine(analysis, resolver)
    error = None
    if analysis.uses_torch:
        try:
            engine.run()
        except Superseded:
            # Its frames hold reference cycles: broken now, the memory is free at once instead
            # of at the next full collection, which a storm of edits keeps postponing.
            engine.release()
            raise
        except RecursionError:
            engine.exhausted = True  # expressions nested thousands deep: keep what was found
        except Exception:  # noqa: BLE001 - a bug here must not take the other diagnostics down
            engine.exhausted = True
            error = traceback.format_exc()
    report = ShapeReport(analysis, engine)
    report.error = error
    return report


def release_shapes(analysis: "Analysis") -> bool:
    """Forget the shapes cached on `analysis` (a version the caller no longer serves) and,
    unless someone still holds the report, break its reference cycles so that its memory
    is freed now.  True when it was freed that way."""
    report = analysis.facts.pop(_SHAPE_REPORT)
    # Two references: `report` and getrefcount's argument.  More means a reader (a hover
    # being answered) still holds it: the garbage collector frees it later instead.
    if report is None or sys.getrefcount(report) > 2:
        return False
    report.engine.release()
    report.__dict__.clear()
    return True


__all__ = [
    "Hover", "ImportResolver", "InlayHint", "ShapeBinding", "ShapeMismatch", "ShapeReport", "WorkspaceResolver",
    "infer_shapes", "release_shapes", "set_default_resolver",
]
