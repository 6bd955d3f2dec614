"""TL106 factory-without-device: flags a tensor factory (`torch.zeros`, `torch.arange`,
`torch.eye`, `torch.tensor([...])`, …) called without `device=` inside an `nn.Module.forward`
that receives tensors.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis, FunctionInfo, under_cpu_guard
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.roles import class_attribute_roles, is_config_number, local_module_classes
from torch_lsp.syntax_nodes import call_name, dotted, has_star_args, keyword, walk_nodes


_FACTORIES = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "eye", "linspace",
    "logspace", "tensor",
}


@register
class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Flags a tensor factory (`torch.zeros`, `torch.arange`, `torch.eye`, `torch.tensor([...])`,
    …) called without `device=` inside an `nn.Module.forward` that receives tensors.
    A 0-d tensor (`torch.rand([])`, `torch.tensor(2.0)`) is not flagged: PyTorch moves a 0-d
    CPU tensor to the GPU by itself. Neither is a tensor that only becomes a Python number
    (`torch.rand(1).item()`), a one-element draw compared only to decide a branch
    (`if torch.rand(1) < p:`), nor a mask compared only with plain numbers and used as an index
    (`x[:, torch.rand(n) < self.config.keep]`), nor one whose only use is reading its
    metadata (`torch.tensor([0.0]).dtype`), nor one moved right away, also through a chain
    of its own methods (`torch.arange(n).unsqueeze(0).repeat(b, 1).to(self.device)`, or an
    in-place random fill with numbers, `torch.empty(f.shape).bernoulli_(1 - p).to(f.device)`) or by
    re-binding its name before any other use (`zeros = zeros.cuda()` under `if x.is_cuda:`;
    reads after the name is bound anew see another tensor), nor one in arithmetic with a tensor
    the code brought to the CPU itself (`grid.cpu() * torch.tensor([1, m, m])`). A
    tensor passed inside a tuple to a submodule (`self.lstm(x, (h, c))`) meets that
    submodule's inputs, so it is flagged like one passed directly. Nor is a factory on the
    CPU-only path, the `else` of `if torch.cuda.is_available():` (whose branch moves it).

    ## Why is this bad
    The new tensor is created on the CPU while the module's inputs live on the GPU, so the
    first operation mixing them fails ("Expected all tensors to be on the same device"), or
    a silent host-to-device copy happens every forward pass.

    ## Example
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1))
        return x + self.pos_emb(positions)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        return x + self.pos_emb(positions)
    ```
    """

    code = "TL106"
    name = "factory-without-device"
    severity = "warning"
    fix_safety = "safe"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        module_classes = set(local_module_classes(analysis).values())
        for function in analysis.functions:
            if function.name != "forward" or function.class_node not in module_classes:
                continue
            inputs = [p for p in function.params[1:] if p not in ("args", "kwargs")]
            if not inputs:
                continue
            for call in function.calls:
                qualname = analysis.call_qualname(call) or ""
                if not qualname.startswith("torch.") or qualname.count(".") != 1:
                    continue
                factory = qualname.split(".")[1]
                if factory not in _FACTORIES or has_star_args(call):
                    continue
                if keyword(call, "device") or keyword(call, "out"):
                    continue
                if factory == "tensor" and not (call.args and isinstance(call.args[0], (ast.List, ast.Tuple))):
                    continue  # 0-d CPU tensors mix fine with GPU tensors
                if _zero_dim_factory(factory, call):
                    continue  # `torch.rand([])`: the same, a 0-d CPU tensor mixes with GPU tensors
                if self._moved_right_away(analysis, call) or self._moved_before_use(analysis, function, call):
                    continue
                if under_cpu_guard(analysis, call):
                    continue  # the `else` of `if torch.cuda.is_available():`: the inputs are on the CPU
                if not _meets_other_values(analysis, function, call):
                    continue
                if _single_element(factory, call) and _only_a_truth_test(analysis, call):
                    continue  # `if torch.rand(1) < p:` draws a coin; what it is compared with is unknown
                if _single_element(factory, call) and _indexed_to_zero_dim(analysis, call):
                    continue  # `torch.randint(0, n, (1,))[0]` is 0-d
                message = (
                    f"`{qualname.replace('torch.', 'torch.', 1)}(...)` inside `forward` creates a CPU tensor while "
                    f"the inputs may be on the GPU. Pass `device={inputs[0]}.device`."
                )
                yield self.finding(call, message, f"Add `device={inputs[0]}.device`", data={"input": inputs[0]})

    def _moved_right_away(self, analysis: Analysis, call: ast.Call) -> bool:
        """The new tensor, or what a chain of its own methods makes of it (`torch.arange(n)
        .unsqueeze(0).repeat(b, 1).to(self.device)`), is moved before anything else sees it."""
        while True:
            parent = analysis.parents.get(call)
            holder = analysis.parents.get(parent) if isinstance(parent, ast.Attribute) else None
            if self._moved_here(analysis, call):
                return True
            keeps_device = parent.attr in _SAME_DEVICE_METHODS if isinstance(parent, ast.Attribute) else False
            if not keeps_device and isinstance(parent, ast.Attribute) and parent.attr in _RANDOM_FILLS:
                keeps_device = isinstance(holder, ast.Call) and _arguments_hold_no_tensor(holder)
            if not (isinstance(holder, ast.Call) and holder.func is parent and keeps_device):
                return False
            call = holder

    def _moved_before_use(self, analysis: Analysis, function: FunctionInfo, call: ast.Call) -> bool:
        """`zeros = torch.zeros(n)`, then `zeros = zeros.cuda()` (also under `if x.is_cuda:`)
        before anything else reads `zeros`: the code moves the tensor itself."""
        statement = analysis.parents.get(call)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            return False
        name = statement.targets[0].id
        start = (statement.lineno, statement.col_offset)
        reads = sorted((n for n in walk_nodes(function.node) if isinstance(n, ast.Name) and n.id == name
                        and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > start),
                       key=lambda n: (n.lineno, n.col_offset))
        if not reads or not self._moved_here(analysis, reads[0]):
            return False
        rebinding = analysis.statement_of(reads[0])
        return isinstance(rebinding, ast.Assign) and rebinding.value is analysis.parents.get(analysis.parents.get(reads[0])) \
            and [dotted(t) for t in rebinding.targets] == [name]

    def _moved_here(self, analysis: Analysis, call: ast.Call) -> bool:
        parent = analysis.parents.get(call)
        if isinstance(parent, ast.Attribute) and parent.attr in ("to", "cuda", "type_as", "to_device"):
            return True
        if isinstance(parent, ast.Attribute) and parent.attr == "type":  # `.type(other.type())`: its device too
            holder = analysis.parents.get(parent)
            if isinstance(holder, ast.Call) and holder.func is parent and len(holder.args) == 1:
                argument = holder.args[0]
                if isinstance(argument, ast.Call) and call_name(argument) == "type" and not argument.args:
                    return True
        if isinstance(parent, ast.Call) and call_name(parent) in ("register_buffer", "Parameter", "to"):
            return True
        return False


