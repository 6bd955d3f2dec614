"""How many parameters a module has, counted as `sum(p.numel() for p in m.parameters())`
counts them: layers by their constructor arguments, instances of the file's classes by
their attributes (tensors assigned from `nn.Parameter`, submodules, `ModuleList`s and
`ModuleDict`s), a tied weight once.  An instance one of whose called attributes
(`self.backbone(x)`) holds a module nothing is known of has no known total, and
`unknown_parameters_reason` says which attribute that is."""
from __future__ import annotations

import ast

from torch_lsp import memos
from torch_lsp.shapes.dims import Dim, known_sum, product
from torch_lsp.shapes.values import UNKNOWN, DictValue, Instance, Layer, ListValue, Opaque, Tensor, Value
from torch_lsp.syntax_nodes import walk_nodes

_CALLED_ATTRIBUTES: dict[ast.ClassDef, tuple[str, ...]] = {}
memos.register(_CALLED_ATTRIBUTES.clear)


def module_parameters(module: Value, depth: int = 0) -> Dim | None:
    """Parameter count of a layer or of an instance of the file's own module classes."""
    if depth > 16:
        return None
    if isinstance(module, Layer):
        if module.kind.name == "Sequential":
            return known_sum(module_parameters(c, depth + 1) for c in module.children)
        if module.kind.name in ("TransformerEncoder", "TransformerDecoder"):
            layers_count = module.get("num_layers")
            inner = module_parameters(module.children[0], depth + 1) if module.children else None
            if isinstance(layers_count, Dim) and inner is not None:
                return inner * layers_count
            return None
        return module.kind.param_count(module)
    if isinstance(module, Instance):
        counts = []
        for name, value in module.attrs.items():
            if name in module.parameters:  # a parameter of unknown shape leaves the count unknown
                counts.append(product(value.dims) if isinstance(value, Tensor) and value.fully_known else None)
            elif isinstance(value, (Layer, Instance, ListValue, DictValue)):
                counts.append(module_parameters(value, depth + 1))
        counts.extend(-tied if tied is not None else None for tied in module.tied)
        if unknown_submodule(module) is not None:
            return None
        return known_sum(counts)
    if isinstance(module, ListValue):
        if module.kind != "ModuleList":
            return Dim()
        if module.exact:
            return known_sum(module_parameters(v, depth + 1) for v in module.items)
        each = module_parameters(module.element, depth + 1)
        length = getattr(module, "length", None)
        return each * length if each is not None and length is not None else None
    if isinstance(module, DictValue):
        if module.kind != "ModuleDict":
            return Dim()
        return known_sum(module_parameters(v, depth + 1) for v in module.items.values()) if module.exact else None
    return Dim()


def unknown_parameters_reason(module: Value, depth: int = 0) -> str | None:
    """Why the module's total is unknown: the first attribute whose count is not known."""
    if not isinstance(module, Instance) or depth > 8:
        return None
    unknown = unknown_submodule(module)
    if unknown is not None:
        return f"`self.{unknown}` is called as a module, but what it holds is not known here"
    for name, value in module.attrs.items():
        if isinstance(value, Tensor) and name in module.parameters and not value.fully_known:
            return f"the shape of the parameter `self.{name}` is not fully known"
        if isinstance(value, (Layer, Instance, ListValue, DictValue)) and module_parameters(value) is None:
            inner = unknown_parameters_reason(value, depth + 1)
            if inner:
                return f"in `self.{name}`: {inner}"
            return f"the parameters of `self.{name}` are not known (its sizes or its length are not known here)"
    if None in module.tied:
        return "a tied weight's size is not known"
    return None


def unknown_submodule(module: Instance) -> str | None:
    """An attribute the class calls (`self.backbone(x)`) that holds nothing known."""
    called = _called_attributes(module.cls.node)
    for name in called:
        value = module.attrs.get(name)
        if value is UNKNOWN or isinstance(value, Opaque):
            return name
    return None


def _called_attributes(cls: ast.ClassDef) -> tuple[str, ...]:
    """The attributes the class calls, once each, in source order: the first unknown one is
    the one a hover names, the same in every run (a set's order changes with the hash seed)."""
    found = _CALLED_ATTRIBUTES.get(cls)
    if found is None:
        calls = [node for node in walk_nodes(cls) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                 and node.func.value.id == "self"]
        calls.sort(key=lambda node: (node.lineno, node.col_offset))
        found = tuple(dict.fromkeys(node.func.attr for node in calls))
        if len(_CALLED_ATTRIBUTES) > 4096:
            _CALLED_ATTRIBUTES.clear()
        _CALLED_ATTRIBUTES[cls] = found
    return found
