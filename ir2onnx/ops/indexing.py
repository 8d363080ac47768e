"""Gather-1/-7/-8: indices outside the valid range give zeros (OpenVINO), which ONNX Gather rejects,
so such indices are masked unless they are constants known to be in range. batch_dims > 0 becomes
GatherND(batch_dims), with Transposes around it when the axis is not the first non-batch dim.
Gathering from a shape vector keeps its per-element knowledge (see :mod:`.shape`)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering import exact
from ..lowering.builder import Value
from ..lowering.inputs import const_ints, foldable, normalize_axis
from ..lowering.registry import lowers
from ..lowering.shape_vectors import elements_of, vector_value
from ..lowering.shapes import dims_of, i64


def _gather(ctx, layer, inputs, negative: bool):
    data, indices, axis_v = inputs
    if data.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    rank = len(data.shape)
    if rank == 0:
        raise InvalidLayer(layer, "data must have rank >= 1")
    axis_values = const_ints(layer, axis_v, "axis")
    if len(axis_values) != 1:
        raise InvalidLayer(layer, f"axis must hold one value, got {axis_values}")
    axis = normalize_axis(layer, axis_values[0], rank)
    batch_dims = layer.attrs.get("batch_dims", 0)
    if batch_dims != 0:
        return [_batched_gather(ctx, layer, data, indices, axis, batch_dims, negative)]
    size = data.shape[axis]
    out_shape = None if indices.shape is None else data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    if indices.is_const and size is not None:
        idx = np.asarray(indices.value()).astype(np.int64)
        valid = (idx >= (-size if negative else 0)) & (idx < size)
        idx = np.where(valid, idx % max(size, 1), 0)
        elements = elements_of(data)
        if foldable(data, indices):
            picked = np.take(np.asarray(data.value()), idx, axis=axis)
            mask = valid.reshape(valid.shape + (1,) * (rank - axis - 1))
            return [np.where(mask, picked, np.zeros((), picked.dtype)).astype(picked.dtype)]
        if valid.all():
            g = ctx.b
            if elements is not None and rank == 1:
                picked = tuple(elements[i] for i in idx.reshape(-1))
                return [vector_value(g, data.etype, idx.shape, picked, lambda: g.Gather(data, i64(g, idx), axis=0))]
            return [g.Gather(data, i64(g, idx), axis=axis)]
    return [_masked_gather(ctx, data, indices, axis, rank, negative, out_shape)]


def _masked_gather(ctx, data: Value, indices: Value, axis: int, rank: int, negative: bool, out_shape,
                   batch_dims: int = 0):
    """Gather where out-of-range indices give zeros (OpenVINO), which ONNX Gather rejects.

    With batch_dims b: the gathered axis moves to position b (Transpose), GatherND(batch_dims=b)
    picks along it, and the dims between the batch dims and the axis move back after it.
    """
    g = ctx.b
    idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=7)
    size = data.shape[axis]
    s = i64(g, size) if size is not None else g.Squeeze(dims_of(g, data, axis, axis + 1), i64(g, [0]))
    low = g.Neg(s) if negative else i64(g, 0)
    valid = g.And(g.GreaterOrEqual(idx, low), g.Less(idx, s))
    # f16: no Where on the data (onnxruntime's f16 Where quiets signalling NaNs): a zero slab is
    # appended along the axis and out-of-range indices pick it
    by_index = data.etype.name in exact.QUIETING
    if by_index and negative:  # the slab sits at index `size`: count negative indices from there
        idx = g.Where(g.Less(idx, i64(g, 0)), g.Add(idx, s), idx)
    safe = g.Where(valid, idx, s if by_index else i64(g, 0))
    b, perm_back = batch_dims, None
    if b and axis != b:
        free = len(indices.shape) - b
        perm_back = (list(range(b)) + [b + free + k for k in range(axis - b)] + [b + k for k in range(free)] +
                     list(range(axis + free, rank - 1 + free)))
        data = Value(g, data.etype, None, name=g.Transpose(
            data, perm=list(range(b)) + [axis] + list(range(b, axis)) + list(range(axis + 1, rank))))
        axis = b
    if by_index:
        slab = g.Concat(dims_of(g, data, 0, axis), i64(g, [1]), dims_of(g, data, axis + 1), axis=0)
        zeros = g.ConstantOfShape(slab, value=helper.make_tensor("value", data.etype.onnx, [1], [0]))
        data = Value(g, data.etype, None, name=g.Concat(data, zeros, axis=axis))
    if b:
        picked = g.GatherND(data, g.Unsqueeze(safe, i64(g, [-1])), batch_dims=b)
    else:
        picked = g.Gather(data, safe, axis=axis)
    trailing = rank - axis - 1
    if by_index:
        out = picked
    else:
        if trailing:
            valid = g.Unsqueeze(valid, i64(g, list(range(-trailing, 0))))
        zero = g.const(np.zeros((), data.etype.numpy), data.etype.numpy, "zero")
        out = g.Where(valid, picked, zero)
    if perm_back is not None:
        out = g.Transpose(out, perm=perm_back)
    return Value(g, data.etype, out_shape, name=out)


def _batched_gather(ctx, layer, data: Value, indices: Value, axis: int, batch_dims: int, negative: bool):
    """batch_dims > 0: GatherND(batch_dims) on the indices with a trailing 1 (masked as above)."""
    if indices.shape is None:
        raise UnsupportedLayer(layer, "batch_dims with indices of unknown rank is not supported")
    b = batch_dims + len(indices.shape) if batch_dims < 0 else batch_dims
    if not 0 <= b <= min(axis, len(indices.shape)):
        raise InvalidLayer(layer, f"batch_dims={batch_dims} must be in [0, min(axis, indices rank)]")
    for d, (x, y) in enumerate(zip(data.shape[:b], indices.shape[:b])):
        if x is not None and y is not None and x != y:
            raise InvalidLayer(layer, f"batch dim {d} differs: data {x}, indices {y}")
    out_shape = data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:]
    return _masked_gather(ctx, data, indices, axis, len(data.shape), negative, out_shape, batch_dims=b)


@lowers("Gather", "opset1")
def gather_1(ctx, layer, inputs):
    """Gather-1 -> Gather (indices outside [0, size) give zeros: Where, Gather, Where)."""
    return _gather(ctx, layer, inputs, negative=False)


@lowers("Gather", "opset7")
def gather_7(ctx, layer, inputs):
    """Gather-7 -> Gather (indices outside [0, size) give zeros: Where, Gather, Where; batch_dims:
    [Transpose,] GatherND[, Transpose])."""
    return _gather(ctx, layer, inputs, negative=False)


@lowers("Gather", "opset8")
def gather_8(ctx, layer, inputs):
    """Gather-8 -> Gather (negative indices; outside [-size, size) give zeros: Where, Gather, Where;
    batch_dims: [Transpose,] GatherND[, Transpose])."""
    return _gather(ctx, layer, inputs, negative=True)
