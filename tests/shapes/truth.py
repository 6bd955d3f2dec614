"""Runtime truth for the shape pass: run a model file with real torch, record the shape
of every tensor bound to a name, and score the static shapes against it.

Recording: the file's syntax tree is instrumented (after every assignment, at the
start of every `for` body and function body) with a call that stores, for each bound
name, the shape of the value when it is a `torch.Tensor` — keyed like the static
bindings by (line, column, name) — and the function invocation it happened in.

Scoring (`score`):
- a *runtime tensor binding* is a key that held a tensor at least once;
- *coverage*: the share of them for which the static pass gives a full shape (every size
  known, symbolic or concrete);
- *precision*: the share of the shapes shown (full or partial) that are right at every
  run of that line;
- *exact*: the share of the shapes shown that are full (no `?`) and right;
- *wrong*: the shapes shown that are not right (a wrong rank or size, or a symbol that
  stands for several sizes in its scope).  A concrete size must equal the real one; a symbol is right when it
  stands for one size everywhere in its scope, and an expression (`3*n_embd`,
  `(H-3)//2+1`) when it evaluates to the real size with those symbol values.
  The scope is the whole file (`per_file`), or one function invocation.
"""
from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from torch_lsp.shapes.dims import parse_dim

PROBE = "__shape_probe__"
ENTER = "__shape_enter__"
INVOCATION = "__shape_inv__"


