"""Where a file uses an API of the catalogue: calls, other references, imports and tensor
methods, found by qualified name (`torch_lsp.name_resolution`), never by spelling."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics.api.catalogue import ApiChange
from torch_lsp.diagnostics.correctness.tl205_tensor_from_tensor import tensor_evidence
from torch_lsp.name_resolution import (ImportedName, Reference, imported_names, in_compatibility_code,
                                        references)

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@dataclass(frozen=True)
class ApiUse:
    """One use of `api`: `kind` is "call", "reference" (named, not called: a decorator, a
    value), "import" or "method" (`a.qr()` on a known tensor); `node` is what a finding spans."""

    api: ApiChange
    kind: str
    node: ast.AST
    reference: Reference | None = None
    imported: ImportedName | None = None


def api_uses(analysis: "Analysis", table: dict[str, ApiChange], methods: dict[str, str] | None = None
             ) -> Iterator[ApiUse]:
    """Every use, except in compatibility code (the fallback for an older PyTorch, which must
    use the old name: `... if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()`)."""
    for use in _all_uses(analysis, table, methods):
        if not in_compatibility_code(analysis, use.node):
            yield use


def _all_uses(analysis: "Analysis", table: dict[str, ApiChange], methods: dict[str, str] | None) -> Iterator[ApiUse]:
    found = references(analysis)
    for qualname, api in table.items():
        for reference in found.get(qualname, ()):
            if isinstance(getattr(reference.node, "ctx", None), (ast.Store, ast.Del)):
                continue  # `torch.backends.cuda.sdp_kernel = null_context`: replaced, not used
            if reference.call is not None:
                yield ApiUse(api, "call", reference.call, reference)
            else:
                yield ApiUse(api, "reference", reference.node, reference)
    for imported in imported_names(analysis):
        api = _entry_for(table, imported.qualname)
        if api is not None:
            yield ApiUse(api, "import", imported.alias, imported=imported)
    for call in analysis.iter_calls(*(methods or {})):
        if (isinstance(call.func, ast.Attribute) and analysis.call_qualname(call) is None
                and methods[call.func.attr] in table and tensor_evidence(analysis, call.func.value) is not None):
            yield ApiUse(table[methods[call.func.attr]], "method", call)


def _entry_for(table: dict[str, ApiChange], qualname: str) -> ApiChange | None:
    """The entry for `qualname` or for a module it is in (`torch._six.inf` is in `torch._six`)."""
    while qualname:
        if qualname in table:
            return table[qualname]
        qualname = qualname.rpartition(".")[0]
    return None


def use_at(analysis: "Analysis", table: dict[str, ApiChange], span: tuple[int, int, int, int],
           methods: dict[str, str] | None = None) -> ApiUse | None:
    """The use a finding on `span` reports (what a fix starts from)."""
    for use in api_uses(analysis, table, methods):
        node = use.node
        if (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == span:
            return use
    return None


def calls_of(analysis: "Analysis", qualname: str) -> list[ast.Call]:
    """Calls of `qualname` (through any alias; not when the name is rebound in the file)."""
    return [ref.call for ref in references(analysis).get(qualname, ()) if ref.call is not None]
