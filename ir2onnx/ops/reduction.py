"""The reductions (keep_dims): ReduceSum, ReduceProd, ReduceMean, ReduceMax,
ReduceMin (-1) and ReduceL1, ReduceL2 (-4), through one shared lowering (axes as an input from ONNX
opset 18, narrow integers via i64; ReduceL1/L2 on floats only); ReduceLogicalAnd/Or-1 on booleans.

Small constant inputs are folded at convert time. Integer ReduceProd halves each reduced axis with
Slice and Mul (onnxruntime's integer ReduceProd saturates where the spec wraps); integer ReduceSum
is a CumSum per axis (onnxruntime's ReduceSum rounds i64 sums beyond 2^53 and saturates; with axes
known only at run time it stays ReduceSum, exact while the sum is within +-2^53). Integer ReduceMean
is i32/i64 only: ReduceSum, Div (truncating, like OpenVINO's reference); OpenVINO's CPU plugin
saturates the sum of narrower integers, which ONNX cannot mirror. Axes known only at run time go
to the ONNX axes input (ReduceSum from opset 13, the others need opset 18: the converter then
chooses 18), negative ones normalised in the graph, noop_with_empty_axes=1.

ReduceLogicalAnd/Or-1 (ONNX has no boolean reduction) count in i64: And is ReduceSum(Cast(Not x))
== 0, Or is ReduceSum(Cast(x)) > 0, so an empty slice gives true / false as the spec's identities
do (ReduceMin/Max of a Cast would give the integer type's extremes there). Axes may be an input
known only at run time (ReduceSum takes them as an input) when their count is static and > 0.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, float_input, foldable, known_rank
from ._common.shapes import as_int64, i64

_INT64 = 7  # TensorProto.INT64


def _const_axes(layer, x, axes_v) -> list[int]:
    """The constant axes, checked and normalised (sorted, unique) where the rank is known."""
    axes = [int(v) for v in np.asarray(axes_v.value()).reshape(-1)]
    rank = x.rank
    if rank is None:
        return axes
    if any(not -rank <= ax < max(rank, 1) for ax in axes):
        raise InvalidLayer(layer, f"axes {axes} out of range for rank {rank}")
    return sorted({ax % rank if rank else 0 for ax in axes})


def _reduce(ctx, layer, inputs, onnx_op: str, fold):
    x, axes_v = inputs
    if x.etype.name in ("boolean", "string") or x.etype.numpy is None:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name} has no ONNX counterpart")
    if not axes_v.is_const:
        return [_run_time_axes(ctx, layer, x, axes_v, onnx_op)]
    keep = bool(layer.attrs.get("keep_dims", False))
    axes = _const_axes(layer, x, axes_v)
    rank = x.rank
    if (onnx_op == "ReduceMean" and x.etype.name == "f32" and rank is not None and rank >= 4
            and sorted(a % rank for a in axes) == list(range(2, rank)) and 0 not in x.shape[2:]
            and not foldable(x)):
        # the mean over every spatial axis of [N, C, H, W(, D)] (not rank 3: there it is as often
        # a transformer's [B, S, H] mean over H, which RMSNorm fusions look for as ReduceMean):
        # GlobalAveragePool, which onnxruntime
        # runs in its NCHWc layout beside the convolutions (ReduceMean makes it reorder the data
        # out of that layout and back; measured in benchmarks/bench_models.py on MobileNetV3)
        pooled = ctx.b.GlobalAveragePool(x)
        return [pooled if keep else ctx.b.Flatten(pooled, axis=1)]  # [N, C, 1, ...] -> [N, C]
    if rank is None and any(ax < 0 for ax in axes):
        raise UnsupportedLayer(layer, "negative axes need a known input rank")
    if not axes or rank == 0:  # no reduction: each output is the op over its one element
        if onnx_op in ("ReduceL1", "ReduceL2"):  # |x|, not x
            return [np.abs(x.value()) if foldable(x) else ctx.b.Abs(x)]
        return [x]
    if foldable(x):
        with np.errstate(over="ignore"):
            return [np.asarray(fold(x.value(), axis=tuple(axes), keepdims=keep)).astype(x.etype.numpy)]
    g = ctx.b
    data, back = x, None
    if x.etype.is_integer and x.etype.name not in ("i32", "i64"):
        # onnxruntime reduces only i32/i64 integers; wrapping arithmetic is exact modulo 2^bits.
        data, back = g.Cast(x, to=_INT64), x.etype.onnx
    if onnx_op == "ReduceProd" and x.etype.is_integer:
        out = _mul_tree(ctx, layer, data, x.shape, axes, keep)
    elif onnx_op == "ReduceSum" and x.etype.is_integer:
        out = _cumsum_total(ctx, data, np.int64 if back is not None else x.etype.numpy, axes, keep)
    else:
        out = _onnx_reduce(ctx, onnx_op, data, axes, keep)
    return [out if back is None else g.Cast(out, to=back)]


def normalized_axes(ctx, layer, x, axes_v) -> str:
    """Axes known at run time as int64, negative ones plus the rank (which must be known)."""
    rank = known_rank(layer, x, 0)
    g = ctx.b
    axes = as_int64(g, axes_v)
    return g.Where(g.Less(axes, i64(g, 0)), g.Add(axes, i64(g, rank)), axes)


def _run_time_axes(ctx, layer, x, axes_v, onnx_op: str) -> str:
    """Axes known at run time -> the ONNX reduction's axes input (ReduceSum from opset 13, the
    others from 18), noop_with_empty_axes=1 as OpenVINO reduces over no axis for empty axes;
    ReduceL1/L2 reduce |x| so that no axis gives |x| too."""
    if onnx_op != "ReduceSum":
        ctx.require_opset(layer, 18, f"{layer.type} with axes known only at run time")
    if onnx_op == "ReduceProd" and x.etype.is_integer:
        raise UnsupportedLayer(layer, "integer ReduceProd over axes known only at run time is not supported "
                                      "(onnxruntime's ReduceProd saturates where the spec wraps; the exact "
                                      "Slice/Mul chain needs the axes at convert time)")
    g = ctx.b
    axes = normalized_axes(ctx, layer, x, axes_v)
    data, back = x, None
    if x.etype.is_integer and x.etype.name not in ("i32", "i64"):
        data, back = g.Cast(x, to=_INT64), x.etype.onnx
    if onnx_op in ("ReduceL1", "ReduceL2"):
        data = g.Abs(data)
    out = g.op(onnx_op, data, axes, keepdims=int(bool(layer.attrs.get("keep_dims", False))),
               noop_with_empty_axes=1)
    return out if back is None else g.Cast(out, to=back)


def _onnx_reduce(ctx, onnx_op: str, data, axes, keep: bool):
    g = ctx.b
    if ctx.opset >= 18 or onnx_op == "ReduceSum":
        return g.op(onnx_op, data, i64(g, axes, "axes"), keepdims=int(keep))
    return g.op(onnx_op, data, axes=axes, keepdims=int(keep))


def _mul_tree(ctx, layer, data, shape, axes, keep: bool):
    """Integer ReduceProd by halving each reduced axis with Slice and Mul (an odd last element is
    carried by Concat): onnxruntime's integer ReduceProd saturates on overflow (measured, 1.31: i32
    2^20 * 2^20 -> 2^31-1) where the spec, numpy and OpenVINO wrap. Reduced dims must be static."""
    g = ctx.b
    for a in axes:
        n = None if shape is None else shape[a]
        if n is None:
            raise UnsupportedLayer(layer, "integer ReduceProd over a dynamic dim is not supported (onnxruntime's "
                                          "ReduceProd saturates on overflow where the spec wraps)")
        if n == 0:  # the empty product: 1, nothing to overflow
            data = _onnx_reduce(ctx, "ReduceProd", data, [a], True)
        while n > 1:
            h = n // 2
            part = lambda b, e: g.Slice(data, i64(g, [b]), i64(g, [e]), i64(g, [a]))  # noqa: E731
            product = g.Mul(part(0, h), part(h, 2 * h))
            data = g.Concat(product, part(2 * h, n), axis=a) if n % 2 else product
            n = h + n % 2
    return data if keep else g.Squeeze(data, i64(g, axes, "axes"))


def _cumsum_total(ctx, data, dtype, axes, keep: bool):
    """Integer ReduceSum as CumSum: onnxruntime's integer ReduceSum accumulates in double and
    saturates (measured, 1.32: i64 2^53 + 1 + 2 -> 2^53 + 2; i32 2^31 - 1 + 1 -> 2^31 - 1) where
    the spec, numpy and torch add exactly and wrap; its CumSum adds exactly and wraps. Per reduced
    axis: a zero slice in front (so an empty axis sums to 0), CumSum, the last slice."""
    g = ctx.b
    zero = g.const(np.zeros((), dtype), dtype, "zero")
    for a in axes:
        shape = g.Shape(data)
        one = g.Concat(g.Slice(shape, i64(g, [0]), i64(g, [a])), i64(g, [1]),
                       g.Slice(shape, i64(g, [a + 1]), i64(g, [2**62])), axis=0)
        total = g.CumSum(g.Concat(g.Expand(zero, one), data, axis=a), i64(g, a))
        data = g.Slice(total, i64(g, [-1]), i64(g, [2**62]), i64(g, [a]))
    return data if keep else g.Squeeze(data, i64(g, axes, "axes"))


@lowers("ReduceProd", "opset1")
def reduce_prod(ctx, layer, inputs):
    """ReduceProd-1 -> ReduceProd (axes an input from opset 18); integers: Slice, Mul halving each
    reduced axis (narrow integers via Cast to i64), as onnxruntime's ReduceProd saturates."""
    return _reduce(ctx, layer, inputs, "ReduceProd", np.prod)


