"""TL708 torchvision-deprecated: `pretrained=`/`pretrained_backbone=` of torchvision model
builders, `transforms.v2.ToTensor`, and `import torchvision.models as models`."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.replacements import Plan, segment, span_of, spelled
from torch_lsp.diagnostics.api.torchvision_weights import WEIGHTS, builder_key
from torch_lsp.diagnostics.api.uses import api_uses
from torch_lsp.diagnostics.api.catalogue import ApiChange
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.name_resolution import imported_names, in_compatibility_code, references
from torch_lsp.syntax_nodes import argument, keyword

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

TO_TENSOR = {"torchvision.transforms.v2.ToTensor": ApiChange(
    "torchvision.transforms.v2.ToTensor", "0.16",
    "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`")}
SUBMODULES = ("models", "datasets", "transforms")


@dataclass(frozen=True)
class TorchvisionIssue:
    node: ast.AST
    message: str
    plan: Plan | None
    severity: str | None = None


def torchvision_issues(analysis: "Analysis") -> list[TorchvisionIssue]:
    found = [*_pretrained(analysis), *_to_tensor(analysis), *_import_style(analysis)]
    return sorted(found, key=lambda i: (i.node.lineno, i.node.col_offset))


def _pretrained(analysis: "Analysis") -> Iterator[TorchvisionIssue]:
    for qualname, uses in references(analysis).items():
        key = builder_key(qualname)
        if key is None:
            continue
        for use in uses:
            call = use.call
            if call is None or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            old = [(name, argument(call, position, name)) for position, name in ((0, "pretrained"),
                                                                                 (1, "pretrained_backbone"))]
            old = [(name, value) for name, value in old if value is not None]
            if not old:
                continue
            if in_compatibility_code(analysis, call, versions_only=True):
                continue  # `if TORCHVISION_VERSION < version.parse("0.13"): resnet(pretrained=True)`: no `weights` there
            if old[0][0] == "pretrained" and old[0][1] in call.args and _weights_enum(old[0][1]):
                yield _positional_weights(analysis, call, key, old[0][1])
                continue
            names = " and ".join(f"`{name}=`" for name, _ in old)
            new = " and ".join(f"`{name.replace('pretrained', 'weights')}=`" for name, _ in old)
            yield TorchvisionIssue(
                call, f"{names} of `{key.rpartition('.')[2]}` {'are' if len(old) > 1 else 'is'} deprecated since torchvision 0.13 (it warns and is to "
                f"be removed): pass {new} with a weights enum, or None.",
                _weights_plan(analysis, call, key, old))


def _weights_enum(value: ast.AST) -> bool:
    """`VGG16_Weights.IMAGENET1K_V1`, `ResNet50_Weights.DEFAULT`: a weights enum member, which
    torchvision takes as `weights` when passed in the first place, not as the legacy flag."""
    return isinstance(value, ast.Attribute) and isinstance(value.value, (ast.Name, ast.Attribute)) \
        and (value.value.id if isinstance(value.value, ast.Name) else value.value.attr).endswith("_Weights")


def _positional_weights(analysis: "Analysis", call: ast.Call, key: str, value: ast.AST) -> TorchvisionIssue:
    plan = None
    if len(call.args) == 1:  # as a keyword it must not come before other positional arguments
        plan = Plan("Pass the weights as `weights=`", edits=[(span_of(value), f"weights={segment(analysis, value)}")], at=call)
    return TorchvisionIssue(
        call, f"`{key.rpartition('.')[2]}` gets its weights enum as a positional argument, deprecated since "
        "torchvision 0.13 (it warns and is to be removed): pass it as `weights=`.", plan)


def _weights_plan(analysis: "Analysis", call: ast.Call, key: str, old: list) -> Plan | None:
    weights, backbone = WEIGHTS[key]
    subpackage = key.rpartition(".")[0]
    edits, package = [], None
    positional = [value for _, value in old if value in call.args]
    if positional and len(call.args) > len(positional):
        return None  # turning them into keywords would put a positional argument after a keyword
    for name, value in old:
        if not isinstance(value, ast.Constant) or value.value not in (True, False):
            return None
        enum = weights if name == "pretrained" else backbone
        if value.value and not enum:
            return None
        if value.value:
            where = f"torchvision.models.{subpackage}." if name == "pretrained" and subpackage else "torchvision.models."
            text, needed = spelled(analysis, where + enum, call)
            package = package or needed
        else:
            text = "None"
        new_name = name.replace("pretrained", "weights")
        kw = keyword(call, name)
        target = kw if kw is not None else value
        edits.append((span_of(target), f"{new_name}={text}"))
    title = "Replace `pretrained` with `weights`" if len(old) == 1 and old[0][0] == "pretrained" else \
        "Replace the `pretrained` arguments with `weights`"
    return Plan(title, edits=edits, import_module=package, at=call)


def _to_tensor(analysis: "Analysis") -> Iterator[TorchvisionIssue]:
    for use in api_uses(analysis, TO_TENSOR):
        if use.kind == "import" and _defined_by_the_file(analysis, use.imported.alias.asname or use.imported.alias.name):
            continue  # shadowed by the file's own `def ToTensor(): return Compose([ToImage(), ...])`
        yield TorchvisionIssue(
            use.node, "`transforms.v2.ToTensor` is deprecated since torchvision 0.16: use "
            "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`.", None)


def _defined_by_the_file(analysis: "Analysis", name: str) -> bool:
    """A top-level `def` or `class` of the whole file binds `name`: the imported
    `v2.ToTensor` is shadowed (a notebook importing it, then defining its own `ToTensor`
    that builds the replacement), so reads of the name are the file's, and importing the
    deprecated class constructs nothing."""
    return analysis.file_fact(("TL708 a top-level definition binds", name), lambda whole: any(
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name
        for statement in (whole.tree.body if whole.tree is not None else [])))


def _import_style(analysis: "Analysis") -> Iterator[TorchvisionIssue]:
    for imported in imported_names(analysis):
        alias, stmt = imported.alias, imported.stmt
        if not isinstance(stmt, ast.Import) or alias.name not in (f"torchvision.{m}" for m in SUBMODULES):
            continue
        module = alias.name.partition(".")[2]
        if alias.asname != module:
            continue
        plan = None
        if len(stmt.names) == 1:
            plan = Plan(f"Replace with `from torchvision import {module}`",
                        edits=[(span_of(stmt), f"from torchvision import {module}")])
        yield TorchvisionIssue(
            alias, f"`import torchvision.{module} as {module}` is `from torchvision import {module}` written the long "
            "way.", plan, severity="hint")


@register
class TorchvisionDeprecated(Rule):
    """## What it does
    Flags `pretrained=` and `pretrained_backbone=` of torchvision model builders
    (`resnet50(pretrained=True)`, through any import), a weights enum passed in the first
    place (`vgg16(VGG16_Weights.DEFAULT)`: torchvision takes it as `weights`, warning about the
    positional argument; the fix makes it `weights=`), the deprecated
    `torchvision.transforms.v2.ToTensor`, and (as a hint)
    `import torchvision.models as models`, which is `from torchvision import models` (so too
    for `datasets` and `transforms`). A `pretrained=` in a branch of a version test
    (`if TORCHVISION_VERSION < version.parse("0.13"):`) is left alone: that branch may run
    where `weights=` does not exist.

    ## Why is this bad
    `pretrained` is deprecated since torchvision 0.13 in favour of `weights=`, which says
    which weights are loaded (and with which preprocessing); `v2.ToTensor` is deprecated
    because it mixes converting and rescaling.

    ## Example
    ```python
    model = torchvision.models.resnet50(pretrained=True)
    ```

    ## Use instead
    ```python
    model = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1)
    ```

    ## Fix safety
    Safe where the argument is the literal `True` or `False`: `True` becomes the weights
    `pretrained=True` loaded (`IMAGENET1K_V1` and so on), `False` becomes `None`.
    """

    code = "TL708"
    name = "torchvision-deprecated"
    severity = "warning"
    fix_safety = "safe"
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for issue in torchvision_issues(analysis):
            finding = self.finding(issue.node, issue.message, issue.plan.title if issue.plan else None)
            if issue.severity:
                finding.severity = issue.severity
            yield finding
