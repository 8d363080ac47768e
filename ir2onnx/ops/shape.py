"""ShapeOf-1/-3, Concat-1, Squeeze-1/-15, Unsqueeze-1 (Gather is in :mod:`.indexing`): the ops of
OpenVINO's shape subgraphs (``ShapeOf -> Gather -> Concat -> Reshape``) and their general forms.
A Concat that appends to a KV cache reordered by beam_idx skips the reorder when it reorders
nothing (:mod:`._state_reorder`).

Shape vectors carry per-element knowledge while converting (:mod:`ir2onnx.ops._common.shape_vectors`),
so Reshape can resolve a pattern built from its own input's shape without leaving dead
Shape/Gather/Concat nodes behind.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import ElementType, element_type
from ..ir.graph import is_static
from ..lowering.builder import Value
from ..lowering.registry import lowers
from . import _state_reorder as reorder
from ._common.inputs import const_ints, foldable, normalize_axis
from ._common.shape_vectors import DimOf, LazyValue, elements_of, vector_value
from ._common.shapes import as_int64, i64


# -- ShapeOf ---------------------------------------------------------------------------------
def _shape_of(ctx, layer, x: Value, etype: ElementType):
    if is_static(x.shape):
        return [np.array(x.shape, dtype=etype.numpy)]
    g = ctx.b

    def emit() -> str:
        s = x.shape_vector(g) if isinstance(x, reorder.Reordered) else g.Shape(x)
        return s if etype.name == "i64" else g.Cast(s, to=etype.onnx)

    if x.shape is None:
        return [emit()]
    elements = tuple(d if d is not None else DimOf(x, j) for j, d in enumerate(x.shape))
    return [LazyValue(g, etype, (len(x.shape),), emit, elements)]


@lowers("ShapeOf", "opset1")
def shape_of_1(ctx, layer, inputs):
    """ShapeOf-1 -> Shape (a constant when the input shape is static)."""
    return _shape_of(ctx, layer, inputs[0], element_type("i64"))


@lowers("ShapeOf", "opset3")
def shape_of_3(ctx, layer, inputs):
    """ShapeOf-3 -> Shape (+ Cast for output_type i32; a constant when the input shape is static)."""
    etype = layer.attrs["output_type"]
    etype = element_type(etype) if isinstance(etype, str) else etype
    if etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, f"output_type must be i32 or i64, got {etype.name}")
    return _shape_of(ctx, layer, inputs[0], etype)


# -- Concat ----------------------------------------------------------------------------------
@lowers("Concat", "opset1")
def concat(ctx, layer, inputs):
    """Concat-1 -> Concat (folded for constants; shape vectors keep per-element knowledge)."""
    ranks = {len(v.shape) for v in inputs if v.shape is not None}
    if len(ranks) > 1:
        raise InvalidLayer(layer, f"inputs have different ranks {sorted(ranks)}")
    if len({v.etype for v in inputs}) > 1:
        raise InvalidLayer(layer, "inputs have different element types")
    if not ranks:
        return [ctx.b.Concat(*inputs, axis=layer.attrs["axis"])]
    rank = ranks.pop()
    if rank == 0:
        raise InvalidLayer(layer, "scalars cannot be concatenated")
    axis = normalize_axis(layer, layer.attrs["axis"], rank)
    for d in range(rank):
        sizes = {v.shape[d] for v in inputs if v.shape is not None and v.shape[d] is not None}
        if d != axis and len(sizes) > 1:
            raise InvalidLayer(layer, f"inputs differ in dim {d} ({sorted(sizes)}) outside the concat axis")
    if foldable(*inputs):
        return [np.concatenate([np.asarray(v.value()) for v in inputs], axis=axis)]
    g = ctx.b
    parts = [elements_of(v) for v in inputs]
    if rank == 1 and all(p is not None for p in parts):
        elements = tuple(e for p in parts for e in p)
        return [vector_value(g, inputs[0].etype, (len(elements),), elements, lambda: g.Concat(*inputs, axis=0))]
    out = reorder.concat(ctx, inputs, axis, inputs[0].etype, layer.outputs[0].shape)
    return [out if out is not None else g.Concat(*inputs, axis=axis)]


# -- Squeeze / Unsqueeze ---------------------------------------------------------------------
def _reshaped(ctx, x: Value, out_shape, emit: Callable[[], str]):
    if foldable(x):
        return np.asarray(x.value()).reshape(out_shape)
    elements = elements_of(x)
    if elements is not None and out_shape is not None and len(out_shape) <= 1:
        return vector_value(ctx.b, x.etype, out_shape, elements, emit)
    return emit()


def _run_time_axes(ctx, layer, x, axes_v, rank: int) -> str:
    """Axes known at run time as int64, negative ones plus ``rank``."""
    g = ctx.b
    axes = as_int64(g, axes_v)
    return g.Where(g.Less(axes, i64(g, 0)), g.Add(axes, i64(g, rank)), axes)


def _squeeze_run_time(ctx, layer, x, axes_v, skip: bool):
    """Squeeze by axes known at run time: ONNX Squeeze (a named dim must be 1, as OpenVINO checks);
    allow_axis_skip: Shape, Compress of the dims named and 1, Reshape."""
    if x.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank with axes known only at run time is not supported")
    g, rank = ctx.b, len(x.shape)
    axes = _run_time_axes(ctx, layer, x, axes_v, rank)
    if not skip:
        return [g.Squeeze(x, axes)]
    named = g.Greater(g.ReduceSum(g.Cast(g.Equal(i64(g, np.arange(rank).reshape(rank, 1)), g.Unsqueeze(axes, i64(g, [0]))),
                                         to=7), i64(g, [1]), keepdims=0), i64(g, 0))
    shape = g.Shape(x)
    keep = g.Not(g.And(named, g.Equal(shape, i64(g, 1))))
    return [g.Reshape(x, g.Compress(shape, keep, axis=0), allowzero=1)]


def _squeeze(ctx, layer, inputs, skip_dynamic: bool):
    x, g = inputs[0], ctx.b
    if len(inputs) > 1 and not inputs[1].is_const:
        return _squeeze_run_time(ctx, layer, x, inputs[1], skip_dynamic)
    raw = const_ints(layer, inputs[1], "axes") if len(inputs) > 1 else []
    if not raw:  # no axes (or empty axes): every dim that is 1, at run time where unknown
        if x.shape is None or not is_static(x.shape):
            return [g.Squeeze(x)]
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    else:
        if x.shape is None:
            raise UnsupportedLayer(layer, "data of unknown rank with axes is not supported")
        rank = len(x.shape)
        axes = sorted({normalize_axis(layer, a, max(rank, 1)) for a in raw}) if rank else []
        axes = [a for a in axes if x.shape[a] in (None, 1)]  # a dim that is not 1 is left as is
        dynamic = [a for a in axes if x.shape[a] is None]
        if skip_dynamic and dynamic:  # squeeze a dynamic dim only if it is 1 at run time
            shape = g.Shape(x)
            drop = np.isin(np.arange(rank), axes)
            keep = g.Or(g.Not(g.const(drop, bool)), g.Not(g.Equal(shape, i64(g, 1))))
            return [g.Reshape(x, g.Compress(shape, keep, axis=0), allowzero=1)]
    if not axes:
        return [x]
    out_shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return [_reshaped(ctx, x, out_shape, lambda: g.Squeeze(x, i64(g, axes)))]


@lowers("Squeeze", "opset1")
def squeeze_1(ctx, layer, inputs):
    """Squeeze-1 -> Squeeze (without axes: every dim of size 1; axes on a dim that is not 1 are
    ignored, a dynamic dim is squeezed and must be 1 at run time)."""
    return _squeeze(ctx, layer, inputs, skip_dynamic=False)


@lowers("Squeeze", "opset15")
def squeeze_15(ctx, layer, inputs):
    """Squeeze-15 -> Squeeze; allow_axis_skip=true on a dynamic dim -> Shape, Equal, Compress,
    Reshape (the dim is squeezed only where it is 1 at run time)."""
    return _squeeze(ctx, layer, inputs, skip_dynamic=bool(layer.attrs.get("allow_axis_skip", False)))


@lowers("Unsqueeze", "opset1")
def unsqueeze(ctx, layer, inputs):
    """Unsqueeze-1 -> Unsqueeze (duplicate axes count once, like OpenVINO; axes known at run time:
    negative ones plus the output rank, and a duplicate fails in onnxruntime)."""
    x, g = inputs[0], ctx.b
    if x.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    if not inputs[1].is_const:  # the output rank: the data rank plus the number of axes
        count = None if inputs[1].shape is None else int(np.prod(inputs[1].shape)) if None not in inputs[1].shape else None
        if count is None:
            raise UnsupportedLayer(layer, "axes of unknown length: the output rank must be known")
        return [g.Unsqueeze(x, _run_time_axes(ctx, layer, x, inputs[1], len(x.shape) + count))]
    raw = const_ints(layer, inputs[1], "axes")
    if not raw:
        raise InvalidLayer(layer, "axes must not be empty")
    out_rank = len(x.shape) + len(set(raw))
    axes = sorted({normalize_axis(layer, a, out_rank) for a in raw})
    if len(axes) != len(set(raw)):
        raise InvalidLayer(layer, f"axes {raw} name the same output dim twice")
    dims = iter(x.shape)
    out_shape = tuple(1 if i in axes else next(dims) for i in range(out_rank))
    return [_reshaped(ctx, x, out_shape, lambda: g.Unsqueeze(x, i64(g, axes)))]