@lowers("ReduceSum", "opset1")
def reduce_sum(ctx, layer, inputs):
    """ReduceSum-1 -> ReduceSum; integers (narrow ones via Cast to i64): per axis Concat(zeros),
    CumSum, Slice, exact and wrapping where onnxruntime's ReduceSum is neither."""
    return _reduce(ctx, layer, inputs, "ReduceSum", np.sum)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a)).astype(a.dtype)  # floor -> toward zero


def _int_mean(x: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    total = np.sum(x.astype(np.int64), axis=axis, keepdims=keepdims)
    count = int(np.prod([x.shape[a] for a in axis])) if x.ndim else 1
    return _trunc_div(total, np.int64(max(count, 1))).astype(x.dtype)


@lowers("ReduceMean", "opset1")
def reduce_mean(ctx, layer, inputs):
    """ReduceMean-1 -> ReduceMean (integers: ReduceSum, Div by the element count; f32 of rank 4-5
    over every axis after the first two: GlobalAveragePool[, Flatten])."""
    x, axes_v = inputs
    if not x.etype.is_integer:
        return _reduce(ctx, layer, inputs, "ReduceMean", np.mean)
    if foldable(x, axes_v):
        return _reduce(ctx, layer, inputs, "ReduceSum", _int_mean)
    if x.etype.name not in ("i32", "i64"):
        raise UnsupportedLayer(layer, f"ReduceMean on {x.etype.name} is not supported (integer means: i32, i64)")
    total = _reduce(ctx, layer, inputs, "ReduceSum", np.sum)[0]
    if total is x:
        return [x]
    g = ctx.b
    if not axes_v.is_const:  # the element count: the product of the reduced dims (1 for none)
        dims = g.Gather(g.Shape(x), normalized_axes(ctx, layer, x, axes_v), axis=0)
        count = g.Max(g.Cast(g.ReduceProd(dims, keepdims=0), to=x.etype.onnx),
                      g.const(np.asarray(1, x.etype.numpy), x.etype.numpy, "one"))
        return [g.Div(total, count)]
    rank = x.rank
    axes = {a % rank for a in const_ints(layer, axes_v, "axes")} if rank else set()
    dims = [x.shape[a] for a in axes]
    if any(d is None for d in dims):
        raise UnsupportedLayer(layer, "integer ReduceMean over dynamic dims is not supported")
    count = int(np.prod(dims))
    return [ctx.b.Div(total, ctx.b.const(np.asarray(max(count, 1), x.etype.numpy), x.etype.numpy, "count"))]


@lowers("ReduceMax", "opset1")
def reduce_max(ctx, layer, inputs):
    """ReduceMax-1 -> ReduceMax (axes an input from opset 18)."""
    return _reduce(ctx, layer, inputs, "ReduceMax", np.max)


@lowers("ReduceMin", "opset1")
def reduce_min(ctx, layer, inputs):
    """ReduceMin-1 -> ReduceMin (axes an input from opset 18)."""
    return _reduce(ctx, layer, inputs, "ReduceMin", np.min)


def _float_reduce(ctx, layer, inputs, onnx_op, fold):
    float_input(ctx, layer, inputs[0])
    return _reduce(ctx, layer, inputs, onnx_op, fold)


def _l1(v, axis, keepdims):
    return np.sum(np.abs(v.astype(np.float64)), axis=axis, keepdims=keepdims)


def _l2(v, axis, keepdims):
    return np.sqrt(np.sum(np.square(v.astype(np.float64)), axis=axis, keepdims=keepdims))


@lowers("ReduceL1", "opset4")
def reduce_l1(ctx, layer, inputs):
    """ReduceL1-4 -> ReduceL1 (axes an input from opset 18)."""
    return _float_reduce(ctx, layer, inputs, "ReduceL1", _l1)


@lowers("ReduceL2", "opset4")
def reduce_l2(ctx, layer, inputs):
    """ReduceL2-4 -> ReduceL2 (axes an input from opset 18)."""
    return _float_reduce(ctx, layer, inputs, "ReduceL2", _l2)


# -- ReduceLogicalAnd, ReduceLogicalOr ------------------------------------------------------------
def _logical_reduce(ctx, layer, inputs, is_and: bool):
    x, axes_v = inputs
    if x.etype.name != "boolean":
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name} is not supported (boolean only)")
    keep = int(bool(layer.attrs.get("keep_dims", False)))
    g = ctx.b
    if axes_v.is_const:
        axes = _const_axes(layer, x, axes_v)
        rank = x.rank
        if not axes or rank == 0:  # no reduction: each output is its one element
            return [x]
        if foldable(x):
            fn = np.all if is_and else np.any
            return [np.asarray(fn(x.value(), axis=tuple(axes), keepdims=bool(keep)))]
        axes_name = i64(g, axes, "axes")
    else:
        if axes_v.shape is None or len(axes_v.shape) > 1 or (axes_v.shape and axes_v.shape[0] in (None, 0)):
            raise UnsupportedLayer(layer, "run-time axes need a static, non-zero count (ONNX's ReduceSum "
                                          "reduces every axis for an empty axes input where OpenVINO reduces none)")
        axes_name = g.Cast(axes_v, to=_INT64) if axes_v.etype.name != "i64" else axes_v.name
    counted = g.Cast(g.Not(x) if is_and else x.name, to=_INT64)
    total = g.ReduceSum(counted, axes_name, keepdims=keep)
    zero = g.const(np.zeros((), np.int64), np.int64, "zero")
    return [g.Equal(total, zero) if is_and else g.Greater(total, zero)]


@lowers("ReduceLogicalAnd", "opset1")
def reduce_logical_and(ctx, layer, inputs):
    """ReduceLogicalAnd-1 -> Not, Cast (i64), ReduceSum, Equal 0 (true over an empty slice)."""
    return _logical_reduce(ctx, layer, inputs, True)


@lowers("ReduceLogicalOr", "opset1")
def reduce_logical_or(ctx, layer, inputs):
    """ReduceLogicalOr-1 -> Cast (i64), ReduceSum, Greater 0 (false over an empty slice)."""
    return _logical_reduce(ctx, layer, inputs, False)