def _meets_other_values(analysis: Analysis, function: FunctionInfo, call: ast.Call) -> bool:
    """The new tensor is used in arithmetic, or compared with something that may be a
    tensor (directly, or through the name it is bound to).

    A CPU tensor used only as an index (`x[:, torch.randperm(n)]`), turned into a Python
    number (`.item()`), or only compared with plain numbers (`torch.rand(n) < self.p`)
    never meets GPU data, so it is not what TL106 is about.
    """
    verdict, parent = _climb(analysis, function, call)
    if verdict is not None:
        return verdict
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        # Reads after the name is bound to the tensor moved (`mask = mask.to(x.device)`) or to
        # another value see another tensor; `pos = pos.unsqueeze(0)` keeps the CPU tensor.
        rebound = min((n.lineno for n in walk_nodes(function.node) if isinstance(n, ast.Name) and n.id == name
                       and isinstance(n.ctx, ast.Store) and n.lineno > parent.lineno
                       and _ends_the_tensor(analysis.parents.get(n), name)), default=None)
        for use in walk_nodes(function.node):
            if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load) \
                    and parent.lineno < use.lineno and (rebound is None or use.lineno <= rebound):
                holder = analysis.parents.get(use)
                if isinstance(holder, (ast.BinOp, ast.AugAssign)):
                    return True
                # A piece of it handed to a call that combines tensors (`torch.where(keep[:, None], x, y)`);
                # a piece in arithmetic (`coords[:, None] - coords[None, :]`, `int(w * r[0])`) is an index or a
                # number as often as not: not followed.
                subscripted = False
                while isinstance(holder, ast.Subscript) and holder.value is use:
                    use, holder, subscripted = holder, analysis.parents.get(holder), True
                # Pieces combined only with each other and numbers are still this CPU tensor
                # (`pos[None, :] - pos[:, None]`): a finding once that meets the module's state or
                # an input in arithmetic (`... * self.slopes`), not when it ends as an index.
                if subscripted and isinstance(holder, ast.BinOp) and _only_pieces_and_numbers(
                        analysis, function, holder, name) and _meets_module_state(analysis, function, holder):
                    return True
                if isinstance(holder, ast.Compare) and not subscripted:
                    if not _compared_to_numbers(analysis, function, holder, use):
                        return True
                    if _climb(analysis, function, holder)[0]:  # `mask == 0` is still a CPU tensor: where does it go?
                        return True
                while isinstance(holder, (ast.Tuple, ast.List, ast.keyword)):  # `self.lstm(x, (h, c))`, `mask=mask`
                    holder = analysis.parents.get(holder)
                if isinstance(holder, ast.Call) and use is not holder.func and (
                        _combines_tensors(analysis, holder) or _outer_with_module_state(analysis, function, holder, use)):
                    return True
    return False


