"""Oracles of HSigmoid-5, SoftSign-9, Selu-1, Sign-1 and Round-5 from the specs' formulas,
element by element in float64 (rounded once to the input type); integers exact."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .elements import map_float
from .registry import oracle


def _each(x: np.ndarray, fn) -> np.ndarray:
    out = np.empty_like(x)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        out[pos] = fn(x[pos].item())
    return out


def _hsigmoid(v: float) -> float:
    return v if v != v else min(max(v + 3.0, 0.0), 6.0) / 6.0


def _softsign(v: float) -> float:
    return math.copysign(1.0, v) if math.isinf(v) else v / (1.0 + abs(v))


def _sign(v):
    if v != v:
        return v
    return 1 if v > 0 else (-1 if v < 0 else 0)


@oracle("HSigmoid", "opset5")
def hsigmoid(layer, inputs):
    return map_float(layer, inputs[0], _hsigmoid)


@oracle("SoftSign", "opset9")
def softsign(layer, inputs):
    return map_float(layer, inputs[0], _softsign)


@oracle("Selu", "opset1")
def selu(layer, inputs):
    x, alpha, lam = inputs
    for what, v in (("alpha", alpha), ("lambda", lam)):
        if v.size != 1 or v.dtype != x.dtype:
            raise InvalidLayer(layer, f"{what} must be one element of the data's type {x.dtype}")
    a, l_ = float(alpha.reshape(-1)[0]), float(lam.reshape(-1)[0])
    return map_float(layer, x, lambda v: l_ * (v if v > 0 else a * math.expm1(v)))


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
