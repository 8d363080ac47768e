"""Oracles of ReduceMean-1, ReduceMax-1 and ReduceMin-1 (element by element, like ReduceSum's):
float means summed in float64 and rounded once; integer means truncate toward zero."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import normalize_axis
from .elementwise import _reduce
from .registry import oracle


def _count(layer, data: np.ndarray, axes: np.ndarray) -> int:
    if data.ndim == 0:
        return 1
    picked = {normalize_axis(layer, int(a), data.ndim) for a in np.asarray(axes).reshape(-1)}
    return int(np.prod([data.shape[a] for a in picked]))


@oracle("ReduceMean", "opset1")
def reduce_mean(layer, inputs):
    data, axes = inputs
    count = _count(layer, data, axes)
    if data.dtype.kind in "iu":
        total = _reduce(layer, [data.astype(object), axes], lambda acc, v: acc + int(v), lambda dt: 0)[0]
        if count == 0:
            raise InvalidLayer(layer, "integer mean over an empty slice")
        q = np.vectorize(lambda t: abs(t) // count * (1 if t >= 0 else -1), otypes=[object])(total)
        return [q.astype(data.dtype)]
    total = _reduce(layer, [data.astype(np.float64), axes], lambda acc, v: acc + v, lambda dt: 0.0)[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        return [(total / count).astype(data.dtype)]


def _extreme(layer, inputs, better):
    data, axes = inputs

    def combine(acc, v):
        if acc is None or v != v or (acc == acc and better(v, acc)):
            return v
        return acc

    out = _reduce(layer, [data.astype(object), axes], combine, lambda dt: None)[0]
    if any(v is None for v in out.reshape(-1)):
        raise InvalidLayer(layer, "reduction over an empty slice")
    return [out.astype(data.dtype)]


@oracle("ReduceMax", "opset1")
def reduce_max(layer, inputs):
    return _extreme(layer, inputs, lambda v, acc: v > acc)


@oracle("ReduceMin", "opset1")
def reduce_min(layer, inputs):
    return _extreme(layer, inputs, lambda v, acc: v < acc)
