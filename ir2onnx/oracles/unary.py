"""Oracles of Exp, Sqrt, Erf, Log, Floor, Ceiling, Negative, Abs, Sign (all -1) and Round-5, from
the specs: floats element by element in float64, rounded once to the input type; integers exact,
wrapping modulo 2^bits."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .elements import as_float64, erf as _erf, map_array, map_float, wrap
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


@oracle("Exp", "opset1")
def exp(layer, inputs):
    return map_array(layer, inputs[0], np.exp)  # inf past 709.78, as the scalar exp overflows


@oracle("Sqrt", "opset1")
def sqrt(layer, inputs):
    return map_array(layer, inputs[0], lambda v: np.where(v >= 0, np.sqrt(v), np.nan))  # sqrt(-0) = -0


@oracle("Erf", "opset1")
def erf(layer, inputs):
    x = inputs[0]
    return [_erf(as_float64(layer, x)).astype(x.dtype)]


@oracle("Log", "opset1")
def log(layer, inputs):
    return map_float(layer, inputs[0], _log)


@oracle("Floor", "opset1")
def floor(layer, inputs):
    """Integers pass through, except the output of Divide-1 with m_pythondiv=true (PyTorch's //):
    then inputs 2 and 3 are the Divide's operands (ir2onnx.ir.idioms), floor-divided exactly."""
    x = inputs[0]
    if x.dtype.kind in "iu" and len(inputs) == 3:
        a, b = np.broadcast_arrays(inputs[1], inputs[2])
        if np.any(b == 0):
            raise InvalidLayer(layer, "integer division by zero")
        q = [int(p) // int(d) for p, d in zip(a.ravel().tolist(), b.ravel().tolist())]
        return [np.array([wrap(v, x.dtype) for v in q], x.dtype).reshape(a.shape)]
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
    return map_array(layer, x, np.negative)


@oracle("Abs", "opset1")
def abs_(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return _integers(x, abs)
    return map_array(layer, x, np.abs)


def _each(x: np.ndarray, fn) -> np.ndarray:
    out = np.empty_like(x)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        out[pos] = fn(x[pos].item())
    return out


def _sign(v):
    if v != v:
        return v
    return 1 if v > 0 else (-1 if v < 0 else 0)


@oracle("Sign", "opset1")
def sign(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [_each(x, _sign)]
    return map_float(layer, x, _sign)


def _half_away(v: float) -> float:
    if not math.isfinite(v):
        return v
    whole = math.floor(abs(v))
    frac = abs(v) - whole  # exact in float64
    return math.copysign(whole + (1 if frac >= 0.5 else 0), v)


@oracle("Round", "opset5")
def round5(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [x.copy()]
    if layer.attrs["mode"] == "half_away_from_zero":
        return map_float(layer, x, _half_away)
    return map_float(layer, x, lambda v: v if not math.isfinite(v) else math.copysign(round(v), v))


@oracle("Identity", "opset16")
def identity(layer, inputs):
    return [np.array(inputs[0], copy=True)]
