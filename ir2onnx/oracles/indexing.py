"""Oracles of the gathers, from the specs, one index at a time: Gather-1/-7/-8 (out-of-range
indices give zeros; without batch dims all indices at once), GatherElements-6, GatherND-8 and NonZero-3 (row-major coordinates of the
non-zero elements; NaN is non-zero)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .elements import axis_input, index_in, index_tuple, normalize_axis, positions
from .registry import oracle


def _gather(layer, inputs, negative: bool):
    data, indices, axis = inputs
    axis = normalize_axis(layer, int(np.asarray(axis).reshape(-1)[0]), data.ndim)
    b = int(layer.attrs.get("batch_dims", 0))
    b = b + indices.ndim if b < 0 else b
    if not 0 <= b <= min(axis, indices.ndim) or data.shape[:b] != indices.shape[:b]:
        raise InvalidLayer(layer, "batch_dims out of range or batch dims differ")
    size = data.shape[axis]
    out_shape = data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:]
    if b == 0:  # every index at once: out[outer, which, inner] = data[outer, i(which), inner]
        i = indices.astype(np.int64)
        if negative:
            i = np.where((i < 0) & (i >= -size), i + size, i)
        inside = (i >= 0) & (i < size)  # out of range: zeros (Gather-7/-8 spec; OpenVINO too)
        if size == 0 or not inside.any():
            return [np.zeros(out_shape, dtype=data.dtype)]
        picked = np.take(data, np.where(inside, i, 0), axis=axis)
        keep = inside.reshape((1,) * axis + inside.shape + (1,) * (data.ndim - axis - 1))
        return [np.where(keep, picked, np.zeros((), data.dtype)).astype(data.dtype)]
    out = np.zeros(out_shape, dtype=data.dtype)
    free = indices.ndim - b
    for pos in itertools.product(*[range(d) for d in out_shape]):
        outer = pos[:axis]
        which = pos[axis:axis + free]
        inner = pos[axis + free:]
        i = int(indices[outer[:b] + which])
        if negative and -size <= i < 0:
            i += size
        if 0 <= i < size:  # out of range: zeros (Gather-7/-8 spec; OpenVINO does the same for -1)
            out[pos] = data[outer + (i,) + inner]
    return [out]


@oracle("Gather", "opset1")
def gather_1(layer, inputs):
    return _gather(layer, inputs, negative=False)


@oracle("Gather", "opset7")
def gather_7(layer, inputs):
    return _gather(layer, inputs, negative=False)


@oracle("Gather", "opset8")
def gather_8(layer, inputs):
    return _gather(layer, inputs, negative=True)


# -- GatherElements-6 ------------------------------------------------------------------------
@oracle("GatherElements", "opset6")
def gather_elements6(layer, inputs):
    data, idx = inputs
    if data.ndim != idx.ndim or data.ndim == 0:
        raise InvalidLayer(layer, "data and indices must have the same rank >= 1")
    axis = axis_input(layer, layer.attrs["axis"], data.ndim)
    out = np.empty(idx.shape, data.dtype)
    for pos in positions(idx.shape):
        src = list(pos)
        src[axis] = index_in(layer, idx[pos], data.shape[axis])
        out[pos] = data[tuple(src)]
    return [out]


# -- GatherND-8 ------------------------------------------------------------------------------
@oracle("GatherND", "opset8")
def gather_nd8(layer, inputs):
    data, idx = inputs
    bd = int(layer.attrs["batch_dims"])
    depth = idx.shape[-1]
    if bd + depth > data.ndim or data.shape[:bd] != idx.shape[:bd]:
        raise InvalidLayer(layer, "indices do not fit the data")
    tail = data.shape[bd + depth:]
    out = np.empty(idx.shape[:-1] + tail, data.dtype)
    for pos in itertools.product(*[range(d) for d in idx.shape[:-1]]):
        where = index_tuple(layer, idx[pos], data.shape[bd:bd + depth])
        for rest in itertools.product(*[range(d) for d in tail]):
            out[pos + rest] = data[pos[:bd] + where + rest]
    return [out]


# -- NonZero-3 -------------------------------------------------------------------------------
@oracle("NonZero", "opset3")
def nonzero(layer, inputs):
    x = np.asarray(inputs[0])
    itype = np.int32 if getattr(layer.attrs["output_type"], "name", layer.attrs["output_type"]) == "i32" else np.int64
    flat = x.reshape(-1) if x.ndim else x.reshape(1)
    shape = x.shape if x.ndim else (1,)
    hits = [k for k in range(flat.size) if flat[k] != 0 or flat[k] != flat[k]]  # NaN is non-zero
    out = np.zeros((len(shape), len(hits)), itype)
    for col, k in enumerate(hits):
        for axis in range(len(shape) - 1, -1, -1):  # row-major coordinates of flat index k
            out[axis, col] = k % shape[axis]
            k //= shape[axis]
    return [out]
