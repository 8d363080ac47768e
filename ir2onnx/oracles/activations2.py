"""Oracles of PReLU-1, Elu-1, SoftPlus-4, Mish-4 and LogSoftmax-5 from the specs' formulas,
element by element in float64, rounded once to the input type."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .activations import along_axis
from .elements import as_float64, map_float, pick
from .registry import oracle


def _softplus(v: float) -> float:
    return v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))


@oracle("PReLU", "opset1")
def prelu(layer, inputs):
    x, slope = inputs
    v, s = as_float64(layer, x), slope.astype(np.float64)
    channel = 1 if x.ndim > 1 else 0
    per_channel = slope.ndim == 1 and x.ndim >= 1 and x.shape[channel] == slope.shape[0]
    if not per_channel:
        if slope.ndim > x.ndim or any(a != b and a != 1 for a, b in zip(reversed(slope.shape), reversed(x.shape))):
            raise InvalidLayer(layer, f"slope {slope.shape} does not broadcast to data {x.shape}")
    out = np.empty(x.shape, np.float64)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        k = s[pos[channel]] if per_channel else pick(s, pos)
        out[pos] = v[pos] * k if v[pos] < 0 else v[pos]
    return [out.astype(x.dtype)]


@oracle("Elu", "opset1")
def elu(layer, inputs):
    alpha = float(layer.attrs["alpha"])
    return map_float(layer, inputs[0], lambda v: v if v > 0 else alpha * math.expm1(v))


@oracle("SoftPlus", "opset4")
def softplus(layer, inputs):
    return map_float(layer, inputs[0], _softplus)


@oracle("Mish", "opset4")
def mish(layer, inputs):
    return map_float(layer, inputs[0], lambda v: v * math.tanh(_softplus(v)))


def _log_softmax_line(values: list[float]) -> list[float]:
    top = max(values)
    log_total = math.log(sum(math.exp(v - top) for v in values))
    return [v - top - log_total for v in values]


@oracle("LogSoftmax", "opset5")
def log_softmax(layer, inputs):
    return along_axis(layer, inputs[0], int(layer.attrs["axis"]), True, _log_softmax_line)
