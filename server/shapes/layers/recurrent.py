"""Recurrent layers: `nn.RNN`, `nn.GRU`, `nn.LSTM` and their cells."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.kinds import (
    REQUIRED, LayerKind, Site, dim_param, flag, input_tensor, mismatch, register, text, wrong_last_dim,
)
from torch_lsp.shapes.ops import ONE, surely_differ
from torch_lsp.shapes.values import UNKNOWN, Layer, Tensor, TupleValue, Value


def _rnn_kind(name: str, gates: int) -> LayerKind:
    if name == "RNN":
        signature = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", ONE),
                     ("nonlinearity", "tanh"), ("bias", True), ("batch_first", False), ("dropout", 0.0),
                     ("bidirectional", False))
    else:
        signature = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", ONE), ("bias", True),
                     ("batch_first", False), ("dropout", 0.0), ("bidirectional", False), ("proj_size", Dim()))

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        layers, bidirectional = dim_param(layer, "num_layers"), flag(layer, "bidirectional")
        batch_first = flag(layer, "batch_first")
        proj = layer.get("proj_size", Dim())
        if wrong_last_dim(site, layer, x, input_size):
            return UNKNOWN
        if x.rank not in (2, 3, None) or bidirectional is None or batch_first is None or not isinstance(proj, Dim):
            return UNKNOWN
        directions = Dim.const(2 if bidirectional else 1)
        out_size = hidden if proj.as_int() == 0 else proj
        origin = site.layer_origin(layer)
        features = directions * out_size if out_size is not None else None
        if x.rank is None:  # batched or not, the output ends in the features (`2*hidden` bidirectional)
            return TupleValue((Tensor((features,), True, x.dtype, origin), UNKNOWN))
        state_count = directions * layers if layers is not None else None
        if x.rank == 2:
            output = Tensor((x.dims[0], features), False, x.dtype, origin)
            h = Tensor((state_count, out_size), False, x.dtype, origin)
            c = Tensor((state_count, hidden), False, x.dtype, origin)
        else:
            batch = x.dims[0] if batch_first else x.dims[1]
            time = x.dims[1] if batch_first else x.dims[0]
            output = Tensor((batch, time, features) if batch_first else (time, batch, features), False, x.dtype, origin)
            h = Tensor((state_count, batch, out_size), False, x.dtype, origin)
            c = Tensor((state_count, batch, hidden), False, x.dtype, origin)
        if _wrong_initial_state(site, layer, args[1] if len(args) > 1 else kwargs.get("hx"), h, c):
            return UNKNOWN
        state: Value = TupleValue((h, c)) if name == "LSTM" else h
        return TupleValue((output, state))

    def _wrong_initial_state(site: Site, layer: Layer, given: Value | None, h: Tensor, c: Tensor) -> bool:
        """Report an initial state of another shape than the state the layer returns (torch
        checks it exactly: `num_layers * num_directions` first, a bidirectional layer's two)."""
        if given is None:
            return False
        pairs = [(given, h)] if name != "LSTM" else (
            list(zip(given.items, (h, c))) if isinstance(given, TupleValue) and len(given.items) == 2 else [])
        for state, expected in pairs:
            if isinstance(state, Tensor) and state.rank == expected.rank and any(
                    surely_differ(a, b) for a, b in zip(state.dims, expected.dims)):
                mismatch(site, layer, f"an initial state of {expected.render()}", state)
                return True
        return False

    def count(layer: Layer) -> Dim | None:
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        layers, bidirectional = dim_param(layer, "num_layers"), flag(layer, "bidirectional")
        proj = layer.get("proj_size", Dim())
        if None in (input_size, hidden, layers, bidirectional) or proj != Dim() or layers.as_int() is None:
            return None
        directions = 2 if bidirectional else 1
        bias = Dim.const(2) * hidden if layer.get("bias") is not False else Dim()
        total = Dim()
        for index in range(layers.as_int()):
            width = input_size if index == 0 else hidden.scale(directions)
            per_direction = (hidden * width + hidden * hidden + bias).scale(gates)
            total = total + per_direction.scale(directions)
        return total

    def describe_rnn(layer: Layer) -> str:
        parts = [f"{text(layer.get('input_size'))} → {text(layer.get('hidden_size'))}"]
        if layer.get("num_layers") != ONE:
            parts.append(f"layers {text(layer.get('num_layers'))}")
        if layer.get("bidirectional") is True:
            parts.append("bidirectional")
        if layer.get("batch_first") is True:
            parts.append("batch_first")
        return f"{name}({', '.join(parts)})"

    return register(LayerKind(name, signature, forward, describe_rnn, count, lambda l: {},
                              {"input_size": "input_size", "hidden_size": "hidden_size", "num_layers": "num_layers"}))


_rnn_kind("RNN", 1)
_rnn_kind("GRU", 3)
_rnn_kind("LSTM", 4)


def _cell_kind(name: str, gates: int) -> None:
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        if wrong_last_dim(site, layer, x, input_size):
            return UNKNOWN
        if x.rank not in (1, 2):
            return UNKNOWN
        origin = site.layer_origin(layer)
        h = Tensor(x.dims[:-1] + (hidden,), False, x.dtype, origin)
        return TupleValue((h, h)) if name == "LSTMCell" else h

    register(LayerKind(
        name, (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("bias", True)), forward,
        lambda l: f"{name}({text(l.get('input_size'))} → {text(l.get('hidden_size'))})",
        lambda l: (lambda i, h: None if None in (i, h) else (h * i + h * h + (h.scale(2) if l.get("bias") is not False
                                                                                 else Dim())).scale(gates))(
            dim_param(l, "input_size"), dim_param(l, "hidden_size")),
    ))


_cell_kind("RNNCell", 1)
_cell_kind("GRUCell", 3)
_cell_kind("LSTMCell", 4)
