"""The gathers: Gather-1/-7/-8, GatherElements-6, GatherND-8, and NonZero-3 (the indices of the
non-zero elements).

Gather: indices outside the valid range give zeros (OpenVINO), which ONNX Gather rejects,
so such indices are masked unless they are constants known to be in range, or the Gather is a
KV-cache reorder: a state variable gathered along axis 0 by a model input (optimum-intel's
``Gather(ReadValue, beam_idx)``) is a plain Gather, which raises on a row index out of range as
the framework's ``index_select`` does, where OpenVINO's runtime zeroes the row (docs/deviations.md):
the mask cost 9 nodes and a pass over the cache per variable, every step. batch_dims > 0 becomes
GatherND(batch_dims), with Transposes around it when the axis is not the first non-batch dim.
Gathering from a shape vector keeps its per-element knowledge (see :mod:`.shape`).
GatherElements-6 -> GatherElements and GatherND-8 -> GatherND(batch_dims) (i32 indices Cast to i64;
the output shapes of GatherND-8, with the batch dims kept, are ONNX's). NonZero-3 -> NonZero.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers
from . import _state_reorder as reorder
from ._common import exact
from ._common.indices import i64_indices, int_indices, known_ranks, output_type, same_rank
from ._common.inputs import const_ints, foldable, normalize_axis
from ._common.shape_vectors import elements_of, vector_value
from ._common.shapes import dims_of, i64


_WHERE_TYPES = ("f32", "f64", "i8", "i32", "i64", "u8", "u32")  # onnxruntime's CPU Where (f16 aside)


def _gather(ctx, layer, inputs, negative: bool):
    data, indices, axis_v = inputs
    if data.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    rank = len(data.shape)
    if rank == 0:
        raise InvalidLayer(layer, "data must have rank >= 1")
    axis_values = const_ints(layer, axis_v, "axis", "ONNX's Gather takes the axis as an attribute "
                                                    "(an axis computed from static shapes folds)")
    if len(axis_values) != 1:
        raise InvalidLayer(layer, f"axis must hold one value, got {axis_values}")
    axis = normalize_axis(layer, axis_values[0], rank)
    # Gather-1 has no batch_dims: an attribute of that name is not its (fuzz case 6504)
    batch_dims = layer.attrs.get("batch_dims", 0) if layer.version != "opset1" else 0
    if batch_dims != 0:
        return [_batched_gather(ctx, layer, data, indices, axis, batch_dims, negative)]
    size = data.shape[axis]
    out_shape = None if indices.shape is None else data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    if data.gathered is not None and axis == 0 and size is not None and indices.shape is not None:
        picked = _gathered_first(ctx, data, indices, size, negative)
        if picked is not None:
            return [picked]
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
    if axis == 0 and negative and _reorders_state(ctx, layer, data, indices):
        # i32 or i64 indices, as ONNX's Gather takes; emitted where read (a Concat that appends
        # to the cache skips it when beam_idx reorders nothing: ._state_reorder)
        return [reorder.reordered(ctx, data, indices, out_shape)]
    return [_masked_gather(ctx, data, indices, axis, rank, negative, out_shape)]


def _reorders_state(ctx, layer, data: Value, indices: Value) -> bool:
    """Whether ``layer`` gathers a state variable (a ReadValue's graph input) by a Parameter."""
    if not any(data is v for v in ctx.state_inputs.values()) or layer.sources[1].layer not in ctx.graph.layers:
        return False
    source = ctx.graph.layers[layer.sources[1].layer]
    return source.type == "Parameter" and indices.etype.name in ("i32", "i64")


def _gathered_first(ctx, data: Value, indices: Value, size: int, negative: bool) -> Value | None:
    """A compressed table's rows gathered before they are dequantized (``data.gathered``); indices
    out of range read row 0 and give zeros after (Where), as in :func:`_masked_gather`."""
    g = ctx.b
    valid = None
    if indices.is_const:
        idx = np.asarray(indices.value()).astype(np.int64)
        if not ((idx >= (-size if negative else 0)) & (idx < size)).all():
            return None
        safe = g.const_value(idx % max(size, 1))
    else:
        idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=TensorProto.INT64)
        s = i64(g, size)
        valid = g.And(g.GreaterOrEqual(idx, g.Neg(s) if negative else i64(g, 0)), g.Less(idx, s))
        safe = Value(g, element_type("i64"), indices.shape, name=g.Where(valid, idx, i64(g, 0)))
    out = data.gathered(safe)
    if out is None or valid is None:
        return out
    trailing = len(data.shape) - 1
    if trailing:
        valid = g.Unsqueeze(valid, i64(g, list(range(-trailing, 0))))
    zero = g.const(np.zeros((), out.etype.numpy), out.etype.numpy, "zero")
    return Value(g, out.etype, out.shape, name=g.Where(valid, out, zero))


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
    # f16 (onnxruntime's f16 Where quiets signalling NaNs) and the types onnxruntime's CPU Where
    # lacks (boolean, i16, u16, u64, bf16 ...): no Where on the data; a zero slab is appended
    # along the axis and out-of-range indices pick it
    by_index = data.etype.name in exact.QUIETING or data.etype.name not in _WHERE_TYPES
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
        if data.etype.name in ("f32", "f16", "f64") or data.etype.is_integer or g.opset >= 20:
            zeros = g.ConstantOfShape(slab, value=helper.make_tensor("value", data.etype.onnx, [1], [0]))
        else:  # ConstantOfShape takes bf16 and f8 from opset 20: f32 zeros, Cast
            zeros = g.Cast(g.ConstantOfShape(slab, value=helper.make_tensor("value", 1, [1], [0.0])),
                           to=data.etype.onnx)
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