def _only_pieces_and_numbers(analysis: Analysis, function: FunctionInfo, arithmetic: ast.BinOp, name: str) -> bool:
    """Both sides of the arithmetic are pieces of `name` (`pos[None, :]`) or plain numbers."""
    def piece_or_number(side: ast.AST) -> bool:
        while isinstance(side, ast.Subscript):
            side = side.value
        return (isinstance(side, ast.Name) and side.id == name) or _plain_number(analysis, function, side)
    return piece_or_number(arithmetic.left) and piece_or_number(arithmetic.right)


def _meets_module_state(analysis: Analysis, function: FunctionInfo, start: ast.AST) -> bool:
    """Up through arithmetic, negation and methods given no tensor (`.abs()`), `start` meets a
    buffer or parameter of the module or an input of `forward` (`* self.slopes[:, None]`), not
    only numbers (`+ self.window - 1`)."""
    node = start
    while True:
        parent = analysis.parents.get(node)
        if isinstance(parent, ast.BinOp):
            other = parent.right if parent.left is node else parent.left
            if not _plain_number(analysis, function, other):  # `+ self.window - 1` keeps it an index
                while isinstance(other, ast.Subscript):
                    other = other.value
                chain = dotted(other)
                if chain is not None and (chain.startswith("self.") or chain in function.params[1:]):
                    return True
        elif isinstance(parent, ast.Attribute):
            holder = analysis.parents.get(parent)
            if not (isinstance(holder, ast.Call) and holder.func is parent and _arguments_hold_no_tensor(holder)):
                return False
            parent = holder
        elif not isinstance(parent, ast.UnaryOp):
            return False
        node = parent


def _climb(analysis: Analysis, function: FunctionInfo, start: ast.AST) -> tuple[bool | None, ast.AST | None]:
    """Follow the new tensor up through its methods, indexing and comparisons with plain
    numbers: True once it meets other values (arithmetic, a comparison, a call that combines
    tensors), False once it becomes a Python number, else None with where it stopped."""
    node = start
    while True:
        parent = analysis.parents.get(node)
        if isinstance(parent, ast.BinOp):
            other = parent.right if parent.left is node else parent.left
            if _moved_to_cpu(other):
                return False, parent  # `grid.cpu() * torch.tensor([1, m, m])`: the code computes on the CPU on purpose
            if not _plain_number(analysis, function, other) and not _ends_as_number(analysis, parent):
                return True, parent
            # `lo + (hi - lo) * torch.rand(2)`: still a CPU tensor made of numbers only
        elif isinstance(parent, ast.Compare):
            if not _compared_to_numbers(analysis, function, parent, node):
                return True, parent
        elif isinstance(parent, ast.Attribute):
            holder = analysis.parents.get(parent)
            if parent.attr in ("item", "tolist") and isinstance(holder, ast.Call) and holder.func is parent:
                return False, parent
            if parent.attr in _METADATA:  # `torch.tensor([0.0]).dtype`: only its metadata is read
                return False, parent
        elif isinstance(parent, ast.Call) and parent.func is not node:
            if isinstance(parent.func, ast.Name) and parent.func.id in ("int", "float", "bool") and node in parent.args:
                return False, parent
            if _outer_with_module_state(analysis, function, parent, node):
                return True, parent
            if not _reshapes(analysis, parent, node):
                return (True if _combines_tensors(analysis, parent) else None), parent
        elif not (isinstance(parent, ast.Call) or (isinstance(parent, ast.Subscript) and parent.value is node)):
            return None, parent
        node = parent


