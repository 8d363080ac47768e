"""Oracles of LSTMSequence-5, GRUSequence-5, RNNSequence-5 and of the cells LSTMCell-1/-4,
GRUCell-3 and RNNCell-1 (one step, per batch row) from the OpenVINO specs: a float64
recurrence, one batch row, direction and time step at a time, gates in OpenVINO's order
(LSTM f, i, c, o; GRU z, r, h). Row ``b`` runs over its first ``sequence_lengths[b]`` steps
(backwards for reverse); Y is zero past that length and Ho/Co hold the state after the last
valid step. The spec is silent on a length of 0: OpenVINO's CPU plugin (2026.4) gives zero
final states then, not the initial ones, and so does onnxruntime; the oracle follows them."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle

GATES = {"LSTMSequence": 4, "GRUSequence": 3, "RNNSequence": 1}


ACTIVATIONS = {  # the spec's list: "any combination of relu, sigmoid, tanh"
    "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": np.tanh,
    "relu": lambda v: np.maximum(v, 0.0),
}


def _activations(layer, count: int, default: list[str]):
    names = layer.attrs["activations"] or default
    if len(names) != count:
        raise InvalidLayer(layer, f"needs {count} activations, not {len(names)}: {names}")
    names = [n.strip().lower() for n in names]
    unknown = [n for n in names if n not in ACTIVATIONS]
    if unknown:
        raise InvalidLayer(layer, f"activation(s) {unknown} are not relu, sigmoid or tanh")
    return [ACTIVATIONS[n] for n in names]


def _check(layer, x, states, lengths, w, r, b):
    """Shapes per the spec; returns (batch, seq, num_directions, hidden)."""
    hidden = int(layer.attrs["hidden_size"])
    nd = 2 if layer.attrs["direction"] == "bidirectional" else 1
    gates = GATES[layer.type]
    bias = gates + (1 if layer.type == "GRUSequence" and layer.attrs.get("linear_before_reset") else 0)
    if x.ndim != 3:
        raise InvalidLayer(layer, f"X must be [batch, seq_length, input_size], not {list(x.shape)}")
    batch, seq, size = x.shape
    want = [((batch, nd, hidden), s) for s in states] + [((batch,), lengths),
            ((nd, gates * hidden, size), w), ((nd, gates * hidden, hidden), r), ((nd, bias * hidden), b)]
    for shape, value in want:
        if tuple(value.shape) != shape:
            raise InvalidLayer(layer, f"an input is {list(value.shape)}, the spec needs {list(shape)}")
    if lengths.dtype.kind not in "iu" or (lengths < 0).any() or (lengths > seq).any():
        raise InvalidLayer(layer, f"sequence_lengths {lengths.tolist()} must be integers in [0, {seq}]")
    return batch, seq, nd, hidden


def _clip(layer):
    c = float(layer.attrs["clip"])
    return (lambda v: np.clip(v, -c, c)) if c > 0 else (lambda v: v)


def _run(layer, x, states, lengths, w, r, b, cell):
    """Drive ``cell(d, x_t, state_tuple) -> state_tuple`` over every row and direction."""
    batch, seq, nd, hidden = _check(layer, x, states, lengths, w, r, b)
    dtype, x = x.dtype, x.astype(np.float64)
    y = np.zeros((batch, nd, seq, hidden))
    finals = [np.zeros((batch, nd, hidden)) for _ in states]
    for n in range(batch):
        for d in range(nd):
            reverse = layer.attrs["direction"] == "reverse" or d == 1
            steps = range(int(lengths[n]))
            state = tuple(s[n, d].astype(np.float64) for s in states)
            for t in (reversed(steps) if reverse else steps):
                state = cell(d, x[n, t], state)
                y[n, d, t] = state[0]
            for f, s in zip(finals, state):
                f[n, d] = s if lengths[n] > 0 else 0.0  # OpenVINO's runtime (and ONNX's): zeros
    return [y.astype(dtype)] + [f.astype(dtype) for f in finals]


@oracle("LSTMSequence", "opset5")
def lstm_sequence(layer, inputs):
    x, h0, c0, lengths, w, r, b = inputs
    f, g, h = _activations(layer, 3, ["sigmoid", "tanh", "tanh"])
    clip, hs = _clip(layer), int(layer.attrs["hidden_size"])
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))

    def cell(d, xt, state):
        ht, ct = state
        pre = w[d] @ xt + r[d] @ ht + b[d]
        gate = [clip(pre[k * hs:(k + 1) * hs]) for k in range(4)]  # f, i, c, o
        ft, it, cand, ot = f(gate[0]), f(gate[1]), g(gate[2]), f(gate[3])
        c_new = ft * ct + it * cand
        return ot * h(c_new), c_new

    return _run(layer, x, [h0, c0], lengths, w, r, b, cell)


def gru_update(f, g, clip, lbr: bool, hs: int, w, r, b, xt, ht):
    """One GRU step of one direction, the spec's formulas (gates z, r, h in W, R, B; with
    linear_before_reset B = [Wbz + Rbz, Wbr + Rbr, Wbh, Rbh])."""
    part = lambda m, k: m[k * hs:(k + 1) * hs]  # noqa: E731
    zt = f(clip(part(w, 0) @ xt + part(r, 0) @ ht + part(b, 0)))
    rt = f(clip(part(w, 1) @ xt + part(r, 1) @ ht + part(b, 1)))
    if lbr:
        cand = g(clip(part(w, 2) @ xt + rt * (part(r, 2) @ ht + part(b, 3)) + part(b, 2)))
    else:
        cand = g(clip(part(w, 2) @ xt + part(r, 2) @ (rt * ht) + part(b, 2)))
    return (1 - zt) * cand + zt * ht


@oracle("GRUSequence", "opset5")
def gru_sequence(layer, inputs):
    x, h0, lengths, w, r, b = inputs
    f, g = _activations(layer, 2, ["sigmoid", "tanh"])
    clip, hs = _clip(layer), int(layer.attrs["hidden_size"])
    lbr = bool(layer.attrs["linear_before_reset"])
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))

    def cell(d, xt, state):
        return (gru_update(f, g, clip, lbr, hs, w[d], r[d], b[d], xt, state[0]),)

    return _run(layer, x, [h0], lengths, w, r, b, cell)


@oracle("RNNSequence", "opset5")
def rnn_sequence(layer, inputs):
    x, h0, lengths, w, r, b = inputs
    (f,) = _activations(layer, 1, ["tanh"])
    clip = _clip(layer)
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))

    def cell(d, xt, state):
        return (f(clip(w[d] @ xt + r[d] @ state[0] + b[d])),)

    return _run(layer, x, [h0], lengths, w, r, b, cell)


# -- the cells -------------------------------------------------------------------------------
def _cell_rows(layer, x, states, step):
    """``step(x_row, state_rows) -> state_rows`` for every batch row, float64, rounded once."""
    dtype = x.dtype
    hidden = int(layer.attrs["hidden_size"])
    if x.ndim != 2 or any(s.shape != (x.shape[0], hidden) for s in states):
        raise InvalidLayer(layer, f"X {list(x.shape)} / states {[list(s.shape) for s in states]} do not "
                                  f"match [batch, input_size] / [batch, {hidden}]")
    outs = [np.zeros((x.shape[0], hidden)) for _ in states]
    for n in range(x.shape[0]):
        new = step(x[n].astype(np.float64), [s[n].astype(np.float64) for s in states])
        for o, v in zip(outs, new):
            o[n] = v
    return [o.astype(dtype) for o in outs]


def _lstm_cell(layer, inputs, fmt="fico", peephole=None):
    x, h0, c0, w, r, b = inputs[:6]
    f, g, h = _activations(layer, 3, ["sigmoid", "tanh", "tanh"])
    clip, hs = _clip(layer), int(layer.attrs["hidden_size"])
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))
    p = np.zeros(3 * hs) if peephole is None else np.asarray(peephole, np.float64)  # f, i, o

    def step(xt, state):
        ht, ct = state
        pre = w @ xt + r @ ht + b
        gate = {name: pre[k * hs:(k + 1) * hs] for k, name in enumerate(fmt)}
        ft = f(clip(gate["f"] + p[:hs] * ct))
        it = f(clip(gate["i"] + p[hs:2 * hs] * ct))
        c_new = ft * ct + it * g(clip(gate["c"]))
        ot = f(clip(gate["o"] + p[2 * hs:] * c_new))
        return ot * h(c_new), c_new

    return _cell_rows(layer, x, [h0, c0], step)


@oracle("LSTMCell", "opset4")
def lstm_cell4(layer, inputs):
    return _lstm_cell(layer, inputs)


@oracle("LSTMCell", "opset1")
def lstm_cell1(layer, inputs):
    if layer.attrs.get("input_forget"):
        raise UnsupportedLayer(layer, "input_forget=true")
    fmt = str(layer.attrs.get("weights_format", "fico")).lower()
    if sorted(fmt) != sorted("fico"):
        raise InvalidLayer(layer, f"weights_format '{fmt}'")
    return _lstm_cell(layer, inputs, fmt, inputs[6] if len(inputs) > 6 else None)


@oracle("GRUCell", "opset3")
def gru_cell3(layer, inputs):
    x, h0, w, r = inputs[:4]
    hs = int(layer.attrs["hidden_size"])
    lbr = bool(layer.attrs["linear_before_reset"])
    b = inputs[4] if len(inputs) > 4 else np.zeros((4 if lbr else 3) * hs)
    f, g = _activations(layer, 2, ["sigmoid", "tanh"])
    clip = _clip(layer)
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))

    def step(xt, state):
        return (gru_update(f, g, clip, lbr, hs, w, r, b, xt, state[0]),)

    return _cell_rows(layer, x, [h0], step)


@oracle("RNNCell", "opset3")
@oracle("RNNCell", "opset1")
def rnn_cell1(layer, inputs):
    x, h0, w, r = inputs[:4]
    b = inputs[4] if len(inputs) > 4 else np.zeros(int(layer.attrs["hidden_size"]))
    (f,) = _activations(layer, 1, ["tanh"])
    clip = _clip(layer)
    w, r, b = (np.asarray(a, np.float64) for a in (w, r, b))
    return _cell_rows(layer, x, [h0], lambda xt, state: (f(clip(w @ xt + r @ state[0] + b)),))
