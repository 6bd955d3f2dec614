"""TL601 against Dynamo itself: what the rule reports on its fixture is exactly where torch breaks.

The fixture (`fixtures/TL601.py`) is a module of small runnable compiled functions and modules,
each taking `x`, a float tensor of shape [8, 4].  For every one of them that has an
`# expect: TL601` line, `torch._dynamo.explain` runs it on CPU and the lines where the graph
breaks (the fixture's innermost frame of each break) must be exactly its expected lines: a
reported break is a real break, and nothing else there breaks unreported.  Every compiled
function or module with only `# clean` lines must compile with `fullgraph=True`.  A second,
generated file checks that setting `capture_scalar_outputs` / `capture_dynamic_output_shape_ops`
silences exactly the findings that those settings make traceable.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from tests.rules.markers import read_markers
from tests.shapes.conftest import require_torch
from torch_lsp.checker import check_source
from torch_lsp.settings import Selection, Settings

FIXTURE = Path(__file__).parent / "fixtures" / "TL601.py"


def _require_numpy():
    try:
        import numpy  # noqa: F401 - the fixture imports it
    except ImportError:
        message = "numpy is not installed (it is in the test extra: `pip install -e .[test]`)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def fixture_module():
    require_torch()
    _require_numpy()
    warnings.filterwarnings("ignore")
    spec = importlib.util.spec_from_file_location("tl601_fixture", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _units() -> list[tuple[str, set[int], set[int]]]:
    """(top-level function or class name, its expected lines, its clean lines)."""
    expects, cleans = read_markers(FIXTURE)
    tree = ast.parse(FIXTURE.read_text(encoding="utf-8"))
    units = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            lines = set(range(node.lineno, node.end_lineno + 1))
            expected = {line for line in lines if "TL601" in expects.get(line, ())}
            units.append((node.name, expected, lines & cleans))
    return units


def _compiled_runnable(module, name: str):
    """The uncompiled callable behind the fixture's compiled function or module `name`, or
    None when the fixture does not compile it."""
    value = getattr(module, name)
    if isinstance(value, type):  # a class: the module-level instance compiled (or one such an instance holds)
        for candidate in _objects_of(module):
            original = getattr(candidate, "_orig_mod", None)  # torch.compile(instance)
            if type(original) is value:
                return original
            if type(candidate) is value and getattr(candidate, "_compiled_call_impl", None) is not None:
                return candidate.forward  # instance.compile(): the module's own forward, uncompiled
            if type(candidate) is value:  # `self.step = torch.compile(self._step)`: the bound method
                for attribute in vars(candidate).values():
                    if getattr(attribute, "_torchdynamo_orig_callable", None) is not None:
                        return attribute._torchdynamo_orig_callable
        return None
    if getattr(value, "_torchdynamo_disable", False):
        return None  # `@torch.compiler.disable`: kept out of the compiler
    return getattr(value, "_torchdynamo_orig_callable", None)


def _objects_of(module) -> list:
    """The fixture's module-level values, and the attributes of its instances of its own
    plain classes (`holder.held`, a module its holder compiles)."""
    values = list(vars(module).values())
    held = [attribute for value in values if type(value).__module__ == module.__name__
            and not isinstance(value, type) and hasattr(value, "__dict__") for attribute in vars(value).values()]
    return values + held


def _break_lines(runnable, x) -> set[int]:
    import torch._dynamo

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(runnable)(x)
    lines = set()
    for reason in explanation.break_reasons:
        frames = [f for f in reason.user_stack if Path(f.filename) == FIXTURE]
        if frames:
            lines.add(frames[-1].lineno)
    return lines


BREAKING = [(name, expected) for name, expected, _ in _units() if expected]
CLEAN = [name for name, expected, cleans in _units() if cleans and not expected]


@pytest.mark.parametrize("name,expected", BREAKING, ids=[name for name, _ in BREAKING])
def test_every_reported_break_is_where_dynamo_breaks(fixture_module, name, expected):
    import torch

    runnable = _compiled_runnable(fixture_module, name)
    assert runnable is not None, f"{name} has `# expect: TL601` lines but the fixture does not compile it"
    assert _break_lines(runnable, torch.randn(8, 4)) == expected


@pytest.mark.parametrize("name", CLEAN)
def test_every_clean_compiled_function_compiles_without_a_break(fixture_module, name):
    import torch
    import torch._dynamo

    runnable = _compiled_runnable(fixture_module, name)
    if runnable is None:
        assert not [f for f in _findings(FIXTURE.read_text(encoding="utf-8")) if _inside(name, f.line)]
        return  # not compiled in the fixture: silent because nothing there is traced
    torch._dynamo.reset()
    torch.compile(runnable, fullgraph=True, backend="eager")(torch.randn(8, 4))


def test_the_fixture_has_both_kinds():
    assert len(BREAKING) >= 12 and len(CLEAN) >= 6


CAPTURED = textwrap.dedent("""\
    import torch
    import torch._dynamo.config

    torch._dynamo.config.capture_scalar_outputs = True
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    torch._dynamo.config.reorderable_logging_functions.add(print)


    @torch.compile
    def scalar_out(x):
        print("scaling")
        return x * x.sum().item()


    @torch.compile
    def masked(x):
        y = torch.relu(x)
        return y[y > 0] + torch.nonzero(y).sum()


    @torch.compile
    def still_breaks(x):
        y = torch.relu(x)
        if y.sum() > 0:
            y = y + 1
        return y
