"""Oracles of Erf, Negative, Abs, Log, Floor, Ceiling and Power (all -1), from the specs: floats in
float64 rounded once to the input type; integers exact, wrapping modulo 2^bits."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import UnsupportedLayer
from .elements import broadcast_shape, map_float, pick
from .registry import oracle


def _wrap(value: int, dtype: np.dtype):
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _integers(x: np.ndarray, fn) -> list[np.ndarray]:
    out = np.empty_like(x)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        out[pos] = _wrap(fn(int(x[pos])), x.dtype)
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


def _float_pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except ValueError:  # negative base, fractional exponent
        return math.nan
    except OverflowError:
        return math.inf if x > 0 or float(y).is_integer() and y % 2 == 0 else -math.inf


def _int_pow(layer, x: int, y: int) -> int:
    if y >= 0:
        return x ** y
    if abs(x) == 1:  # 1 / x**|y| truncated toward zero
        return x if y % 2 else 1
    if x == 0:
        raise UnsupportedLayer(layer, "0 to a negative integer power is undefined")
    return 0


@oracle("Power", "opset1")
def power(layer, inputs):
    a, b = inputs
    shape = broadcast_shape(layer, a, b)
    out = np.empty(shape, a.dtype)
    for pos in itertools.product(*[range(d) for d in shape]):
        x, y = pick(a, pos), pick(b, pos)
        if a.dtype.kind in "iu":
            out[pos] = _wrap(_int_pow(layer, int(x), int(y)), a.dtype)
        else:
            out[pos] = _float_pow(float(x), float(y))
    return [out]
