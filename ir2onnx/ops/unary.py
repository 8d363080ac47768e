"""Element-wise unary math: Erf, Negative, Abs, Log, Floor, Ceiling (all -1).

Small constant inputs are folded at convert time. Integer inputs follow OpenVINO: Floor and
Ceiling leave them unchanged, Negative and Abs wrap modulo 2^bits (Abs(INT_MIN) = INT_MIN).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.inputs import float_elementwise, foldable
from ..lowering.registry import lowers

_erf = np.vectorize(math.erf, otypes=[np.float64])
_INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def _etype_name(x) -> str:
    return x.etype.name if x.etype is not None else "?"


@lowers("Erf", "opset1")
def erf(ctx, layer, inputs):
    """Erf-1 -> Erf (f16, f32; onnxruntime has no f64 Erf, so f64 is refused)."""
    if _etype_name(inputs[0]) == "f64" and not foldable(inputs[0]):
        raise UnsupportedLayer(layer, "Erf on f64 is not supported (onnxruntime's Erf is f16/f32 only)")
    return float_elementwise(ctx, layer, inputs, ctx.b.Erf, _erf)


@lowers("Log", "opset1")
def log(ctx, layer, inputs):
    """Log-1 -> Log (floats; log(0) = -inf, negative inputs give NaN)."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Log, np.log)


def _round(ctx, layer, inputs, onnx_op: str, fn):
    x = inputs[0]
    if _etype_name(x) in _INTS:
        return [x]  # integers are already whole numbers
    return float_elementwise(ctx, layer, inputs, lambda v: ctx.b.op(onnx_op, v), fn)


@lowers("Floor", "opset1")
def floor(ctx, layer, inputs):
    """Floor-1 -> Floor (integer inputs pass through unchanged)."""
    return _round(ctx, layer, inputs, "Floor", np.floor)


@lowers("Ceiling", "opset1")
def ceiling(ctx, layer, inputs):
    """Ceiling-1 -> Ceil (integer inputs pass through unchanged)."""
    return _round(ctx, layer, inputs, "Ceil", np.ceil)


def _integer(ctx, layer, x, fold, emit):
    ctx.onnx_type(layer, x.etype)
    if foldable(x):
        with np.errstate(over="ignore"):
            return [np.asarray(fold(x.value())).astype(x.etype.numpy)]
    return [emit()]


@lowers("Negative", "opset1")
def negative(ctx, layer, inputs):
    """Negative-1 -> Neg (unsigned integers: Sub(0, x), wrapping modulo 2^bits)."""
    x, g = inputs[0], ctx.b
    name = _etype_name(x)
    if name in _INTS:
        if name.startswith("u"):
            zero = g.const(np.zeros((), x.etype.numpy), x.etype.numpy, "zero")
            return _integer(ctx, layer, x, lambda v: np.zeros((), v.dtype) - v, lambda: g.Sub(zero, x))
        return _integer(ctx, layer, x, np.negative, lambda: g.Neg(x))
    return float_elementwise(ctx, layer, inputs, g.Neg, np.negative)


@lowers("Abs", "opset1")
def abs_(ctx, layer, inputs):
    """Abs-1 -> Abs (unsigned integers pass through unchanged)."""
    x, g = inputs[0], ctx.b
    name = _etype_name(x)
    if name.startswith("u") and name in _INTS:
        return [x]
    if name in _INTS:
        return _integer(ctx, layer, x, np.abs, lambda: g.Abs(x))
    return float_elementwise(ctx, layer, inputs, g.Abs, np.abs)
