"""Shape rules of torch functions and tensor methods, one module per family.

`METHODS[name](call, tensor)` answers `tensor.name(*args)`; `FUNCTIONS[qualname](call)`
answers `torch.name(...)`, `torch.nn.functional.name(...)`, ...  Each rule is registered
under its literal name (`registry.method` / `registry.function`), so `grep -rn '"conv2d"'
server/shapes` finds it.  A name missing here gives an unknown result.

    registry        the two tables, `Call`, the registering decorators
    arguments       reading arguments as ints, dims, sizes, dtypes, tensors
    elementwise     same shape, casts, broadcasting operations and comparisons, `where`
    tensor_queries  `size()`, `dim()`, `numel()`, `item()`, results that are no tensor
    view            view/reshape, flatten, permute/transpose, squeeze, expand/repeat
    reductions      sum/mean/max/argmax/std/norm/topk/sort
    matmul          matmul/mm/bmm/einsum/...
    indexing        gather/index_select/masked_select/nonzero
    cat_stack       cat/stack, split/chunk/unbind
    factories       zeros/ones/rand/arange/tensor/*_like/new_*
    wrappers        nn.Parameter, torch.compile, DataParallel
    conv_pool       F.conv*, F.*pool* (their arithmetic: `torch_lsp.shapes.layers.conv_pool`)
    nn_functional   the rest of torch.nn.functional
    math_functions  Python's `math` on sizes
"""
from torch_lsp.shapes.functions import (  # noqa: F401  (importing a family registers its rules)
    cat_stack, conv_pool, elementwise, factories, indexing, matmul, nn_functional, reductions, tensor_queries,
    view, wrappers,
)
from torch_lsp.shapes.functions.arguments import dim_of, int_of, items_of, tensor_of
from torch_lsp.shapes.functions.math_functions import math_result
from torch_lsp.shapes.functions.registry import FUNCTIONS, METHODS, Call

__all__ = ["FUNCTIONS", "METHODS", "Call", "dim_of", "int_of", "items_of", "math_result", "tensor_of"]
