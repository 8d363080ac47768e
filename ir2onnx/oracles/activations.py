"""Oracles of the activations (ReLU, Sigmoid, Tanh, Clamp, Gelu-2/-7, HSwish, Swish, PReLU, Elu,
SoftPlus, Mish, HSigmoid, SoftSign, Selu), from the specs' formulas in float64 on the whole array
(each element's value is the formula's, as a scalar loop would compute it; :func:`map_array`), with
each branch of a formula chosen per element by ``np.where``, rounded once to the input type."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .elements import as_float64, erfc, map_array
from .registry import oracle


def _sigmoid(v: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below (no overflow in either); NaN stays."""
    return np.where(v >= 0, 1 / (1 + np.exp(-v)), np.exp(v) / (1 + np.exp(v)))


@oracle("ReLU", "opset1")
def relu(layer, inputs):
    x = inputs[0]
    if x.dtype.kind in "iu":
        return [np.where(x > 0, x, np.zeros((), x.dtype)).astype(x.dtype)]
    return map_array(layer, x, lambda v: np.where((v > 0) | (v != v), v, 0.0))


@oracle("Sigmoid", "opset1")
def sigmoid(layer, inputs):
    return map_array(layer, inputs[0], _sigmoid)


@oracle("Tanh", "opset1")
def tanh(layer, inputs):
    return map_array(layer, inputs[0], np.tanh)


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
    return map_array(layer, x, lambda v: np.where(v != v, v, np.minimum(np.maximum(v, lo_t), hi_t)))


def _gelu(layer, x, mode: str):
    """0.5 x (1 + erf(x / sqrt(2))), computed as 0.5 x erfc(-x / sqrt(2)) (the same value, without
    the cancellation of 1 + erf for negative x), or 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
    in float64 on the whole array."""
    v = as_float64(layer, x)
    with np.errstate(all="ignore"):
        if mode == "tanh":
            c = math.sqrt(2 / math.pi)
            return [(0.5 * v * (1 + np.tanh(c * (v + 0.044715 * v ** 3)))).astype(x.dtype)]
        return [(0.5 * v * erfc(-v / math.sqrt(2))).astype(x.dtype)]


@oracle("Gelu", "opset2")
def gelu2(layer, inputs):
    return _gelu(layer, inputs[0], "erf")


@oracle("Gelu", "opset7")
def gelu7(layer, inputs):
    return _gelu(layer, inputs[0], str(layer.attrs.get("approximation_mode", "ERF")).lower())


@oracle("HSwish", "opset4")
def hswish(layer, inputs):
    return map_array(layer, inputs[0], lambda v: v * np.minimum(np.maximum(v + 3, 0.0), 6.0) / 6)


@oracle("Swish", "opset4")
def swish(layer, inputs):
    beta = 1.0
    if len(inputs) > 1:
        if inputs[1].size != 1:
            raise InvalidLayer(layer, "beta must be a scalar")
        beta = float(inputs[1].reshape(-1)[0])
    return map_array(layer, inputs[0], lambda v: v * _sigmoid(beta * v))


# -- PReLU, Elu, SoftPlus, Mish --------------------------------------------------------------
def _softplus(v: np.ndarray) -> np.ndarray:
    """v + log(1 + e^-v) for v > 0, log(1 + e^v) else (no overflow); NaN stays."""
    return np.where(v > 0, v + np.log1p(np.exp(-v)), np.log1p(np.exp(v)))


@oracle("PReLU", "opset1")
def prelu(layer, inputs):
    x, slope = inputs
    v, s = as_float64(layer, x), slope.astype(np.float64)
    channel = 1 if x.ndim > 1 else 0
    per_channel = slope.ndim == 1 and x.ndim >= 1 and x.shape[channel] == slope.shape[0]
    if not per_channel:
        if slope.ndim > x.ndim or any(a != b and a != 1 for a, b in zip(reversed(slope.shape), reversed(x.shape))):
            raise InvalidLayer(layer, f"slope {slope.shape} does not broadcast to data {x.shape}")
    if per_channel:  # the slope of channel c for every element of channel c
        s = s.reshape((-1,) + (1,) * (x.ndim - 1 - channel))
    with np.errstate(all="ignore"):
        out = np.where(v < 0, v * s, v)  # s broadcast as numpy broadcasts (checked above)
    # a slope of another float type (OpenVINO accepts it): the product is rounded to the wider type first
    wide = x.dtype if x.dtype.itemsize >= slope.dtype.itemsize else slope.dtype
    return [out.astype(wide).astype(x.dtype)]


@oracle("Elu", "opset1")
def elu(layer, inputs):
    alpha = float(layer.attrs["alpha"])
    return map_array(layer, inputs[0], lambda v: np.where(v > 0, v, alpha * np.expm1(v)))


@oracle("SoftPlus", "opset4")
def softplus(layer, inputs):
    return map_array(layer, inputs[0], _softplus)


@oracle("Mish", "opset4")
def mish(layer, inputs):
    return map_array(layer, inputs[0], lambda v: v * np.tanh(_softplus(v)))


# -- HSigmoid, SoftSign, Selu ----------------------------------------------------------------
def _hsigmoid(v: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0  # NaN stays (np.maximum keeps it)


def _softsign(v: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(v), np.copysign(1.0, v), v / (1.0 + np.abs(v)))


@oracle("HSigmoid", "opset5")
def hsigmoid(layer, inputs):
    return map_array(layer, inputs[0], _hsigmoid)


@oracle("SoftSign", "opset9")
def softsign(layer, inputs):
    return map_array(layer, inputs[0], _softsign)


@oracle("Selu", "opset1")
def selu(layer, inputs):
    x, alpha, lam = inputs
    for what, v in (("alpha", alpha), ("lambda", lam)):
        if v.size != 1 or v.dtype != x.dtype:
            raise InvalidLayer(layer, f"{what} must be one element of the data's type {x.dtype}")
    a, l_ = float(alpha.reshape(-1)[0]), float(lam.reshape(-1)[0])
    return map_array(layer, x, lambda v: l_ * np.where(v > 0, v, a * np.expm1(v)))