# ------------------------------------------------------------------ recording
class _Instrument(ast.NodeTransformer):
    def _probes(self, names: list[ast.AST]) -> list[ast.stmt]:
        probes = []
        for node in names:
            name = node.id if isinstance(node, ast.Name) else node.arg
            call = ast.Expr(ast.Call(
                ast.Name(PROBE, ast.Load()),
                [ast.Name(INVOCATION, ast.Load()), ast.Constant(node.lineno), ast.Constant(node.col_offset),
                 ast.Constant(name), ast.Name(name, ast.Load())],
                [],
            ))
            probes.append(call)
        return probes

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            stmt = self.visit(stmt)
            out.append(stmt)
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and getattr(stmt, "value", None) is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = [n for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                out.extend(self._probes(names))
        return out

    def generic_visit(self, node):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, self._body(block))
        for handler in getattr(node, "handlers", []) or []:
            handler.body = self._body(handler.body)
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        names = [n for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        node.body = self._probes(names) + node.body
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        a = node.args
        params = a.posonlyargs + a.args + a.kwonlyargs
        enter = ast.Assign([ast.Name(INVOCATION, ast.Store())], ast.Call(ast.Name(ENTER, ast.Load()), [], []))
        node.body = [enter] + self._probes(params) + node.body
        return node

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return node


@dataclass
class Observation:
    invocation: int
    shape: tuple[int, ...] | None  # None: not a tensor


@dataclass
class RuntimeShapes:
    observations: dict[tuple[int, int, str], list[Observation]] = field(default_factory=dict)

    def tensor_keys(self) -> set[tuple[int, int, str]]:
        return {k for k, obs in self.observations.items() if any(o.shape is not None for o in obs)}


def record_runtime_shapes(path: Path, source: str | None = None) -> RuntimeShapes:
    """Run the file as `__main__` with real torch and record every tensor bound to a name."""
    import torch

    source = source if source is not None else path.read_text(encoding="utf-8")
    tree = _Instrument().visit(ast.parse(source, str(path)))
    tree.body.insert(0, ast.Assign([ast.Name(INVOCATION, ast.Store())], ast.Constant(0)))
    ast.fix_missing_locations(tree)
    code = compile(tree, str(path), "exec")
    recorded = RuntimeShapes()
    counter = [0]

    def enter() -> int:
        counter[0] += 1
        return counter[0]

    def probe(invocation: int, line: int, col: int, name: str, value) -> None:
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else None
        recorded.observations.setdefault((line, col, name), []).append(Observation(invocation, shape))

    module = types.ModuleType("__main__")
    module.__dict__.update({"__name__": "__main__", "__file__": str(path), PROBE: probe, ENTER: enter})
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module  # dataclasses look their module up by name
    torch.manual_seed(0)
    try:
        exec(code, module.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved
    return recorded


# -------------------------------------------------------------------- scoring
@dataclass
class Score:
    runtime_tensors: int = 0
    full: int = 0  # runtime tensor bindings with a full static shape
    shown: int = 0  # static shapes (full or partial) at lines that ran
    right: int = 0
    exact: int = 0  # shown, full and right
    wrong: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.full / self.runtime_tensors if self.runtime_tensors else 1.0

    @property
    def precision(self) -> float:
        return self.right / self.shown if self.shown else 1.0

    @property
    def exactness(self) -> float:
        return self.exact / self.shown if self.shown else 1.0

    def add(self, other: "Score") -> None:
        self.runtime_tensors += other.runtime_tensors
        self.full += other.full
        self.shown += other.shown
        self.right += other.right
        self.exact += other.exact
        self.wrong.extend(other.wrong)


def score(static: list[dict], runtime: RuntimeShapes, per_file: bool, label: str = "") -> Score:
    """Compare `torch-lsp shapes --format json` records with the runtime observations."""
    by_key = {(r["line"], r["column"] - 1, r["name"]): r["shape"] for r in static}
    result = Score()
    tensor_keys = runtime.tensor_keys()
    result.runtime_tensors = len(tensor_keys)
    symbols = _symbol_values(by_key, runtime, per_file)
    for key, shape in by_key.items():
        observations = runtime.observations.get(key)
        if not observations:
            continue  # the line never ran: nothing to compare with
        result.shown += 1
        full = "?" not in shape and "*" not in shape
        if key in tensor_keys and full:
            result.full += 1
        problem = _check(shape, observations, symbols, per_file)
        if problem is None:
            result.right += 1
            result.exact += full
        else:
            result.wrong.append(f"{label}:{key[0]}:{key[2]}: static {shape}, {problem}")
    return result


def _dims(shape: list) -> tuple[bool, list]:
    variadic = bool(shape) and shape[0] == "*"
    return variadic, shape[1:] if variadic else shape


def _symbol_values(by_key: dict, runtime: RuntimeShapes, per_file: bool) -> dict:
    """{scope: {symbol: set of sizes}}: from every single-symbol dim, then, for symbols that
    only occur inside expressions (`H//patch_size`), the values that satisfy those
    expressions (solved one unknown symbol at a time)."""
    found: dict = {}
    equations: dict = {}
    for key, shape in by_key.items():
        variadic, dims = _dims(shape)
        for observation in runtime.observations.get(key, ()):
            if observation.shape is None or len(observation.shape) < len(dims):
                continue
            real = observation.shape[len(observation.shape) - len(dims):]
            scope = 0 if per_file else observation.invocation
            for dim, size in zip(dims, real):
                if isinstance(dim, str) and dim.isidentifier():
                    found.setdefault(scope, {}).setdefault(dim, set()).add(size)
                elif isinstance(dim, str) and dim != "?":
                    equations.setdefault(scope, []).append((dim, size))
    if not per_file:
        # Symbols that reach a function from its callers or callees (a layer's size set in
        # `__init__`, `H` unpacked in a submodule) are looked up file-wide when they have
        # one size there.
        file_wide = _symbol_values(by_key, runtime, per_file=True).get(0, {})
        for scope in set(found) | set(equations):
            values = found.setdefault(scope, {})
            for name, sizes in file_wide.items():
                if name not in values and len(sizes) == 1:
                    values[name] = sizes
    for scope, pending in equations.items():
        _solve(found.setdefault(scope, {}), pending)
    return found


def _solve(known: dict, equations: list[tuple[str, int]]) -> None:
    """Give symbols that only occur inside expressions the one value that satisfies all of them."""
    parsed = [(parse_dim(text, slash_is_floordiv=False), size) for text, size in equations]
    parsed = [(dim, size) for dim, size in parsed if dim is not None]
    for _ in range(4):
        progress = False
        candidates: dict[str, set[int]] = {}
        for dim, size in parsed:
            unknown = [name for name in dim.symbols() if name not in known]
            if len(unknown) != 1:
                continue
            values = {n: next(iter(v)) for n, v in known.items() if len(v) == 1}
            fits = {v for v in range(1, 4097) if dim.evaluate({**values, unknown[0]: v}) == size}
            name = unknown[0]
            candidates[name] = fits if name not in candidates else candidates[name] & fits
        for name, fits in candidates.items():
            if fits:
                known[name] = {min(fits)}
                progress = True
        if not progress:
            return


def _check(shape: list, observations: list[Observation], symbols: dict, per_file: bool) -> str | None:
    variadic, dims = _dims(shape)
    for observation in observations:
        real = observation.shape
        if real is None:
            return "but the value was not a tensor at run time"
        if (not variadic and len(real) != len(dims)) or len(real) < len(dims):
            return f"but it was {list(real)}"
        tail = real[len(real) - len(dims):]
        scope = symbols.get(0 if per_file else observation.invocation, {})
        for dim, size in zip(dims, tail):
            if dim == "?":
                continue
            if isinstance(dim, int):
                if dim != size:
                    return f"but it was {list(real)}"
                continue
            expected = _evaluate(dim, scope)
            if expected is None:
                return f"but `{dim}` stands for several sizes (it was {list(real)})"
            if expected != size:
                return f"but it was {list(real)}"
    return None


def _evaluate(text: str, scope: dict) -> int | None:
    dim = parse_dim(text, slash_is_floordiv=False)
    if dim is None:
        return None
    values = {}
    for name in dim.symbols():
        sizes = scope.get(name)
        if not sizes or len(sizes) != 1:
            return None
        values[name] = next(iter(sizes))
    return dim.evaluate(values)


def without_main_block(source: str) -> str:
    """The file with its `if __name__ == "__main__":` block blanked (same line numbers):
    what the static pass sees of a module imported elsewhere, with no call site."""
    tree = ast.parse(source)
    lines = source.split("\n")
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.dump(node.test):
            for index in range(node.lineno - 1, node.end_lineno):
                lines[index] = ""
    return "\n".join(lines)
