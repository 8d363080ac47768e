"""LSTMSequence-5, GRUSequence-5 and RNNSequence-5 -> ONNX LSTM / GRU / RNN, and the cells
LSTMCell-1/-4, GRUCell-3 and RNNCell-1 (one step) -> the same ops over a sequence of length 1.

onnxruntime implements only ``layout=0`` (time-major) for the three operators, so X and the
initial states are transposed in ([batch, seq, input] -> [seq, batch, input], [batch, dirs,
hidden] -> [dirs, batch, hidden]) and Y ([seq, dirs, batch, hidden] -> [batch, dirs, seq, hidden])
and the final states out. Weights keep OpenVINO's rows but ONNX's gate order: a plan lists, per
block of ``hidden_size`` rows of the result, which OpenVINO gate block it takes (``None``: zeros).
Constant weights, also the f16 Const -> Convert pattern of compressed IR, are rearranged in NumPy
at convert time (compressed ones stay f16, then Cast); run-time ones go through Split and Concat.
A cell's inputs lack the direction (and sequence) dims: X and the states are Unsqueezed to
[1, batch, ...], W/R/B get a leading num_directions of 1 the same way, and Ho/Co are Squeezed.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import from_numpy
from ..lowering.builder import Value
from ..lowering.registry import lowers

ONNX_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}  # the spec's whole list
FLOAT_TYPES = ("f16", "f32")  # onnxruntime's CPU LSTM/GRU/RNN refuse double at run time (1.32)


def _known(ctx, layer, index: int, v: Value) -> tuple[np.ndarray, bool] | None:
    """Values fixed in the file: a Const (-> False), or a Const -> Convert (-> True: keep the
    Const's narrow type, Cast at run time); None when known only at run time."""
    if v.is_const:
        return np.asarray(v.value()), False
    src, _ = ctx.graph.producer(layer, index)
    if src.type == "Convert" and src.sources:
        const, _ = ctx.graph.producer(src, 0)
        if const.type == "Const" and const.const is not None and const.const.etype.onnx is not None:
            return const.const.array(), True
    return None


def _rearrange(ctx, layer, index: int, v: Value, plan: list, hidden: int, gates: int, what: str,
               cell: bool = False):
    """Rows of ``v`` (axis 1, blocks of ``hidden``) in the order of ``plan``; a cell's ``v`` (no
    num_directions dim: axis 0) gets a leading dim of 1 first."""
    if plan == list(range(gates)):
        return ctx.b.Unsqueeze(v, ctx.b.const([0])) if cell else v
    known = _known(ctx, layer, index, v)
    if known is not None:
        array, compressed = known
        array = array[None] if cell else array
        zeros = np.zeros(array.shape[:1] + (hidden,) + array.shape[2:], array.dtype)
        blocks = [zeros if k is None else array[:, k * hidden:(k + 1) * hidden] for k in plan]
        out = np.concatenate(blocks, axis=1)
        hint = f"{layer.name}/{what}"
        if not compressed:
            return ctx.b.add_initializer(out.astype(v.etype.numpy), v.etype, hint)
        return ctx.b.Cast(ctx.b.add_initializer(out, from_numpy(out.dtype), hint), to=v.etype.onnx)
    name = ctx.b.Unsqueeze(v, ctx.b.const([0])) if cell else v
    parts = [name] if gates == 1 else ctx.b.Split(name, ctx.b.const([hidden] * gates), axis=1, _outputs=gates)
    zeros = None
    if None in plan:
        nd = 1 if cell else v.shape[0] if v.shape is not None else None
        if nd is None:
            raise UnsupportedLayer(layer, "a run-time bias needs a known num_directions dim")
        zeros = ctx.b.const(np.zeros((nd, hidden)), v.etype.numpy, "zeros")
    return ctx.b.Concat(*[zeros if k is None else parts[k] for k in plan], axis=1)


def _check_shape(layer, v: Value, want: tuple, what: str) -> None:
    if v.shape is not None and (len(v.shape) != len(want)
                                or any(a is not None and b is not None and a != b for a, b in zip(v.shape, want))):
        dims = ",".join("?" if d is None else str(d) for d in want)
        raise InvalidLayer(layer, f"{what} is {list(v.shape)}, the spec needs [{dims}]")


def _lengths(ctx, layer, v: Value, batch, seq):
    """sequence_lengths as ONNX's int32 sequence_lens (omitted when every row is full length)."""
    if not v.etype.is_integer:
        raise InvalidLayer(layer, f"sequence_lengths must be integers, not {v.etype.name}")
    if not v.is_const:
        return v if v.etype.name == "i32" else ctx.b.Cast(v, to=6)
    values = np.asarray(v.value()).astype(np.int64).reshape(-1)
    if seq is not None and ((values < 0) | (values > seq)).any():
        raise InvalidLayer(layer, f"sequence_lengths {values.tolist()} must lie in [0, {seq}]")
    if seq is not None and batch is not None and (values == seq).all():
        return None
    return ctx.b.const(values, np.int32, "sequence_lens")


def _state(ctx, v: Value):
    """[batch, dirs, hidden] -> ONNX's [dirs, batch, hidden] (omitted when constant zeros)."""
    if v.is_const:
        value = np.asarray(v.value())
        if not value.any() and not np.signbit(value).any():
            return None
        return ctx.b.add_initializer(np.asarray(value.transpose(1, 0, 2), order="C"), v.etype, "initial_state")
    return ctx.b.Transpose(v, perm=[1, 0, 2])


def _activations_clip(layer, acts: list) -> tuple[list, float]:
    """The activation names (the defaults ``acts`` when empty) and clip, checked."""
    names = [a.strip().lower() for a in (layer.attrs["activations"] or acts)]
    if len(names) != len(acts):
        raise InvalidLayer(layer, f"needs {len(acts)} activations, not {len(names)}: {names}")
    missing = [a for a in names if a not in ONNX_ACTIVATIONS]
    if missing:
        raise UnsupportedLayer(layer, f"activation(s) {', '.join(missing)} not supported (OpenVINO's "
                                      f"spec allows relu, sigmoid, tanh)")
    if layer.attrs.get("activations_alpha") or layer.attrs.get("activations_beta"):
        raise UnsupportedLayer(layer, "activations_alpha/beta are not supported (relu, sigmoid and tanh take none)")
    clip = float(layer.attrs["clip"])
    if clip < 0:
        raise InvalidLayer(layer, f"clip must not be negative, not {clip}")
    return names, clip


def _lower(ctx, layer, inputs, op: str, gates: int, bias_plan: list, plan: list, states: int, acts: list):
    x, init, lengths, w, r, b = inputs[0], inputs[1:1 + states], *inputs[1 + states:]
    etype = x.etype
    if etype is None or etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"element type {etype.name if etype else '?'} is not supported: "
                                      f"onnxruntime's {op} runs f16 and f32 only")
    ctx.onnx_type(layer, etype)
    for v in (*init, w, r, b):
        if v.etype != etype:
            raise InvalidLayer(layer, f"X is {etype.name} but another input is {v.etype.name}")
    hidden = int(layer.attrs["hidden_size"])
    if hidden < 1:
        raise InvalidLayer(layer, f"hidden_size must be positive, not {hidden}")
    direction = layer.attrs["direction"]
    nd = 2 if direction == "bidirectional" else 1
    batch, seq, size = x.shape if x.shape is not None and len(x.shape) == 3 else (None, None, None)
    _check_shape(layer, x, (None, None, None), "X")
    for v in init:
        _check_shape(layer, v, (batch, nd, hidden), "an initial state")
    _check_shape(layer, lengths, (batch,), "sequence_lengths")
    _check_shape(layer, w, (nd, gates * hidden, size), "W")
    _check_shape(layer, r, (nd, gates * hidden, hidden), "R")
    bias_gates = max(k for k in bias_plan if k is not None) + 1
    _check_shape(layer, b, (nd, bias_gates * hidden), "B")
    names, clip = _activations_clip(layer, acts)
    ins = [ctx.b.Transpose(x, perm=[1, 0, 2]),
           _rearrange(ctx, layer, 2 + states, w, plan, hidden, gates, "W"),
           _rearrange(ctx, layer, 3 + states, r, plan, hidden, gates, "R"),
           _rearrange(ctx, layer, 4 + states, b, bias_plan, hidden, bias_gates, "B"),
           _lengths(ctx, layer, lengths, batch, seq)] + [_state(ctx, v) for v in init]
    attrs = {"linear_before_reset": 1} if op == "GRU" and layer.attrs["linear_before_reset"] else {}
    outs = ctx.b.op(op, *ins, _outputs=1 + states, hidden_size=hidden, direction=direction,
                    activations=[ONNX_ACTIVATIONS[a] for a in names] * nd,
                    clip=clip if clip > 0 else None, **attrs)
    return [ctx.b.Transpose(outs[0], perm=[2, 1, 0, 3])] + [ctx.b.Transpose(o, perm=[1, 0, 2]) for o in outs[1:]]


