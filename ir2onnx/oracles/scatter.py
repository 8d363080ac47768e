"""Oracles of the scatters, ScatterElementsUpdate-3/-12, ScatterUpdate-3 and ScatterNDUpdate-3/-15, from
the specs, element by element. Updates to one element are applied in row-major order of ``updates`` (the
specs leave it undefined; OpenVINO's and onnxruntime's CPU kernels do this). Integer mean rounds
down (toward negative infinity) as the ScatterElementsUpdate-12 spec says; sums and products of
integers wrap in the element type."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .elements import axis_input, index_in, index_tuple, positions
from .registry import oracle


def _combine(reduction, old, new):
    if reduction == "sum":
        return old | new if old.dtype == np.bool_ else old + new
    if reduction == "prod":
        return old & new if old.dtype == np.bool_ else old * new
    if reduction == "min":
        return min(old, new) if not np.isnan(new) else new
    if reduction == "max":
        return max(old, new) if not np.isnan(new) else new
    raise AssertionError(reduction)


def _scatter_elements(layer, inputs, reduction, use_init):
    data, idx, upd, axis = inputs
    if not (data.ndim == idx.ndim == upd.ndim) or data.ndim == 0 or idx.shape != upd.shape:
        raise InvalidLayer(layer, f"data {data.shape}, indices {idx.shape} and updates {upd.shape} do not fit")
    axis = axis_input(layer, axis, data.ndim)
    if any(i != axis and b > a for i, (a, b) in enumerate(zip(data.shape, idx.shape))):
        raise InvalidLayer(layer, "indices exceed data outside the axis")
    out = data.copy()
    sums: dict[tuple, list] = {}
    with np.errstate(over="ignore"):
        for pos in positions(idx.shape):
            dst = list(pos)
            dst[axis] = index_in(layer, idx[pos], data.shape[axis])
            dst = tuple(dst)
            value = upd[pos]
            if reduction == "none":
                out[dst] = value
            elif reduction == "mean":
                sums.setdefault(dst, [data[dst]] if use_init else []).append(value)
            elif dst not in sums and not use_init:
                sums[dst] = []
                out[dst] = value
            else:
                sums.setdefault(dst, [])
                out[dst] = _combine(reduction, out[dst], value)
        for dst, values in sums.items():
            if reduction == "mean":
                out[dst] = _mean(layer, values, data.dtype)
    return [out]


def _mean(layer, values, dtype):
    if dtype == np.bool_:
        raise InvalidLayer(layer, "reduction 'mean' is not defined for boolean data")
    if np.dtype(dtype).kind in "iu":
        total = np.zeros((), dtype)
        with np.errstate(over="ignore"):
            for v in values:
                total = (total + v).astype(dtype)  # wraps in the element type
        return np.asarray(int(total) // len(values)).astype(dtype)
    return np.asarray(np.sum(np.asarray(values, np.float64)) / len(values)).astype(dtype)


@oracle("ScatterElementsUpdate", "opset3")
def scatter_elements_update3(layer, inputs):
    return _scatter_elements(layer, inputs, "none", True)


@oracle("ScatterElementsUpdate", "opset12")
def scatter_elements_update12(layer, inputs):
    return _scatter_elements(layer, inputs, layer.attrs["reduction"], layer.attrs["use_init_val"])


@oracle("ScatterUpdate", "opset3")
def scatter_update3(layer, inputs):
    data, idx, upd, axis = inputs
    if data.ndim == 0:
        raise InvalidLayer(layer, "data must have rank >= 1")
    axis = axis_input(layer, axis, data.ndim)
    want = data.shape[:axis] + idx.shape + data.shape[axis + 1:]
    if upd.shape != want:
        raise InvalidLayer(layer, f"updates {upd.shape} must have shape {want}")
    out = data.copy()
    q = idx.ndim
    for pos in positions(upd.shape):
        where = pos[axis:axis + q]
        if int(idx[where]) < 0:  # ScatterUpdate-3: bounds [0, s - 1], no negative indices
            raise InvalidLayer(layer, f"index {int(idx[where])} is negative")
        dst = pos[:axis] + (index_in(layer, idx[where], data.shape[axis]),) + pos[axis + q:]
        out[dst] = upd[pos]
    return [out]


# -- ScatterNDUpdate-3/-15 -------------------------------------------------------------------
def _nd_combine(reduction, old, new):
    """The spec's ``func(x, y)``: Python's min/max (the first argument unless the second is
    strictly smaller/greater, so NaN updates leave the element); booleans: sum OR, sub XOR, prod AND."""
    if reduction == "none":
        return new
    if old.dtype == np.bool_:
        return {"sum": old | new, "sub": old ^ new, "prod": old & new, "min": old & new, "max": old | new}[reduction]
    if reduction == "min":
        return new if new < old else old
    if reduction == "max":
        return new if new > old else old
    return {"sum": old + new, "sub": old - new, "prod": old * new}[reduction]


def _scatter_nd(layer, inputs, reduction):
    data, idx, updates = inputs
    depth = idx.shape[-1]
    tail = data.shape[depth:]
    if depth > data.ndim or updates.shape != idx.shape[:-1] + tail:
        raise InvalidLayer(layer, f"updates {updates.shape} do not match indices {idx.shape} and data {data.shape}")
    out = data.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for pos in itertools.product(*[range(d) for d in idx.shape[:-1]]):
            where = index_tuple(layer, idx[pos], data.shape[:depth])
            for rest in itertools.product(*[range(d) for d in tail]):
                out[where + rest] = _nd_combine(reduction, out[where + rest], updates[pos + rest])
    return [out]


@oracle("ScatterNDUpdate", "opset4")
def scatter_nd_update3(layer, inputs):
    return _scatter_nd(layer, inputs, "none")


@oracle("ScatterNDUpdate", "opset15")
def scatter_nd_update15(layer, inputs):
    """Updates applied one by one in row-major order of the index tuples (the spec's loop);
    integers wrap in the element type."""
    return _scatter_nd(layer, inputs, layer.attrs["reduction"])
