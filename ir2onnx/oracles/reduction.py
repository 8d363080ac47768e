"""Oracles of the reductions over ``axes`` (keep_dims): ReduceSum, ReduceProd, ReduceMean,
ReduceMax, ReduceMin (-1) and ReduceL1, ReduceL2 (-4), element by element through one walk
(float means and norms, and maxima and minima of numbers, with numpy's reductions over every
slice at once).
Integer sums and products wrap modulo 2^bits; float means and norms are summed in float64 and
rounded once; integer means truncate toward zero. ReduceLogicalAnd/Or-1: and/or over each slice,
starting from true / false."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .elements import as_float64, normalize_axis
from .registry import oracle


def _reduce(layer, inputs, combine, start):
    data, axes = inputs
    rank = data.ndim
    axes = {normalize_axis(layer, int(a), rank) for a in np.asarray(axes).reshape(-1)} if rank else set()
    keep = bool(layer.attrs.get("keep_dims", False))
    kept_shape = tuple(1 if i in axes else d for i, d in enumerate(data.shape))
    out = np.empty(kept_shape, dtype=data.dtype)
    for pos in itertools.product(*[range(d) for d in kept_shape]):
        ranges = [range(data.shape[i]) if i in axes else [pos[i]] for i in range(rank)]
        acc = start(data.dtype)
        for src in itertools.product(*ranges):
            acc = combine(acc, data[src])
        out[pos] = acc
    if not keep:
        out = out.reshape(tuple(d for i, d in enumerate(data.shape) if i not in axes))
    return [out]


def _wrapping(op):
    def combine(acc, v):
        with np.errstate(over="ignore"):
            return np.asarray(op(acc, v)).astype(acc.dtype)[()]
    return combine


@oracle("ReduceProd", "opset1")
def reduce_prod(layer, inputs):
    return _reduce(layer, inputs, _wrapping(np.multiply), lambda dt: np.ones((), dt)[()])


@oracle("ReduceSum", "opset1")
def reduce_sum(layer, inputs):
    return _reduce(layer, inputs, _wrapping(np.add), lambda dt: np.zeros((), dt)[()])


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
    total = _whole(layer, data.astype(np.float64), axes, np.sum)
    with np.errstate(invalid="ignore", divide="ignore"):
        return [(total / count).astype(data.dtype)]


def _whole(layer, data: np.ndarray, axes, reduce) -> np.ndarray:
    """``reduce`` (a numpy reduction) over every slice at once; the output shape of _reduce."""
    rank = data.ndim
    picked = {normalize_axis(layer, int(a), rank) for a in np.asarray(axes).reshape(-1)} if rank else set()
    keep = bool(layer.attrs.get("keep_dims", False))
    return np.asarray(reduce(data, axis=tuple(sorted(picked)), keepdims=keep))


def _extreme(layer, inputs, better):
    data, axes = inputs
    if data.size and (data.dtype.name in ("float16", "float32", "float64") or data.dtype.kind in "iu"):
        # numpy.max/min on whole slices: the same value, a NaN anywhere in a slice wins
        with np.errstate(invalid="ignore"):
            return [_whole(layer, data, axes, np.max if better(1, 0) else np.min).astype(data.dtype)]

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


def _sum_of(layer, inputs, term):
    data, axes = inputs
    v = as_float64(layer, data)
    return _whole(layer, term(v), axes, np.sum), data.dtype


@oracle("ReduceL1", "opset4")
def reduce_l1(layer, inputs):
    total, dtype = _sum_of(layer, inputs, np.abs)
    return [total.astype(dtype)]


@oracle("ReduceL2", "opset4")
def reduce_l2(layer, inputs):
    total, dtype = _sum_of(layer, inputs, lambda v: v * v)
    return [np.sqrt(total).astype(dtype)]


@oracle("ReduceLogicalAnd", "opset1")
def reduce_logical_and(layer, inputs):
    return _reduce(layer, inputs, lambda acc, v: np.bool_(bool(acc) and bool(v)), lambda dt: np.bool_(True))


@oracle("ReduceLogicalOr", "opset1")
def reduce_logical_or(layer, inputs):
    return _reduce(layer, inputs, lambda acc, v: np.bool_(bool(acc) or bool(v)), lambda dt: np.bool_(False))