def _ends_the_tensor(binding: ast.AST | None, name: str) -> bool:
    """`name = name.to(device)` (the tensor moved) or `name = <a value not made from it>`: after
    this binding the name holds no CPU tensor of the factory."""
    if not isinstance(binding, ast.Assign):
        return False
    reads = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                for n in walk_nodes(binding.value))
    moves = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("to", "cuda", "type_as", "to_device") for n in walk_nodes(binding.value))
    return moves or not reads


def _moved_to_cpu(expr: ast.AST) -> bool:
    """`image_grid_thw.cpu()`: a tensor the code itself brought to the CPU."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "cpu" \
        and not expr.args and not expr.keywords


def _ends_as_number(analysis: Analysis, arithmetic: ast.AST) -> bool:
    """The arithmetic (`orig_w * r[0]`) only feeds a Python number: `int(...)`, `float(...)`,
    `round(...)` or `.item()` of it, so the tensor never meets data on another device."""
    node, parent = arithmetic, analysis.parents.get(arithmetic)
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
        node, parent = parent, analysis.parents.get(parent)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in ("int", "float", "round") \
            and node in parent.args:
        return True
    return isinstance(parent, ast.Attribute) and parent.attr in ("item", "tolist")


def _compared_to_numbers(analysis: Analysis, function: FunctionInfo, compare: ast.Compare, node: ast.AST) -> bool:
    others = [e for e in (compare.left, *compare.comparators) if e is not node]
    return all(_plain_number(analysis, function, e) for e in others)


def _plain_number(analysis: Analysis, function: FunctionInfo, expr: ast.AST) -> bool:
    """A Python number for sure: a constant, a config value (`self.config.layerdrop`,
    `config.p`), or an attribute that the class only ever sets from those."""
    if isinstance(expr, ast.UnaryOp):
        return _plain_number(analysis, function, expr.operand)
    if isinstance(expr, ast.BinOp):
        return _plain_number(analysis, function, expr.left) and _plain_number(analysis, function, expr.right)
    if _size_read(expr):
        return True
    chain = dotted(expr)
    if chain is not None and chain.startswith("self."):
        parts = chain.split(".")
        if len(parts) == 2 and function.class_node is not None:
            return parts[1] in class_attribute_roles(analysis, function.class_node)["number"]
        return "config" in parts[1].lower()
    return is_config_number(expr)


def _size_read(expr: ast.AST) -> bool:
    """A size read as a Python int: `x.size(1)`, `x.shape[0]`, `x.numel()`, `x.dim()`, `len(x)`
    (faster-rcnn's `torch.arange(0, b) * gt_boxes.size(1)` is a CPU tensor times a number)."""
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape" \
            and not isinstance(expr.slice, ast.Slice)
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Name):
        return expr.func.id == "len" and len(expr.args) == 1
    name = call_name(expr)
    return (name == "size" and len(expr.args) == 1 and not expr.keywords) or (
        name in ("numel", "dim", "ndimension") and not expr.args)


_METADATA = {"dtype", "shape", "ndim", "layout", "is_cuda", "device"}
# Tensor methods whose result stays where the tensor is (and mixes with nothing else).
_SAME_DEVICE_METHODS = {
    "unsqueeze", "squeeze", "repeat", "expand", "view", "reshape", "flatten", "transpose", "permute", "t",
    "contiguous", "clone", "fill_", "zero_", "long", "float", "int", "bool", "half", "double", "byte",
    "flip", "triu", "tril", "triu_", "tril_", "fill_diagonal_",
    # These read only the other tensor's size (`torch.eye(n).expand_as(x)` stays on the CPU).
    "expand_as", "view_as", "reshape_as",
}
# In-place random fills, whose arguments are numbers (`.bernoulli_(1 - self.zoneout)`): the
# tensor stays where it is, mixed with nothing.
_RANDOM_FILLS = {"bernoulli_", "uniform_", "normal_", "random_", "exponential_", "geometric_", "cauchy_",
                 "log_normal_"}


def _arguments_hold_no_tensor(call: ast.Call) -> bool:
    """Every argument is arithmetic over constants, names and attributes (`1 - self.p`), not
    a call or an index that could give a tensor on another device."""
    return all(not isinstance(node, (ast.Call, ast.Subscript))
               for argument in [*call.args, *(k.value for k in call.keywords)] for node in walk_nodes(argument))


_SIZED_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn"}  # size first (`full` then its fill value)


