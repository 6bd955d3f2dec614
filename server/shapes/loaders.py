"""Datasets and data loaders: the shape of the batches a `DataLoader` yields.

`for x, y in loader` where the loader is built in the workspace from a `TensorDataset`
or from a `Dataset` class whose `__getitem__` the interpreter can run, with the default
collate: each item's tensors get a leading batch dim, Python ints become a `long` tensor
`[batch]`, tuples, lists and dicts are collated item by item (as `default_collate` does).

The batch dim is the loader's `batch_size` (a number, or the name of what holds it:
`batch_size`) when every batch has that size: with `drop_last=True`, or when the
dataset's length is known and divisible by it.  Otherwise the last batch is smaller and
the dim is unknown.  A custom `collate_fn` or `batch_sampler` makes the batch unknown.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch_lsp.shapes import functions as fn
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.values import (
    UNKNOWN, Bool, DictValue, FunctionRef, Instance, Int, ListValue, Num, Origin, Tensor, TupleValue, Value,
)

if TYPE_CHECKING:
    from torch_lsp.shapes.calls import CallSite
    from torch_lsp.shapes.frame import Frame

TENSOR_DATASETS = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
DATA_LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
# DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, ...)
BATCH_SIZE_POSITION = 1
BATCH_CHANGING_OPTIONS = ("collate_fn", "batch_sampler")
MAX_COLLATE_DEPTH = 4


class DatasetValue(Value):
    """A dataset whose items have a known structure (`item`) and maybe a known length."""

    __slots__ = ("item", "length")

    def __init__(self, item: Value, length: Dim | None):
        self.item = item
        self.length = length

    @property
    def key(self) -> Any:
        return ("dataset", self.item.key, self.length)


class LoaderValue(Value):
    """A data loader: what one batch is."""

    __slots__ = ("batch",)

    def __init__(self, batch: Value):
        self.batch = batch

    @property
    def key(self) -> Any:
        return ("loader", self.batch.key)


def tensor_dataset(args: list[Value]) -> Value:
    """`TensorDataset(x, y)`: items are `(x[i], y[i])`, as many as `x` has rows."""
    if not args or not all(isinstance(a, Tensor) and a.rank is not None and a.rank >= 1 for a in args):
        return DatasetValue(UNKNOWN, None) if args else UNKNOWN
    rows = [a.dims[0] for a in args]
    length = rows[0] if all(r is not None and r == rows[0] for r in rows) else None
    item = TupleValue(tuple(Tensor(a.dims[1:], False, a.dtype, a.origin) for a in args))
    return DatasetValue(item, length)


def dataset_of(frame: "Frame", value: Value, site: "CallSite") -> DatasetValue | None:
    """The dataset a loader reads: a `TensorDataset`, or an instance of a class of the
    workspace with a `__getitem__` (run with an unknown index)."""
    if isinstance(value, DatasetValue):
        return value
    if not isinstance(value, Instance):
        return None
    engine = frame.engine
    getitem = engine.lookup_method(value.cls, "__getitem__")
    if getitem is None:
        return None
    called = engine.call_function(FunctionRef(getitem.node, getitem.scope, value, getitem.owner), [Int(None)], {},
                                  frame, site.node)
    item = called.result if called is not None else UNKNOWN
    length = None
    size = engine.lookup_method(value.cls, "__len__")
    if size is not None:
        measured = engine.call_function(FunctionRef(size.node, size.scope, value, size.owner), [], {}, frame,
                                        site.node)
        if measured is not None and isinstance(measured.result, Int):
            length = measured.result.dim
    return DatasetValue(item, length)


def data_loader(frame: "Frame", args: list[Value], kwargs: dict[str, Value], site: "CallSite") -> Value:
    """`DataLoader(dataset, batch_size=..., drop_last=...)`: a loader whose batches are known
    when the dataset's items are."""
    if any(name in kwargs for name in BATCH_CHANGING_OPTIONS) or len(args) > BATCH_SIZE_POSITION + 3:
        return LoaderValue(UNKNOWN)
    source = args[0] if args else kwargs.get("dataset")
    dataset = dataset_of(frame, source, site) if source is not None else None
    if dataset is None or dataset.item is UNKNOWN:
        return LoaderValue(UNKNOWN)
    given = args[BATCH_SIZE_POSITION] if len(args) > BATCH_SIZE_POSITION else kwargs.get("batch_size")
    if given is None:
        batch_size: Dim | None = Dim.const(1)
    else:
        batch_size = fn.dim_of(given)
    if batch_size is None:
        return LoaderValue(collate(dataset.item, None, _origin(frame, site)))
    drop_last = kwargs.get("drop_last")
    every_batch_full = isinstance(drop_last, Bool) and drop_last.value is True
    if not every_batch_full and dataset.length is not None:
        remainder = dataset.length.mod(batch_size)
        every_batch_full = remainder is not None and remainder.as_int() == 0
    return LoaderValue(collate(dataset.item, batch_size if every_batch_full else None, _origin(frame, site)))


def collate(item: Value, batch: Dim | None, origin: Origin | None, depth: int = 0) -> Value:
    """What `default_collate` makes of a list of items like `item`, `batch` of them."""
    if depth > MAX_COLLATE_DEPTH:
        return UNKNOWN
    if isinstance(item, Tensor):
        if item.rank is None:
            return Tensor((), True, item.dtype, origin)
        return Tensor((batch, *item.dims), False, item.dtype, origin)
    if isinstance(item, Int):
        return Tensor((batch,), False, "long", origin)
    if isinstance(item, Num):
        return Tensor((batch,), False, None, origin)
    if isinstance(item, TupleValue):
        return TupleValue(tuple(collate(v, batch, origin, depth + 1) for v in item.items), item.names)
    if isinstance(item, ListValue) and item.exact:
        return TupleValue(tuple(collate(v, batch, origin, depth + 1) for v in item.items))
    if isinstance(item, DictValue) and item.exact:
        return DictValue({k: collate(v, batch, origin, depth + 1) for k, v in item.items.items()})
    return UNKNOWN


def _origin(frame: "Frame", site: "CallSite") -> Origin:
    scope = frame.scope
    node = site.node
    return scope.origin(lambda: f"a batch of `{scope.text(node, 60)}`", node.lineno)