@lowers("LSTMSequence", "opset5")
def lstm_sequence(ctx, layer, inputs):
    """LSTMSequence-5 -> Transpose, LSTM (layout 0), Transpose (Y, Ho, Co); gates f,i,c,o -> i,o,f,c
    and B -> [Wb, Rb=0] (NumPy for constants, Split/Concat at run time), Cast of the lengths."""
    order = [1, 3, 0, 2]
    return _lower(ctx, layer, inputs, "LSTM", 4, order + [None] * 4, order, 2, ["sigmoid", "tanh", "tanh"])


@lowers("GRUSequence", "opset5")
def gru_sequence(ctx, layer, inputs):
    """GRUSequence-5 -> Transpose, GRU (layout 0), Transpose (Y, Ho); same gate order z, r, h;
    B -> [Wb, Rb]: [B, 0] or, with linear_before_reset, [Wbz+Rbz, Wbr+Rbr, Wbh, 0, 0, Rbh]."""
    lbr = bool(layer.attrs["linear_before_reset"])
    bias = [0, 1, 2, None, None, 3] if lbr else [0, 1, 2, None, None, None]
    return _lower(ctx, layer, inputs, "GRU", 3, bias, [0, 1, 2], 1, ["sigmoid", "tanh"])


@lowers("RNNSequence", "opset5")
def rnn_sequence(ctx, layer, inputs):
    """RNNSequence-5 -> Transpose, RNN (layout 0), Transpose (Y, Ho); B -> [Wb, Rb=0]."""
    return _lower(ctx, layer, inputs, "RNN", 1, [0, None], [0], 1, ["tanh"])


