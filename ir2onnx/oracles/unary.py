"""Oracles of Erf, Negative, Abs, Log, Floor and Ceiling (all -1), from the specs: floats in
float64 rounded once to the input type; integers exact, wrapping modulo 2^bits."""
from __future__ import annotations

import itertools
import math

import numpy as np

from .elements import map_float, wrap
from .registry import oracle


def _integers(x: np.ndarray, fn) -> list[np.ndarray]:
    out = np.empty_like(x)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        out[pos] = wrap(fn(int(x[pos])), x.dtype)
    return [out]


def _log(v: float) -> float:
    if v != v or v < 0:
        return math.nan
    return -math.inf if v == 0 else math.log(v)


@oracle("Erf", "opset1")
def erf(layer, inputs):
    return map_float(layer, inputs[0], math.erf)


@oracle("Log", "opset1")
def log(layer, inputs):
    return map_float(layer, inputs[0], _log)


@oracle("Floor", "opset1")
def floor(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [x.copy()]
    return map_float(layer, x, lambda v: v if not math.isfinite(v) else math.copysign(math.floor(v), v))


@oracle("Ceiling", "opset1")
def ceiling(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [x.copy()]
    return map_float(layer, x, lambda v: v if not math.isfinite(v) else math.copysign(math.ceil(v), v))


@oracle("Negative", "opset1")
def negative(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return _integers(x, lambda v: -v)
    return map_float(layer, x, lambda v: -v)


@oracle("Abs", "opset1")
def abs_(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return _integers(x, abs)
    return map_float(layer, x, abs)
