"""Oracles of the response normalizations from the specs, element by element in float64, rounded
once to the data type: LRN-1 (each element divided by (bias + alpha / size^len(axes) * the sum of
squares over the box [i - floor((size-1)/2), i + ceil((size-1)/2)] on every axis in ``axes``: for an
even size one more above than below, as ONNX's LRN defines it, the framework whose LRN gives
OpenVINO an even size)^beta) and GRN-1 (each element
divided by sqrt(bias + the sum of squares along the channel axis 1 at its position))."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .elements import as_float64, ints, normalize_axis, positions
from .registry import oracle


@oracle("LRN", "opset1")
def lrn1(layer, inputs):
    x, axes = inputs
    v = as_float64(layer, x)
    picked = {normalize_axis(layer, a, x.ndim) for a in ints(axes)}
    size = int(layer.attrs["size"])
    if size < 1:
        raise InvalidLayer(layer, f"size must be positive, got {size}")
    alpha, beta, bias = (float(layer.attrs[k]) for k in ("alpha", "beta", "bias"))
    below = (size - 1) // 2  # an even size: one more above than below (ONNX's LRN)
    above = size - 1 - below
    scale = alpha / size ** len(picked)
    out = np.empty(v.shape, np.float64)
    for pos in positions(v.shape):
        ranges = [range(max(0, p - below), min(d, p + above + 1)) if i in picked else [p]
                  for i, (p, d) in enumerate(zip(pos, v.shape))]
        total = math.fsum(v[src] * v[src] for src in itertools.product(*ranges))
        out[pos] = v[pos] / (bias + scale * total) ** beta
    return [out.astype(x.dtype)]


@oracle("GRN", "opset1")
def grn1(layer, inputs):
    (x,) = inputs
    v = as_float64(layer, x)
    if not 2 <= v.ndim <= 4:
        raise InvalidLayer(layer, f"GRN needs data of rank 2, 3 or 4, got {v.ndim}")
    bias = float(layer.attrs["bias"])
    out = np.empty(v.shape, np.float64)
    for pos in positions(v.shape):
        total = math.fsum(v[pos[:1] + (c,) + pos[2:]] ** 2 for c in range(v.shape[1]))
        out[pos] = v[pos] / math.sqrt(total + bias)
    return [out.astype(x.dtype)]
