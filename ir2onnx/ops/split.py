"""Split-1 and VariadicSplit-1 -> Split (several outputs) along a constant axis.

Sizes known at convert time go into Split's ``split`` input; Split-1 along a dynamic dim uses
equal parts (``num_outputs`` from opset 18); VariadicSplit's -1 part along a dynamic dim is
computed at run time (Shape, Sub). split_lengths known only at run time (shufflenet's
``x.chunk(2, dim=1)`` on dynamic dims) go to Split's ``split`` input: Cast to int64, a -1 entry
replaced by the rest of the dim (Equal, Where). Small constant inputs fold. The axis must be
known at convert time: ONNX's Split takes it as an attribute.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, foldable, normalize_axis
from ._common.shapes import as_int64, dims_of, i64


def _axis(layer, data, axis_v) -> int:
    if data.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    if not axis_v.is_const:
        raise UnsupportedLayer(layer, "an axis known only at run time cannot be expressed: ONNX's Split "
                                      "takes the axis as an attribute")
    values = const_ints(layer, axis_v, "axis")
    if len(values) != 1:
        raise InvalidLayer(layer, f"axis must be a scalar, got {values}")
    if not data.shape:
        raise InvalidLayer(layer, "a scalar cannot be split")
    return normalize_axis(layer, values[0], len(data.shape))


def _emit(ctx, data, axis: int, sizes: list[int] | None, parts: int, split: str | None = None) -> list:
    if foldable(data) and sizes is not None:
        bounds = np.cumsum(sizes)[:-1]
        return list(np.split(np.asarray(data.value()), bounds, axis=axis))
    g = ctx.b
    if parts == 1:
        return [data]
    if sizes is not None:
        return g.Split(data, i64(g, sizes, "split"), axis=axis, _outputs=parts)
    if split is not None:
        return g.Split(data, split, axis=axis, _outputs=parts)
    if ctx.opset >= 18:
        return g.Split(data, axis=axis, num_outputs=parts, _outputs=parts)
    return g.Split(data, axis=axis, _outputs=parts)


@lowers("Split", "opset1")
def split(ctx, layer, inputs):
    """Split-1 -> Split into num_splits equal parts."""
    data, axis_v = inputs
    axis = _axis(layer, data, axis_v)
    parts = int(layer.attrs["num_splits"])
    if parts < 1:
        raise InvalidLayer(layer, f"num_splits must be positive, got {parts}")
    if len(layer.outputs) != parts:
        raise InvalidLayer(layer, f"num_splits={parts} but the layer has {len(layer.outputs)} outputs")
    dim = data.shape[axis]
    if dim is None:
        return _emit(ctx, data, axis, None, parts)
    if dim % parts:
        raise InvalidLayer(layer, f"dimension {axis} of size {dim} is not divisible by num_splits={parts}")
    return _emit(ctx, data, axis, [dim // parts] * parts, parts)


@lowers("VariadicSplit", "opset1")
def variadic_split(ctx, layer, inputs):
    """VariadicSplit-1 -> Split with split_lengths (one -1 takes the rest; Shape, Sub, Concat when
    that dim is dynamic)."""
    data, axis_v, lengths_v = inputs
    axis = _axis(layer, data, axis_v)
    if not lengths_v.is_const:
        return _run_time_lengths(ctx, layer, data, axis, lengths_v)
    lengths = const_ints(layer, lengths_v, "split_lengths")
    if len(layer.outputs) != len(lengths):
        raise InvalidLayer(layer, f"{len(lengths)} split_lengths but {len(layer.outputs)} outputs")
    if sum(1 for n in lengths if n == -1) > 1 or any(n < -1 for n in lengths):
        raise InvalidLayer(layer, f"split_lengths {lengths}: at most one -1, no other negative values")
    known = sum(n for n in lengths if n != -1)
    dim = data.shape[axis]
    if dim is not None:
        rest = dim - known
        if (-1 in lengths and rest < 0) or (-1 not in lengths and rest != 0):
            raise InvalidLayer(layer, f"split_lengths {lengths} do not add up to dimension {axis} of size {dim}")
        return _emit(ctx, data, axis, [rest if n == -1 else n for n in lengths], len(lengths))
    if -1 not in lengths:
        return _emit(ctx, data, axis, lengths, len(lengths))
    g = ctx.b
    rest = g.Sub(dims_of(g, data, axis, axis + 1), i64(g, [known]))
    at = lengths.index(-1)
    pieces = [i64(g, lengths[:at])] if at else []
    pieces.append(rest)
    if at + 1 < len(lengths):
        pieces.append(i64(g, lengths[at + 1:]))
    split_sizes = g.Concat(*pieces, axis=0) if len(pieces) > 1 else rest
    return _emit(ctx, data, axis, None, len(lengths), split_sizes)


def _run_time_lengths(ctx, layer, data, axis: int, lengths_v) -> list:
    """split_lengths known at run time: one -1 takes what the others leave of the dim."""
    if lengths_v.shape is None or len(lengths_v.shape) != 1 or lengths_v.shape[0] is None:
        raise UnsupportedLayer(layer, "split_lengths of unknown length: the number of outputs must be known")
    parts = lengths_v.shape[0]
    if len(layer.outputs) != parts:
        raise InvalidLayer(layer, f"{parts} split_lengths but {len(layer.outputs)} outputs")
    g = ctx.b
    lengths = as_int64(g, lengths_v)
    minus_one = g.Equal(lengths, i64(g, [-1]))
    # the rest: the dim minus the other lengths (the -1 adds -1 to their sum: add it back)
    others = g.Add(g.ReduceSum(lengths, keepdims=1), g.ReduceSum(g.Cast(minus_one, to=7), keepdims=1))
    rest = g.Sub(dims_of(g, data, axis, axis + 1), others)
    return _emit(ctx, data, axis, None, parts, g.Where(minus_one, rest, lengths))
