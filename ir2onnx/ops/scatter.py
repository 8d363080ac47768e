"""The scatters: ScatterElementsUpdate-3/-12 -> ScatterElements (with a reduction where ONNX's
matches, short chains where it does not), ScatterUpdate-3 -> Reshape, Expand, ScatterElements, and
ScatterNDUpdate-3/-15 -> ScatterND (i32 indices Cast to i64; reductions as ScatterND's).

Duplicate indices: the specs leave the order of updates to one element undefined. onnxruntime's
CPU kernel applies updates in row-major order of ``updates`` (the last one wins for ``none``;
measured), and the oracles do the same; OpenVINO's CPU plugin mostly does too, but for
ScatterNDUpdate ``none`` not always (measured, 2026.4: another order in about 1 run in 15 of a
5-row update with two duplicates). Sums of integers wrap in the
element type (OpenVINO's and ONNX's kernels both accumulate in it).
"""
from __future__ import annotations

import numpy as np
from onnx import helper, TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.indices import i64_indices, int_indices, known_ranks, same_rank
from ._common.inputs import const_ints, normalize_axis
from ._common.shapes import dims_of, i64


_INT64 = TensorProto.INT64


_ONNX_REDUCTION = {"sum": "add", "prod": "mul", "min": "min", "max": "max"}


def _axis(layer, value, rank: int, what: str = "axis") -> int:
    """A constant axis (scalar or one element) normalized into [0, rank)."""
    values = const_ints(layer, value, what, "ONNX's ScatterElements takes the axis as an attribute")
    if len(values) != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {len(values)}")
    return normalize_axis(layer, values[0], rank, what)


def _check_updates(layer, data, idx, upd, axis):
    if upd.etype != data.etype:
        raise InvalidLayer(layer, f"updates are {upd.etype.name} but data is {data.etype.name}")
    for i, (a, b) in enumerate(zip(idx.shape, upd.shape)):
        if a is not None and b is not None and a != b:
            raise InvalidLayer(layer, f"updates {upd.shape} and indices {idx.shape} differ")
    for i, (a, b) in enumerate(zip(data.shape, idx.shape)):
        if i != axis and a is not None and b is not None and b > a:
            raise InvalidLayer(layer, f"dim {i} of indices ({b}) exceeds data ({a})")


def _fill(g, like: str, value, dtype) -> str:
    """A tensor shaped like ``like`` (an int64 shape) filled with ``value``."""
    arr = np.asarray([value], dtype)
    return g.ConstantOfShape(like, value=helper.make_tensor("v", helper.np_dtype_to_tensor_dtype(arr.dtype), [1], arr))


@lowers("ScatterElementsUpdate", "opset3")
def scatter_elements_update3(ctx, layer, inputs):
    """ScatterElementsUpdate-3 (data, indices, updates, axis) -> ScatterElements."""
    return _scatter_elements(ctx, layer, inputs, "none", True)


@lowers("ScatterElementsUpdate", "opset12")
def scatter_elements_update12(ctx, layer, inputs):
    """ScatterElementsUpdate-12 (data, indices, updates, axis; reduction, use_init_val) ->
    ScatterElements(reduction add/mul/min/max) (opset 16, min/max 18). use_init_val=false: a
    first ScatterElements seeds the addressed elements (0, 1, or one of the updates for min/max).
    mean: ScatterElements(add) of the values and of ones, then Div (floor division for
    integers, as the spec says). f16 sum/prod/mean run in f32 (onnxruntime has no f16 kernel)."""
    return _scatter_elements(ctx, layer, inputs, layer.attrs["reduction"], layer.attrs["use_init_val"])


