"""Oracles of ReduceL1-4, ReduceL2-4 and NormalizeL2-1 from the specs, element by element
(the reduction walk of :mod:`.elementwise`), sums in float64, rounded once."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .elements import as_float64, normalize_axis
from .elementwise import _reduce
from .registry import oracle


def _sum_of(layer, inputs, term):
    data, axes = inputs
    as_float64(layer, data)
    total = _reduce(layer, [data.astype(object), axes], lambda acc, v: acc + term(float(v)), lambda dt: 0.0)[0]
    return total, data.dtype


@oracle("ReduceL1", "opset4")
def reduce_l1(layer, inputs):
    total, dtype = _sum_of(layer, inputs, abs)
    return [total.astype(np.float64).astype(dtype)]


@oracle("ReduceL2", "opset4")
def reduce_l2(layer, inputs):
    total, dtype = _sum_of(layer, inputs, lambda v: v * v)
    return [np.sqrt(total.astype(np.float64)).astype(dtype)]


@oracle("NormalizeL2", "opset1")
def normalize_l2(layer, inputs):
    x, axes = inputs
    v = as_float64(layer, x)
    picked = {normalize_axis(layer, int(a), x.ndim) for a in np.asarray(axes).reshape(-1)}
    if not picked:
        raise UnsupportedLayer(layer, "NormalizeL2 over no axes")
    eps, mode = float(layer.attrs["eps"]), layer.attrs["eps_mode"]
    out = np.empty(v.shape, np.float64)
    for pos in itertools.product(*[range(d) for d in v.shape]):
        ranges = [range(v.shape[i]) if i in picked else [pos[i]] for i in range(v.ndim)]
        total = sum(v[src] * v[src] for src in itertools.product(*ranges))
        total = max(total, eps) if mode == "max" else total + eps
        if total == 0:
            raise InvalidLayer(layer, "NormalizeL2 of a zero slice with eps 0")
        out[pos] = v[pos] / math.sqrt(total)
    return [out.astype(x.dtype)]
