"""Oracles of Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh (-1), Asinh, Acosh, Atanh (-4): the
math functions in float64 per element, rounded once; NaN outside the domain, infinities at the
poles (Atanh(+-1)) and on overflow (Sinh, Cosh)."""
from __future__ import annotations

import math

from .elements import map_float
from .registry import oracle


def _safe(fn, overflow=None):
    def call(v: float) -> float:
        try:
            return fn(v)
        except OverflowError:
            return overflow(v)
        except ValueError:  # outside the domain
            return math.nan
    return call


def _atanh(v: float) -> float:
    if abs(v) == 1:
        return math.copysign(math.inf, v)
    return _safe(math.atanh)(v)


_FUNCS = {
    ("Sin", "opset1"): _safe(math.sin),
    ("Cos", "opset1"): _safe(math.cos),
    ("Tan", "opset1"): _safe(math.tan),
    ("Asin", "opset1"): _safe(math.asin),
    ("Acos", "opset1"): _safe(math.acos),
    ("Atan", "opset1"): math.atan,
    ("Sinh", "opset1"): _safe(math.sinh, lambda v: math.copysign(math.inf, v)),
    ("Cosh", "opset1"): _safe(math.cosh, lambda v: math.inf),
    ("Asinh", "opset4"): math.asinh,
    ("Acosh", "opset4"): _safe(math.acosh),
    ("Atanh", "opset4"): _atanh,
}


def _register(key, fn):
    @oracle(*key)
    def run(layer, inputs):
        return map_float(layer, inputs[0], lambda v: v if v != v else fn(v))
    return run


for _key, _fn in _FUNCS.items():
    _register(_key, _fn)