def _scatter_elements(ctx, layer, inputs, reduction, use_init):
    data, idx, upd, axis_v = inputs
    same_rank(layer, data, idx, upd)
    ctx.onnx_type(layer, data.etype)
    axis = _axis(layer, axis_v, data.rank)
    _check_updates(layer, data, idx, upd, axis)
    g = ctx.b
    k = int_indices(ctx, layer, idx)
    if reduction == "none":
        return [g.ScatterElements(data, k, upd, axis=axis)]
    et = data.etype.name
    if et == "boolean":
        raise UnsupportedLayer(layer, f"reduction '{reduction}' on boolean data is not supported")
    ctx.require_opset(layer, 18 if reduction in ("min", "max") else 16, f"reduction '{reduction}'")
    is_float = np.dtype(data.etype.numpy).kind == "f" if data.etype.numpy is not None else True
    widen = et in ("f16", "bf16") and reduction in ("sum", "prod", "mean")
    x, u = (g.Cast(data, to=TensorProto.FLOAT), g.Cast(upd, to=TensorProto.FLOAT)) if widen else (data, upd)
    if reduction != "mean":
        if not use_init:
            if reduction in ("min", "max"):
                seed = u  # min/max are idempotent: any one of the updates is a neutral start
            else:
                seed = _fill(g, g.Shape(k), 0 if reduction == "sum" else 1, _np_of(data, widen))
            x = g.ScatterElements(x, k, seed, axis=axis)
        out = g.ScatterElements(x, k, u, axis=axis, reduction=_ONNX_REDUCTION[reduction])
        return [g.Cast(out, to=data.etype.onnx) if widen else out]
    dt = _np_of(data, widen)
    if not use_init:
        x = g.ScatterElements(x, k, _fill(g, g.Shape(k), 0, dt), axis=axis)
    total = g.ScatterElements(x, k, u, axis=axis, reduction="add")
    count_dt = dt if (is_float or widen) else np.int64
    base = _fill(g, g.Shape(data), 1 if use_init else 0, count_dt)
    count = g.ScatterElements(base, k, _fill(g, g.Shape(k), 1, count_dt), axis=axis, reduction="add")
    count = g.Max(count, g.const([1], count_dt))  # untouched elements (use_init_val=false) keep data
    if is_float or widen:
        out = g.Div(total, count)
        return [g.Cast(out, to=data.etype.onnx) if widen else out]
    wide = g.Cast(total, to=_INT64)
    floor = g.Div(g.Sub(wide, g.Mod(wide, count)), count)  # Mod takes the divisor's sign: floor
    return [g.Cast(floor, to=data.etype.onnx)]


def _np_of(data, widen):
    return np.float32 if widen else np.dtype(data.etype.numpy)


@lowers("ScatterUpdate", "opset3")
def scatter_update3(ctx, layer, inputs):
    """ScatterUpdate-3 (data, indices, updates, axis) -> Reshape (indices to 1-D, their dims in
    updates to one), Expand (indices to the updates' shape), ScatterElements(axis). Constant
    negative indices are refused (the spec's bounds are [0, dim - 1]; run-time ones are not
    checked: onnxruntime then counts them from the end)."""
    data, idx, upd, axis_v = inputs
    if data.rank is None or idx.rank is None or upd.rank is None:
        raise UnsupportedLayer(layer, "ScatterUpdate needs inputs of known rank")
    ctx.onnx_type(layer, data.etype)
    r, q = data.rank, idx.rank
    if r == 0:
        raise InvalidLayer(layer, "data must have rank >= 1")
    axis = _axis(layer, axis_v, r)
    if upd.etype != data.etype:
        raise InvalidLayer(layer, f"updates are {upd.etype.name} but data is {data.etype.name}")
    want = data.shape[:axis] + idx.shape + data.shape[axis + 1:]
    if upd.rank != len(want) or any(a is not None and b is not None and a != b for a, b in zip(want, upd.shape)):
        raise InvalidLayer(layer, f"updates {upd.shape} must have shape data[:axis] + indices + data[axis+1:] = {want}")
    if idx.is_const and np.any(np.asarray(idx.value()) < 0):
        raise InvalidLayer(layer, "ScatterUpdate-3 indices must be in [0, dim - 1]; a negative one is given")
    g = ctx.b
    k = g.Reshape(int_indices(ctx, layer, idx), i64(g, [-1]))
    u = upd.name
    if q != 1:
        count = i64(g, [int(np.prod(idx.shape))], "n") if all(d is not None for d in idx.shape) \
            else g.Reshape(g.Size(idx), i64(g, [1]))
        pieces = [p for p in (dims_of(g, upd, 0, axis) if axis else None, count,
                              dims_of(g, upd, axis + q) if axis + 1 < r else None) if p is not None]
        u = g.Reshape(upd, pieces[0] if len(pieces) == 1 else g.Concat(*pieces, axis=0), allowzero=1)
    k = g.Reshape(k, i64(g, [1] * axis + [-1] + [1] * (r - axis - 1)))
    k = g.Expand(k, g.Shape(u))
    return [g.ScatterElements(data, k, u, axis=axis)]