""")


def test_capture_settings_silence_what_they_make_traceable(tmp_path):
    require_torch()
    import torch._dynamo

    path = tmp_path / "captured.py"
    path.write_text(CAPTURED, encoding="utf-8")
    reported = {f.line for f in _findings(CAPTURED, str(path))}
    assert reported == {24}  # only the `if` on a tensor value
    spec = importlib.util.spec_from_file_location("tl601_captured", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)  # turns the capture settings on
        for name in ("scalar_out", "masked"):
            torch._dynamo.reset()
            explanation = torch._dynamo.explain(module.__dict__[name]._torchdynamo_orig_callable)(
                torch.randn(8, 4))
            assert explanation.break_reasons == [], name
        assert _break_lines_in(module.still_breaks._torchdynamo_orig_callable, path) == {24}
    finally:
        torch._dynamo.config.capture_scalar_outputs = False
        torch._dynamo.config.capture_dynamic_output_shape_ops = False
        torch._dynamo.config.reorderable_logging_functions.discard(print)
        sys.modules.pop("tl601_captured", None)


def _break_lines_in(runnable, path: Path) -> set[int]:
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(runnable)(torch.randn(8, 4))
    return {f.lineno for r in explanation.break_reasons for f in r.user_stack[-1:] if Path(f.filename) == path}


def _findings(source: str, path: str = str(FIXTURE)):
    settings = Settings().with_selection(Selection(select=("TL601",)))
    return [f for f in check_source(source, path, settings).findings if f.code == "TL601"]


def _inside(name: str, line: int) -> bool:
    tree = ast.parse(FIXTURE.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if getattr(n, "name", None) == name)
    return node.lineno <= line <= node.end_lineno



def _reported_and_broken(tmp_path, name: str, source: str, functions: tuple[str, ...]) -> tuple[set, dict]:
    """(TL601 lines, {compiled function: the lines where Dynamo breaks}) of a generated file."""
    require_torch()
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    reported = {f.line for f in _findings(source, str(path))}
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return reported, {f: _break_lines_in(getattr(module, f)._torchdynamo_orig_callable, path) for f in functions}
    finally:
        sys.modules.pop(name, None)


HELPERS = textwrap.dedent("""\
    import torch


    def scale_of(y):
        return y.abs().max().item()


    def normalized(y):
        return y / scale_of(y)


    @torch.compile
    def step(x):
        y = torch.relu(x)
        return normalized(y) + 1


    @torch.compiler.disable
    def report(y):
        print("mean", y.mean().item())


    @torch.compile
    def logged(x):
        y = torch.tanh(x)
        report(y)
        return y * 2
""")


def test_helpers_called_from_compiled_code_break_where_reported(tmp_path):
    """Dynamo inlines the plain functions compiled code calls (transitively): a break in one is
    a break of the compiled graph. A `torch.compiler.disable` helper is not traced: Dynamo
    breaks at its call (line 26), the break its author asked for, which is not reported."""
    reported, breaks = _reported_and_broken(tmp_path, "tl601_helpers", HELPERS, ("step", "logged"))
    assert reported == {5}
    assert breaks == {"step": {5}, "logged": {26}}


PASSED_TENSORS = textwrap.dedent("""\
    import torch


    def keep_positive(y):
        keep = y > 0
        return y[keep]


    def shifted(y, margin):
        if margin > 0:
            return y + margin
        return y


    def clipped(y, limit):
        if limit > 0:
            return y.clamp(max=limit)
        return y


    @torch.compile
    def step(x):
        y = torch.tanh(x)
        out = keep_positive(y).sum() + shifted(y, 0.5) + shifted(y, y.mean())
        return out + clipped(y, 2.0) + clipped(y, 3)
""")


def test_parameters_every_caller_passes_a_tensor_are_tensors(tmp_path):
    """An unannotated parameter is a tensor when every call in the file passes one: the mask
    read in `keep_positive` is reported; `margin` is a tensor at one call, where the `if` on
    it breaks (reported); `limit` is a number at every call, so its `if` is traced."""
    reported, breaks = _reported_and_broken(tmp_path, "tl601_passed", PASSED_TENSORS, ("step",))
    assert reported == {6, 10}
    assert breaks == {"step": {6, 10}}


TOLIST_CAPTURED = textwrap.dedent("""\
    import torch
    import torch._dynamo.config

    torch._dynamo.config.capture_scalar_outputs = True


    @torch.compile
    def ids(x):
        y = torch.relu(x)
        return y, torch.bucketize(y, torch.linspace(0, 1, 4)).tolist()


    @torch.compile
    def values(x):
        y = torch.relu(x).float()
        return y, y.tolist()


    @torch.compile
    def flags(x):
        y = torch.relu(x).float()
        return y, (y > 0).tolist()
""")


def test_tolist_of_integers_is_captured_with_scalars(tmp_path):
    """With scalars captured, an integer tensor's `.tolist()` is traced (as `.item()` is); a
    float or bool tensor's still breaks (reported where the dtype is known: `.float()`, a comparison)."""
    require_torch()
    import torch._dynamo

    try:
        reported, breaks = _reported_and_broken(tmp_path, "tl601_tolist", TOLIST_CAPTURED, ("ids", "values", "flags"))
    finally:
        torch._dynamo.config.capture_scalar_outputs = False
    assert reported == {16, 22}
    assert breaks == {"ids": set(), "values": {16}, "flags": {22}}
