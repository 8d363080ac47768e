"""Element-wise binary arithmetic (Add, Subtract, Multiply, Divide, Maximum, Minimum) and the
reductions (ReduceProd, ReduceSum) that OpenVINO writes in shape subgraphs and elsewhere.

Small constant operands are folded at convert time (numpy, wrapping integer arithmetic like
OpenVINO), so static models keep constant Reshape shapes; everything else becomes ONNX nodes.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import foldable
from ..lowering.registry import lowers
from ..lowering.shapes import i64

_INT64 = 7  # TensorProto.INT64
_INT32 = 6  # TensorProto.INT32


def _check_operands(layer, a, b) -> None:
    """Same element type; shapes compatible under ``auto_broadcast`` (where they are known)."""
    if a.etype != b.etype:
        raise InvalidLayer(layer, f"operands have different element types ({a.etype.name} and {b.etype.name})")
    if a.etype.name in ("boolean", "string") or a.etype.numpy is None:
        raise UnsupportedLayer(layer, f"arithmetic on element type {a.etype.name} has no ONNX counterpart")
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode == "pdpd":
        raise UnsupportedLayer(layer, "auto_broadcast='pdpd' is not supported (only 'numpy' and 'none')")
    if a.shape is None or b.shape is None:
        return
    if mode == "none":
        same_rank = len(a.shape) == len(b.shape)
        if not same_rank or any(x is not None and y is not None and x != y for x, y in zip(a.shape, b.shape)):
            raise InvalidLayer(layer, f"auto_broadcast='none' needs equal shapes, got {list(a.shape)} "
                                      f"and {list(b.shape)}")
        return
    for x, y in zip(reversed(a.shape), reversed(b.shape)):
        if x is not None and y is not None and x != y and 1 not in (x, y):
            raise InvalidLayer(layer, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast (numpy rules)")


def _fold(fn, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = np.asarray(fn(a, b))
    return out.astype(a.dtype, copy=False)


def _binary(ctx, layer, inputs, onnx_op: str, fold):
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b):
        return [_fold(fold, a.value(), b.value())]
    return [ctx.b.op(onnx_op, a, b)]


@lowers("Add", "opset1")
def add(ctx, layer, inputs):
    """Add-1 -> Add (folded for small constants; absorbed by a producer that offers ``absorb_add``,
    e.g. a ConvTranspose taking the bias)."""
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b):
        return [_fold(np.add, a.value(), b.value())]
    for x, other in ((a, b), (b, a)):
        absorb = getattr(x, "absorb_add", None)
        if absorb is not None:
            merged = absorb(other)
            if merged is not None:
                return [merged]
    return [ctx.b.Add(a, b)]


@lowers("Subtract", "opset1")
def subtract(ctx, layer, inputs):
    """Subtract-1 -> Sub."""
    return _binary(ctx, layer, inputs, "Sub", np.subtract)


@lowers("Multiply", "opset1")
def multiply(ctx, layer, inputs):
    """Multiply-1 -> Mul."""
    return _binary(ctx, layer, inputs, "Mul", np.multiply)


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, b)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a)).astype(a.dtype)  # floor -> toward zero


@lowers("Divide", "opset1")
def divide(ctx, layer, inputs):
    """Divide-1 -> Div; signed integers with m_pythondiv=true (floor division) ->
    Div, Mul, Sub, Equal, Not, Less, Xor, And, Cast, Sub (ONNX Div truncates toward zero)."""
    a, b = inputs
    _check_operands(layer, a, b)
    etype = a.etype
    floor = bool(layer.attrs.get("m_pythondiv", True))
    if not etype.is_integer:
        return _binary(ctx, layer, inputs, "Div", np.divide)
    if foldable(a, b):
        bv = b.value()
        if np.any(bv == 0):
            raise InvalidLayer(layer, "integer division by zero in constant operands")
        return [_fold(_floor_div if floor else _trunc_div, a.value(), bv)]
    q = ctx.b.Div(a, b)
    if not floor or etype.name.startswith("u"):
        return [q]
    g = ctx.b
    zero = g.const(np.zeros((), etype.numpy), etype.numpy, "zero")
    r = g.Sub(a, g.Mul(q, b))
    inexact = g.Not(g.Equal(r, zero))
    signs_differ = g.Xor(g.Less(r, zero), g.Less(b, zero))
    adjust = g.Cast(g.And(inexact, signs_differ), to=etype.onnx)
    return [g.Sub(q, adjust)]


def _minmax(ctx, layer, inputs, onnx_op: str, fold):
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b) or a.etype.name not in ("i16", "u16"):
        return _binary(ctx, layer, inputs, onnx_op, fold)
    # onnxruntime's CPU Max/Min lack 16-bit integers; i32 holds both exactly.
    g = ctx.b
    out = g.op(onnx_op, g.Cast(a, to=_INT32), g.Cast(b, to=_INT32))
    return [g.Cast(out, to=a.etype.onnx)]


@lowers("Maximum", "opset1")
def maximum(ctx, layer, inputs):
    """Maximum-1 -> Max (16-bit integers: Cast, Max, Cast)."""
    return _minmax(ctx, layer, inputs, "Max", np.maximum)


@lowers("Minimum", "opset1")
def minimum(ctx, layer, inputs):
    """Minimum-1 -> Min (16-bit integers: Cast, Min, Cast)."""
    return _minmax(ctx, layer, inputs, "Min", np.minimum)


def _reduce(ctx, layer, inputs, onnx_op: str, fold):
    x, axes_v = inputs
    if not axes_v.is_const:
        raise UnsupportedLayer(layer, "axes known only at run time are not supported")
    if x.etype.name in ("boolean", "string") or x.etype.numpy is None:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name} has no ONNX counterpart")
    keep = bool(layer.attrs.get("keep_dims", False))
    axes = [int(v) for v in np.asarray(axes_v.value()).reshape(-1)]
    rank = x.rank
    if rank is not None:
        if any(not -rank <= ax < max(rank, 1) for ax in axes):
            raise InvalidLayer(layer, f"axes {axes} out of range for rank {rank}")
        axes = sorted({ax % rank if rank else 0 for ax in axes})
    elif any(ax < 0 for ax in axes):
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
    else:
        out = _onnx_reduce(ctx, onnx_op, data, axes, keep)
    return [out if back is None else g.Cast(out, to=back)]


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


@lowers("ReduceProd", "opset1")
def reduce_prod(ctx, layer, inputs):
    """ReduceProd-1 -> ReduceProd (axes an input from opset 18); integers: Slice, Mul halving each
    reduced axis (narrow integers via Cast to i64), as onnxruntime's ReduceProd saturates."""
    return _reduce(ctx, layer, inputs, "ReduceProd", np.prod)


@lowers("ReduceSum", "opset1")
def reduce_sum(ctx, layer, inputs):
    """ReduceSum-1 -> ReduceSum (narrow integers via Cast to i64)."""
    return _reduce(ctx, layer, inputs, "ReduceSum", np.sum)