# -- ScatterNDUpdate-3/-15 -------------------------------------------------------------------
def _scatter_nd_checks(ctx, layer, inputs):
    data, idx, updates = inputs
    known_ranks(layer, data, idx, updates)
    ctx.onnx_type(layer, data.etype)
    if updates.etype != data.etype:
        raise InvalidLayer(layer, f"updates are {updates.etype.name} but data is {data.etype.name}")
    depth = idx.shape[-1] if idx.rank else None
    if depth is None:
        raise UnsupportedLayer(layer, "indices of rank 0 or with a dynamic last dim are not supported")
    if depth > data.rank:
        raise InvalidLayer(layer, f"indices address {depth} dims of a rank-{data.rank} tensor")
    if updates.rank != idx.rank - 1 + data.rank - depth:
        raise InvalidLayer(layer, f"updates of rank {updates.rank} do not match indices {idx.shape} and "
                                  f"data of rank {data.rank}")


@lowers("ScatterNDUpdate", "opset4")
def scatter_nd_update3(ctx, layer, inputs):
    """ScatterNDUpdate-3 (data, indices, updates; OpenVINO writes version opset4) -> ScatterND
    (Cast of i32 indices)."""
    _scatter_nd_checks(ctx, layer, inputs)
    data, idx, updates = inputs
    return [ctx.b.ScatterND(data, i64_indices(ctx, layer, idx), updates)]


@lowers("ScatterNDUpdate", "opset15")
def scatter_nd_update15(ctx, layer, inputs):
    """ScatterNDUpdate-15 (data, indices, updates; reduction) -> ScatterND(reduction none, add,
    mul (opset 16), min, max (opset 18)); sub: add of the negated updates (Neg; 0 - u for unsigned,
    wrapping like x - u). Float min/max follow the spec's Python ``min(x, y)``: a NaN update leaves
    the element, a NaN element stays (IsNaN, Where around ScatterND). Boolean: sum/max = add (OR),
    prod/min = mul (AND), sub = XOR (an add of u8 counts, Mod 2). f16/bf16 reductions run in f32."""
    _scatter_nd_checks(ctx, layer, inputs)
    data, idx, upd = inputs
    g, k, red = ctx.b, i64_indices(ctx, layer, idx), layer.attrs["reduction"]
    if red == "none":
        return [g.ScatterND(data, k, upd)]
    et = data.etype.name
    ctx.require_opset(layer, 18 if red in ("min", "max") and et != "boolean" else 16, f"reduction '{red}'")
    if et == "boolean":
        if red == "sub":
            u8 = TensorProto.UINT8
            total = g.ScatterND(g.Cast(data, to=u8), k, g.Cast(upd, to=u8), reduction="add")
            return [g.Cast(g.Mod(total, g.const([2], np.uint8)), to=TensorProto.BOOL)]
        return [g.ScatterND(data, k, upd, reduction="add" if red in ("sum", "max") else "mul")]
    widen = et in ("f16", "bf16")
    x, u = (g.Cast(data, to=TensorProto.FLOAT), g.Cast(upd, to=TensorProto.FLOAT)) if widen else (data.name, upd.name)
    kind = "f" if widen else np.dtype(data.etype.numpy).kind
    if red == "sub":
        u = g.Neg(u) if kind in "fi" else g.Sub(g.const([0], np.dtype(data.etype.numpy)), u)
    if red in ("min", "max") and kind == "f":
        neutral = g.const([np.inf if red == "min" else -np.inf], np.float32 if widen else data.etype.numpy)
        u = g.Where(g.IsNaN(u), neutral, u)
        out = g.Where(g.IsNaN(x), x, g.ScatterND(x, k, u, reduction=red))
    else:
        out = g.ScatterND(x, k, u, reduction=_ONNX_REDUCTION.get(red, "add"))
    return [g.Cast(out, to=data.etype.onnx) if widen else out]
