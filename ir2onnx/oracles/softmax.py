"""Oracles of SoftMax-1/-8 and LogSoftmax-5 from the specs' formulas: every line along the axis,
element by element in float64 (the maximum subtracted first), rounded once to the input type."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .elements import as_float64
from .registry import oracle


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


def _log_softmax_line(values: list[float]) -> list[float]:
    top = max(values)
    log_total = math.log(sum(math.exp(v - top) for v in values))
    return [v - top - log_total for v in values]


@oracle("LogSoftmax", "opset5")
def log_softmax(layer, inputs):
    return along_axis(layer, inputs[0], int(layer.attrs["axis"]), True, _log_softmax_line)