# -- GatherElements-6 ------------------------------------------------------------------------
@lowers("GatherElements", "opset6")
def gather_elements6(ctx, layer, inputs):
    """GatherElements-6 (data, indices; axis) -> GatherElements (i32/i64 indices kept,
    negative indices count from the end in both)."""
    data, idx = inputs
    same_rank(layer, data, idx)
    ctx.onnx_type(layer, data.etype)
    axis = int(layer.attrs["axis"])
    if not -data.rank <= axis < data.rank:
        raise InvalidLayer(layer, f"axis={axis} is out of range for rank {data.rank}")
    axis %= data.rank
    for i, (a, b) in enumerate(zip(data.shape, idx.shape)):
        if i != axis and a is not None and b is not None and a != b:
            raise InvalidLayer(layer, f"dim {i} of indices ({b}) differs from data ({a})")
    if data.is_const and idx.is_const and np.prod(idx.shape) <= 4096:
        d, k = data.value(), np.asarray(idx.value()).astype(np.int64)
        if np.any((k < -d.shape[axis]) | (k >= d.shape[axis])):
            raise InvalidLayer(layer, "an index is out of range")
        return [np.take_along_axis(d, k % d.shape[axis], axis)]
    return [ctx.b.GatherElements(data, int_indices(ctx, layer, idx), axis=axis)]


# -- GatherND-8 ------------------------------------------------------------------------------
@lowers("GatherND", "opset8")
def gather_nd8(ctx, layer, inputs):
    """GatherND-8 (data, indices) -> GatherND(batch_dims) (Cast of i32 indices)."""
    data, idx = inputs
    known_ranks(layer, data, idx)
    ctx.onnx_type(layer, data.etype)
    bd = int(layer.attrs["batch_dims"])
    if not 0 <= bd < min(data.rank, idx.rank):
        raise InvalidLayer(layer, f"batch_dims={bd} must be in [0, min(data rank, indices rank))")
    depth = idx.shape[-1]
    if depth is None:
        raise UnsupportedLayer(layer, "a dynamic last dim of indices is not supported")
    if bd + depth > data.rank:
        raise InvalidLayer(layer, f"indices address {depth} dims after {bd} batch dims of a rank-{data.rank} tensor")
    for i in range(bd):
        a, b = data.shape[i], idx.shape[i]
        if a is not None and b is not None and a != b:
            raise InvalidLayer(layer, f"batch dim {i} differs: data {a}, indices {b}")
    return [ctx.b.GatherND(data, i64_indices(ctx, layer, idx), batch_dims=bd)]


# -- NonZero-3 -------------------------------------------------------------------------------
NONZERO_ORT = ("f32", "f16", "boolean", "i64", "i32", "u8")  # onnxruntime's NonZero kernels


@lowers("NonZero", "opset3")
def nonzero(ctx, layer, inputs):
    """NonZero-3 (data) -> NonZero (Cast to boolean first for other types; a scalar is reshaped to
    [1], as OpenVINO gives [1, count]; Cast for output_type i32)."""
    x = inputs[0]
    itype = output_type(layer)
    if x.etype is None or x.etype.onnx is None:
        raise UnsupportedLayer(layer, f"NonZero of {x.etype.name if x.etype else '?'} is not supported")
    ctx.onnx_type(layer, x.etype)
    if x.rank is None:
        raise UnsupportedLayer(layer, "NonZero needs data of known rank (the output has rank rows)")
    g = ctx.b
    data = x.name
    if x.rank == 0:
        data = g.Reshape(data, i64(g, [1], "one"))
    if x.etype.name not in NONZERO_ORT:  # a non-zero value (NaN included) casts to true
        data = g.Cast(data, to=TensorProto.BOOL)
    out = g.NonZero(data)
    if itype == "i32":
        out = g.Cast(out, to=TensorProto.INT32)
    return [Value(g, element_type(itype), (max(x.rank, 1), None), name=out)]