def _size_argument(factory: str, call: ast.Call) -> list[ast.AST] | None:
    """The size a sized factory is given, as a list of dim expressions; None when unsure."""
    if factory not in _SIZED_FACTORIES and factory != "randint":
        return None
    size = keyword(call, "size")
    if size is not None:
        shape = size.value
    elif factory == "randint":  # `randint(high, size)` or `randint(low, high, size)`
        if len(call.args) not in (2, 3):
            return None
        shape = call.args[-1]
    elif factory == "full":
        if len(call.args) != 2:
            return None
        shape = call.args[0]
    elif len(call.args) == 1 and isinstance(call.args[0], (ast.List, ast.Tuple)):
        shape = call.args[0]
    else:
        return list(call.args) if call.args else None
    return list(shape.elts) if isinstance(shape, (ast.List, ast.Tuple)) else None


def _zero_dim_factory(factory: str, call: ast.Call) -> bool:
    """`torch.rand([])`, `torch.zeros(())`, `torch.full((), v)`: a 0-d tensor."""
    return _size_argument(factory, call) == []


def _single_element(factory: str, call: ast.Call) -> bool:
    """`torch.rand(1)`, `torch.rand([1])`, or a 0-d factory."""
    size = _size_argument(factory, call)
    return size is not None and all(isinstance(d, ast.Constant) and d.value == 1 for d in size)


def _indexed_to_zero_dim(analysis: Analysis, call: ast.Call) -> bool:
    parent = analysis.parents.get(call)
    return isinstance(parent, ast.Subscript) and parent.value is call and isinstance(parent.slice, ast.Constant) \
        and isinstance(parent.slice.value, int)


def _only_a_truth_test(analysis: Analysis, call: ast.Call) -> bool:
    """The call sits directly in a comparison whose result only decides a branch
    (`if torch.rand(1) < p:`, `skip = self.training and torch.rand(1) > p`)."""
    compare = analysis.parents.get(call)
    if not isinstance(compare, ast.Compare):
        return False
    condition, holder = compare, analysis.parents.get(compare)
    while isinstance(holder, ast.BoolOp) or (isinstance(holder, ast.UnaryOp) and isinstance(holder.op, ast.Not)):
        condition, holder = holder, analysis.parents.get(holder)
    return isinstance(holder, (ast.If, ast.While, ast.IfExp, ast.Assert)) and holder.test is condition


# torch functions whose result is their first argument's values rearranged or mapped one by one:
# on the device of that argument, so the new tensor goes on through them (`torch.triu(torch.full(...))`).
_PASSING_THROUGH = {"triu", "tril", "flatten", "reshape", "transpose", "t", "flip", "roll", "exp", "log", "sqrt",
                    "abs", "sin", "cos", "sigmoid", "tanh", "cumsum", "cumprod", "diag", "outer"}


def _outer_with_module_state(analysis: Analysis, function: FunctionInfo, call: ast.Call, node: ast.AST) -> bool:
    """`torch.outer(t, self.inv_freq)`: the new tensor multiplied with a buffer or parameter of
    the module (or an input of `forward`), which lives where the module does; with another new
    tensor (`torch.outer(t, torch.arange(n))`) it stays on the CPU and goes on."""
    if analysis.call_qualname(call) not in ("torch.outer", "torch.ger") or len(call.args) != 2 or node not in call.args:
        return False
    other = call.args[1] if call.args[0] is node else call.args[0]
    chain = dotted(other)
    return chain is not None and (chain.startswith("self.") or chain in function.params[1:])


def _reshapes(analysis: Analysis, call: ast.Call, node: ast.AST) -> bool:
    qualname = analysis.call_qualname(call) or ""
    return (qualname.startswith("torch.") and qualname.count(".") == 1 and qualname[6:] in _PASSING_THROUGH
            and bool(call.args) and call.args[0] is node)


_COMBINING = {"cat", "stack", "where", "matmul", "bmm", "mm", "einsum", "add", "mul", "masked_fill", "gather",
              "embedding"}


def _combines_tensors(analysis: Analysis, call: ast.Call) -> bool:
    """A submodule call (`self.emb(ids)`) or a torch op that mixes its tensor arguments."""
    func = call.func
    root = func.value if isinstance(func, ast.Attribute) else None
    while isinstance(root, (ast.Attribute, ast.Subscript)):  # `self.transformer.wpe(pos)`, `self.blocks[0](x)`
        root = root.value
    if isinstance(root, ast.Name) and root.id == "self":
        return True
    qualname = analysis.call_qualname(call)
    if qualname is None:  # a tensor method: `scores.masked_fill(mask == 0, ...)` meets `scores`
        return isinstance(func, ast.Attribute) and func.attr in _COMBINING
    return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _COMBINING
