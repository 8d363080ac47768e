"""Oracles of IsNaN-10, IsInf-10 and IsFinite-10 from the specs, element by element with Python's
``math.isnan`` / ``math.isinf`` on each value (in float64, which keeps NaN and infinities)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .elements import positions
from .registry import oracle


def _map(layer, x: np.ndarray, test) -> list[np.ndarray]:
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise InvalidLayer(layer, f"{layer.type} needs a float input, got {x.dtype}")
    out = np.empty(x.shape, np.bool_)
    for pos in positions(x.shape):
        out[pos] = test(float(x[pos]))
    return [out]


@oracle("IsNaN", "opset10")
def is_nan(layer, inputs):
    return _map(layer, inputs[0], math.isnan)


@oracle("IsInf", "opset10")
def is_inf(layer, inputs):
    negative = bool(layer.attrs.get("detect_negative", True))
    positive = bool(layer.attrs.get("detect_positive", True))
    return _map(layer, inputs[0], lambda v: math.isinf(v) and (positive if v > 0 else negative))


@oracle("IsFinite", "opset10")
def is_finite(layer, inputs):
    return _map(layer, inputs[0], math.isfinite)
