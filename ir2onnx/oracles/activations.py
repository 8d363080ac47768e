"""Oracles of the activations and SoftMax, from the specs' formulas, evaluated in float64 and
rounded once to the input type."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .elements import as_float64, map_float
from .registry import oracle


def _sigmoid(v: float) -> float:
    return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))


@oracle("ReLU", "opset1")
def relu(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [np.where(x > 0, x, np.zeros((), x.dtype)).astype(x.dtype)]
    return map_float(layer, x, lambda v: v if v > 0 or v != v else 0.0)


@oracle("Sigmoid", "opset1")
def sigmoid(layer, inputs):
    return map_float(layer, inputs[0], _sigmoid)


@oracle("Tanh", "opset1")
def tanh(layer, inputs):
    return map_float(layer, inputs[0], math.tanh)


@oracle("Exp", "opset1")
def exp(layer, inputs):
    return map_float(layer, inputs[0], lambda v: math.exp(v) if v < 710 else math.inf)


@oracle("Sqrt", "opset1")
def sqrt(layer, inputs):
    return map_float(layer, inputs[0], lambda v: math.sqrt(v) if v >= 0 else math.nan)


@oracle("Clamp", "opset1")
def clamp(layer, inputs):
    x = inputs[0]
    lo, hi = float(layer.attrs["min"]), float(layer.attrs["max"])
    if lo > hi:
        raise InvalidLayer(layer, "min > max")
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        lo_i, hi_i = max(math.ceil(lo), info.min), min(math.floor(hi), info.max)
        if lo_i > hi_i:
            raise UnsupportedLayer(layer, "no integer between min and max")
        out = np.empty_like(x)
        for pos in itertools.product(*[range(d) for d in x.shape]):
            out[pos] = min(max(int(x[pos]), lo_i), hi_i)
        return [out]
    lo_t, hi_t = float(np.asarray(lo, x.dtype)), float(np.asarray(hi, x.dtype))
    return map_float(layer, x, lambda v: v if v != v else min(max(v, lo_t), hi_t))


def _gelu(layer, x, mode: str):
    if mode == "tanh":
        c = math.sqrt(2 / math.pi)
        return map_float(layer, x, lambda v: 0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v ** 3))))
    return map_float(layer, x, lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))


@oracle("Gelu", "opset2")
def gelu2(layer, inputs):
    return _gelu(layer, inputs[0], "erf")


@oracle("Gelu", "opset7")
def gelu7(layer, inputs):
    return _gelu(layer, inputs[0], str(layer.attrs.get("approximation_mode", "ERF")).lower())


@oracle("HSwish", "opset4")
def hswish(layer, inputs):
    return map_float(layer, inputs[0], lambda v: v * min(max(v + 3, 0.0), 6.0) / 6)


@oracle("Swish", "opset4")
def swish(layer, inputs):
    beta = 1.0
    if len(inputs) > 1:
        if inputs[1].size != 1:
            raise InvalidLayer(layer, "beta must be a scalar")
        beta = float(inputs[1].reshape(-1)[0])
    return map_float(layer, inputs[0], lambda v: v * _sigmoid(beta * v))


def along_axis(layer, x: np.ndarray, axis: int, allow_negative: bool, line_fn) -> list[np.ndarray]:
    """Apply ``line_fn(values) -> values`` (float64 lists) to every line of ``x`` along ``axis``,
    element by element; the result has ``x``'s dtype. Empty lines stay empty."""
    v = as_float64(layer, x)
    if not (-x.ndim if allow_negative else 0) <= axis < x.ndim:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    out = np.empty(v.shape, np.float64)
    others = [range(d) if i != axis else [None] for i, d in enumerate(v.shape)]
    for pos in itertools.product(*others):
        idx = [tuple(j if p is None else p for p in pos) for j in range(v.shape[axis])]
        if idx:
            for i, value in zip(idx, line_fn([float(v[i]) for i in idx])):
                out[i] = value
    return [out.astype(x.dtype)]


def _softmax_line(values: list[float]) -> list[float]:
    top = max(values)
    exps = [math.exp(e - top) for e in values]
    total = sum(exps)
    return [e / total for e in exps]


def _softmax(layer, x: np.ndarray, allow_negative: bool):
    return along_axis(layer, x, int(layer.attrs.get("axis", 1)), allow_negative, _softmax_line)


@oracle("SoftMax", "opset1")
def softmax1(layer, inputs):
    return _softmax(layer, inputs[0], allow_negative=False)


@oracle("SoftMax", "opset8")
def softmax8(layer, inputs):
    return _softmax(layer, inputs[0], allow_negative=True)
