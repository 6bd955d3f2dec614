"""Every use and every import of a library name in a file, resolved through the imports.

`import torch as T; T.solve(a, b)`, `from torch import load; load(f)` and
`from torch.cuda.amp import autocast` all name `torch.solve`, `torch.load` and
`torch.cuda.amp.autocast`; rules that look for an API by its qualified name (TL7xx) ask
`references(analysis)[qualname]` and get each place it is used, with the call when it is
called.  A name the file also binds some other way (`def load(...)`, `solve = ...`, a
parameter) is not resolved at all: which binding a use sees is not known, and a rule that
is unsure stays silent.  A method of a class binds no bare name (it is an attribute of its
class), so `def load(self)` does not count.  Computed once per analysed version (`analysis.facts`).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.syntax_index import statement_nodes, syntax_index

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@dataclass(frozen=True)
class Reference:
    """A use of `qualname`: `node` is the `Name` or `Attribute` that names it; `call` the call
    when the node is the called function (`T.solve` in `T.solve(a, b)`)."""

    qualname: str
    node: ast.expr
    call: ast.Call | None


@dataclass(frozen=True)
class ImportedName:
    """One name an import statement binds: `alias` of `stmt`, naming `qualname`."""

    qualname: str
    stmt: ast.Import | ast.ImportFrom
    alias: ast.alias


@dataclass(frozen=True)
class _Scan:
    references: dict[str, list[Reference]]
    imported: list[ImportedName]
    rebound: frozenset[str]


_SCAN: FactKey[_Scan] = FactKey("name_resolution.scan")


def _scan(analysis: "Analysis") -> _Scan:
    return analysis.facts.get_or_compute(_SCAN, lambda: _collect(analysis))


def references(analysis: "Analysis") -> dict[str, list[Reference]]:
    """{qualified name: its uses in source order}; every prefix of a dotted use counts
    (`torch.cuda.amp.autocast()` is also a use of `torch.cuda.amp`)."""
    return _scan(analysis).references


def imported_names(analysis: "Analysis") -> list[ImportedName]:
    """Each name bound by an `import` or `from ... import` (relative imports left out)."""
    return _scan(analysis).imported


def rebound_names(analysis: "Analysis") -> frozenset[str]:
    """Names the file binds other than by an import: definitions, assignments, parameters,
    loop and `with` targets."""
    return _scan(analysis).rebound


def resolves(analysis: "Analysis", name: str) -> str | None:
    """What a bare name refers to through the imports, None when not imported or rebound."""
    if name in rebound_names(analysis):
        return None
    return analysis.imports.get(name)


@dataclass(frozen=True)
class _StatementScan:
    """What one top-level statement holds of the scan, whatever the file imports: its dotted
    names (node, root name, attributes after it), bindings, calls and imports."""

    chains: list[tuple[ast.expr, str, list[str]]]
    rebound: frozenset[str]
    called: dict[int, ast.Call]
    imported: list[ImportedName]


_STATEMENT_SCAN: FactKey[_StatementScan] = FactKey("name_resolution.statement_scan")


def _collect(analysis: "Analysis") -> _Scan:
    """The scans of the top-level statements (kept while a statement is unchanged), merged
    with what the file imports: only names rooted at an import, and not rebound, resolve.
    Each statement's references are kept too, while the imports and the rebound names stay
    the same: a version then merges them instead of resolving every dotted name again."""
    imports = analysis.imports
    imported: list[ImportedName] = []
    rebound: set[str] = set()
    scans = analysis.statement_facts.each(
        _STATEMENT_SCAN, lambda statement: _scan_statement(statement_nodes(analysis, statement)))
    for scan in scans:
        imported += scan.imported
        rebound |= scan.rebound
    file_facts = (tuple(imports.items()), frozenset(rebound))
    # The kept objects when equal: each statement's comparison below is then by identity.
    file_facts = analysis.statement_facts.kept_file_facts(_STATEMENT_REFERENCES, file_facts)
    rebound = file_facts[1]
    scan_of = {id(statement): scan for statement, scan in zip(analysis.tree.body, scans)}
    found: dict[str, list[Reference]] = {}
    for references in analysis.statement_facts.each_under(
            _STATEMENT_REFERENCES, file_facts, lambda statement: _resolve(scan_of[id(statement)], imports, rebound)):
        for reference in references:
            found.setdefault(reference.qualname, []).append(reference)
    # Each statement's references come in source order (`_resolve`) and the statements in
    # source order: every name's uses are in source order without sorting them again.
    imported.sort(key=lambda item: (item.alias.lineno, item.alias.col_offset))
    return _Scan(found, imported, rebound)


_STATEMENT_REFERENCES: FactKey[list[Reference]] = FactKey("name_resolution.statement_references")


def _resolve(scan: _StatementScan, imports: dict[str, str], rebound: frozenset[str]) -> list[Reference]:
    """The references of one top-level statement's dotted names, in source order (a called
    name's call is in the same statement)."""
    references = []
    for node, root, parts in scan.chains:
        if root not in imports or root in rebound:
            continue
        qualname = ".".join([imports[root], *parts])
        references.append(Reference(qualname, node, scan.called.get(id(node))))
    references.sort(key=_source_position)
    return references


def _source_position(reference: Reference) -> tuple[int, int]:
    return reference.node.lineno, reference.node.col_offset


