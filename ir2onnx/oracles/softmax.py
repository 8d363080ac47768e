"""Oracles of SoftMax-1/-8 and LogSoftmax-5 from the specs' formulas: every line along the axis in
float64 (the maximum subtracted first), all lines at once, rounded once to the input type."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import as_float64
from .registry import oracle


def along_axis(layer, x: np.ndarray, axis: int, allow_negative: bool, lines_fn) -> list[np.ndarray]:
    """``lines_fn(values, axis) -> values`` (float64 arrays) on every line of ``x`` along ``axis``
    at once; the result has ``x``'s dtype. Empty lines stay empty."""
    v = as_float64(layer, x)
    if not (-x.ndim if allow_negative else 0) <= axis < x.ndim:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    if v.size == 0:
        return [v.astype(x.dtype)]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return [lines_fn(v, axis).astype(x.dtype)]


def _softmax_lines(v: np.ndarray, axis: int) -> np.ndarray:
    """exp(v - max) / sum(exp(v - max)) along ``axis``."""
    exps = np.exp(v - v.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)


def _softmax(layer, x: np.ndarray, allow_negative: bool):
    return along_axis(layer, x, int(layer.attrs.get("axis", 1)), allow_negative, _softmax_lines)


@oracle("SoftMax", "opset1")
def softmax1(layer, inputs):
    return _softmax(layer, inputs[0], allow_negative=False)


@oracle("SoftMax", "opset8")
def softmax8(layer, inputs):
    return _softmax(layer, inputs[0], allow_negative=True)


def _log_softmax_lines(v: np.ndarray, axis: int) -> np.ndarray:
    """v - max - log(sum(exp(v - max))) along ``axis``."""
    shifted = v - v.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@oracle("LogSoftmax", "opset5")
def log_softmax(layer, inputs):
    return along_axis(layer, inputs[0], int(layer.attrs["axis"]), True, _log_softmax_lines)