# -- the cells: one step ---------------------------------------------------------------------
def _cell(ctx, layer, x, states, w, r, b, op, gates, plan, bias_plan, acts, peephole=None):
    etype = x.etype
    if etype is None or etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"element type {etype.name if etype else '?'} is not supported: "
                                      f"onnxruntime's {op} runs f16 and f32 only")
    ctx.onnx_type(layer, etype)
    for v in (*states, w, r) + ((b,) if b is not None else ()):
        if v.etype != etype:
            raise InvalidLayer(layer, f"X is {etype.name} but another input is {v.etype.name}")
    hidden = int(layer.attrs["hidden_size"])
    if hidden < 1:
        raise InvalidLayer(layer, f"hidden_size must be positive, not {hidden}")
    batch, size = x.shape if x.shape is not None and len(x.shape) == 2 else (None, None)
    _check_shape(layer, x, (None, None), "X")
    for v in states:
        _check_shape(layer, v, (batch, hidden), "a state")
    _check_shape(layer, w, (gates * hidden, size), "W")
    _check_shape(layer, r, (gates * hidden, hidden), "R")
    bias_gates = max(k for k in bias_plan if k is not None) + 1
    names, clip = _activations_clip(layer, acts)
    g = ctx.b
    first = g.const([0])
    index = {id(v): i for i, v in enumerate([x, *states, w, r, b])}  # input positions, for _known
    bias = None
    if b is not None:
        _check_shape(layer, b, (bias_gates * hidden,), "B")
        bias = _rearrange(ctx, layer, index[id(b)], b, bias_plan, hidden, bias_gates, "B", cell=True)
    ins = [g.Unsqueeze(x, first),
           _rearrange(ctx, layer, index[id(w)], w, plan, hidden, gates, "W", cell=True),
           _rearrange(ctx, layer, index[id(r)], r, plan, hidden, gates, "R", cell=True),
           bias, None] + [g.Unsqueeze(v, first) for v in states]
    if peephole is not None:
        ins.append(peephole)
    attrs = {"linear_before_reset": 1} if op == "GRU" and layer.attrs.get("linear_before_reset") else {}
    outs = g.op(op, *ins, _outputs=1 + len(states), hidden_size=hidden,
                activations=[ONNX_ACTIVATIONS[a] for a in names], clip=clip if clip > 0 else None, **attrs)
    return [g.Squeeze(o, first) for o in outs[1:]]