def _scan_statement(nodes: dict[type, list[ast.AST]]) -> _StatementScan:
    """A top-level statement's imports, other bindings and dotted names, from its nodes by
    type (`statement_nodes`)."""
    imported: list[ImportedName] = []
    rebound: set[str] = set()
    chains: list[tuple[ast.expr, str, list[str]]] = []
    for node in nodes.get(ast.Attribute, ()):
        parts, root = [node.attr], node.value
        while type(root) is ast.Attribute:
            parts.append(root.attr)
            root = root.value
        if type(root) is ast.Name:
            chains.append((node, root.id, parts[::-1]))
    for node in nodes.get(ast.Name, ()):
        if type(node.ctx) is ast.Load:
            chains.append((node, node.id, []))
        else:
            rebound.add(node.id)
    called = {id(call.func): call for call in nodes.get(ast.Call, ())}
    rebound.update(node.arg for node in nodes.get(ast.arg, ()))
    # A method binds an attribute of its class, never a bare name: `def load(self)` in a class
    # leaves `from torch import load` resolving in the functions of the file.
    methods = {id(item) for cls in nodes.get(ast.ClassDef, ()) for item in cls.body
               if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        rebound.update(node.name for node in nodes.get(kind, ()) if id(node) not in methods)
    rebound.update(node.name for node in nodes.get(ast.ExceptHandler, ()) if node.name)
    for node in nodes.get(ast.Import, ()):
        imported += [ImportedName(alias.name, node, alias) for alias in node.names]
    for node in nodes.get(ast.ImportFrom, ()):
        if node.module and not node.level:
            imported += [ImportedName(f"{node.module}.{alias.name}", node, alias) for alias in node.names
                         if alias.name != "*"]
    return _StatementScan(chains, frozenset(rebound), called, imported)


# A test that asks which PyTorch runs: `_TORCH_GREATER_EQUAL_2_4`, `torch.__version__ >= ...`,
# `hasattr(torch, "compile")`, `version.parse(...)`, a flag named for the release (`TORCH_2_4`).
_VERSION_TEST = re.compile(r"version|VERSION|GREATER|LESS|_LT_|_GE_|TORCH_\d+_\d+|hasattr|getattr")
_VERSION_NUMBER_TEST = re.compile(r"version|VERSION|GREATER|LESS|_LT_|_GE_|TORCH_\d+_\d+")


def _default_a_version_test_replaces(parent_of, node: ast.AST, test_pattern: re.Pattern) -> bool:
    """`node` is the default the next statement's version test replaces: `weight_norm =
    nn.utils.weight_norm` followed by `if hasattr(nn.utils.parametrizations, "weight_norm"):
    weight_norm = nn.utils.parametrizations.weight_norm` (the old API runs only where the new one
    is missing)."""
    statement = parent_of(node)
    if not (isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return False
    body = next((getattr(parent_of(statement), field) for field in ("body", "orelse", "finalbody")
                 if statement in getattr(parent_of(statement), field, ())), None)
    if body is None:
        return False
    following = body.index(statement) + 1
    if following == len(body) or not isinstance(body[following], ast.If):
        return False
    test = body[following]
    name = statement.targets[0].id
    return bool(test_pattern.search(ast.unparse(test.test))) and any(
        isinstance(target, ast.Name) and target.id == name
        for inner in test.body if isinstance(inner, ast.Assign) for target in inner.targets)


# What a failed import or call of an API a PyTorch version lacks raises (or what catches it).
_MISSING_API_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError", "TypeError", "NameError",
                       "RuntimeError", "Exception", "BaseException"}


def _catches_a_missing_api(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:`, `except (AttributeError, TypeError):`, a bare `except:`; not
    `except KeyboardInterrupt:` or `except FileNotFoundError:`, which no version difference raises."""
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((kind.id if isinstance(kind, ast.Name) else getattr(kind, "attr", None)) in _MISSING_API_ERRORS
               for kind in kinds)


def in_compatibility_code(analysis: "Analysis", node: ast.AST, versions_only: bool = False) -> bool:
    """`node` runs only on some PyTorch versions: in the `except` of a `try` that catches what a
    missing API raises (the fallback of an import or call that failed), or in a branch of an
    `if`/`... if ... else ...` that tests the version or what the module has.  With
    `versions_only`, only branches on a version (`if torch.__version__ < "2.6":`) count: a
    handler or a `hasattr` test may be about anything else."""
    parent_of = syntax_index(analysis).parent_of  # the parents the analysis walk recorded: no walk here
    test_pattern = _VERSION_NUMBER_TEST if versions_only else _VERSION_TEST
    if _default_a_version_test_replaces(parent_of, node, test_pattern):
        return True
    child, parent = node, parent_of(node)
    while parent is not None:
        if not versions_only and isinstance(parent, ast.ExceptHandler) and _catches_a_missing_api(parent):
            return True
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            if _tests_versions(analysis, parent.test, test_pattern):
                return True
        child, parent = parent, parent_of(parent)
    return False


def _tests_versions(analysis: "Analysis", test: ast.expr, test_pattern: re.Pattern) -> bool:
    """The test reads the version (or what the module has) in its own words, or through a name
    the file sets from the version number: `if TORCH_MAJOR < 2:` after `TORCH_MAJOR =
    int(torch.__version__.split(".")[0])` (not through one set from a `hasattr`: `grads = [...
    if not hasattr(p, "expert")]` says nothing of the version, so `if len(grads) == 1:` is no
    version test)."""
    if test_pattern.search(ast.unparse(test)):
        return True
    assigned = analysis.assigned_values
    return any(_VERSION_NUMBER_TEST.search(ast.unparse(value)) for node in ast.walk(test)
               if isinstance(node, ast.Name) for value in assigned.get(node.id, ()))