_LSTM_ACTS = ["sigmoid", "tanh", "tanh"]


@lowers("LSTMCell", "opset4")
def lstm_cell4(ctx, layer, inputs):
    """LSTMCell-4 (X, H, C, W, R, B) -> Unsqueeze, LSTM (one step; gates f,i,c,o -> i,o,f,c, B ->
    [Wb, 0]), Squeeze (Ho, Co)."""
    x, h, c, w, r, b = inputs
    order = [1, 3, 0, 2]
    return _cell(ctx, layer, x, [h, c], w, r, b, "LSTM", 4, order, order + [None] * 4, _LSTM_ACTS)


@lowers("LSTMCell", "opset1")
def lstm_cell1(ctx, layer, inputs):
    """LSTMCell-1 (X, H, C, W, R, B[, P]) -> LSTMCell-4's chain; weights_format names the gate
    order of W/R/B; peepholes P (f, i, o) -> ONNX P (i, o, f). input_forget is refused."""
    x, h, c, w, r, b = inputs[:6]
    if layer.attrs.get("input_forget"):
        raise UnsupportedLayer(layer, "input_forget=true is not supported")
    fmt = str(layer.attrs.get("weights_format", "fico")).lower()
    if sorted(fmt) != sorted("fico"):
        raise InvalidLayer(layer, f"weights_format '{fmt}' is not an order of f, i, c, o")
    order = [fmt.index(gate) for gate in "iofc"]
    peephole = None
    if len(inputs) > 6:
        p = inputs[6]
        hidden = int(layer.attrs["hidden_size"])
        _check_shape(layer, p, (3 * hidden,), "P")
        if p.etype != x.etype:
            raise InvalidLayer(layer, f"X is {x.etype.name} but P is {p.etype.name}")
        peephole = _rearrange(ctx, layer, 6, p, [1, 2, 0], hidden, 3, "P", cell=True)
    return _cell(ctx, layer, x, [h, c], w, r, b, "LSTM", 4, order, order + [None] * 4, _LSTM_ACTS, peephole)


@lowers("GRUCell", "opset3")
def gru_cell3(ctx, layer, inputs):
    """GRUCell-3 (X, H, W, R[, B]) -> Unsqueeze, GRU (one step; gates z, r, h; B -> [B, 0] or, with
    linear_before_reset, [Wbz+Rbz, Wbr+Rbr, Wbh, 0, 0, Rbh]), Squeeze."""
    x, h, w, r = inputs[:4]
    b = inputs[4] if len(inputs) > 4 else None
    lbr = bool(layer.attrs["linear_before_reset"])
    bias = [0, 1, 2, None, None, 3] if lbr else [0, 1, 2, None, None, None]
    return _cell(ctx, layer, x, [h], w, r, b, "GRU", 3, [0, 1, 2], bias, ["sigmoid", "tanh"])


@lowers("RNNCell", "opset3")
@lowers("RNNCell", "opset1")
def rnn_cell1(ctx, layer, inputs):
    """RNNCell-1 (X, H, W, R, B; OpenVINO writes version opset1, older IR opset3) -> Unsqueeze, RNN
    (one step; B -> [B, 0]), Squeeze."""
    x, h, w, r = inputs[:4]
    b = inputs[4] if len(inputs) > 4 else None
    return _cell(ctx, layer, x, [h], w, r, b, "RNN", 1, [0], [0, None], ["tanh"])
