"""Element-wise unary math: Exp, Sqrt, Erf, Log, Floor, Ceiling, Negative, Abs, Sign (all -1),
Round-5 and Identity-16 (the input itself: no node).

Small constant inputs are folded at convert time (float64, rounded once to the input type).
Integer inputs follow OpenVINO: Floor, Ceiling and Round leave them unchanged, Negative and Abs
wrap modulo 2^bits (Abs(INT_MIN) = INT_MIN).

Round half_away_from_zero is ``r = Round(x)`` (half to even, exact), then ``r + Sign(x)`` where
``(x - r) * Sign(x) == 0.5`` (a tie rounded toward zero). It is exact for every value, unlike
``Sign(x) * Floor(Abs(x) + 0.5)``, whose ``+ 0.5`` rounds 0.49999997 to 1 and the odd integers in
[2^23, 2^24) up by one in f32 (OpenVINO's CPU plugin gives those wrong results; we follow the spec).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import FLOAT_TYPES, INT_TYPES, float_elementwise, foldable
from ._common.integer_division import floor_divide_chain

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _etype_name(x) -> str:
    return x.etype.name if x.etype is not None else "?"


def _c(ctx, value, x) -> str:
    """A scalar constant in ``x``'s element type."""
    return ctx.b.const(np.asarray(value, x.etype.numpy), x.etype.numpy, "scalar")


@lowers("Exp", "opset1")
def exp(ctx, layer, inputs):
    """Exp-1 -> Exp."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Exp, np.exp)


@lowers("Sqrt", "opset1")
def sqrt(ctx, layer, inputs):
    """Sqrt-1 -> Sqrt (negative inputs give NaN)."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Sqrt, np.sqrt)


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
    if _etype_name(x) in INT_TYPES:
        return [x]  # integers are already whole numbers
    return float_elementwise(ctx, layer, inputs, lambda v: ctx.b.op(onnx_op, v), fn)


@lowers("Floor", "opset1")
def floor(ctx, layer, inputs):
    """Floor-1 -> Floor (integer inputs pass through unchanged, except the output of an integer
    Divide-1 with m_pythondiv=true, PyTorch's ``//``: Div, Mul, Sub, Equal, Not, Less, Xor, And,
    Cast, Sub on the Divide's operands, which :mod:`ir2onnx.ir.idioms` adds as inputs 2 and 3)."""
    x = inputs[0]
    if len(inputs) == 3 and _etype_name(x) in INT_TYPES:
        a, b = inputs[1:]
        if foldable(a, b):
            bv = b.value()
            if np.any(bv == 0):
                raise InvalidLayer(layer, "integer division by zero in constant operands")
            return [np.floor_divide(*np.broadcast_arrays(a.value(), bv)).astype(a.etype.numpy)]
        return [floor_divide_chain(ctx.b, a, b)]
    return _round(ctx, layer, inputs[:1], "Floor", np.floor)


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
    if name in INT_TYPES:
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
    if name.startswith("u") and name in INT_TYPES:
        return [x]
    if name in INT_TYPES:
        return _integer(ctx, layer, x, np.abs, lambda: g.Abs(x))
    return float_elementwise(ctx, layer, inputs, g.Abs, np.abs)


@lowers("Sign", "opset1")
def sign(ctx, layer, inputs):
    """Sign-1 -> Sign (floats and integers; NaN stays NaN, -0.0 gives 0.0 like OpenVINO).
    f16 goes through f32 (Cast, Sign, Cast): onnxruntime's f16 Sign turns NaN into 0."""
    x = inputs[0]
    name = _etype_name(x)
    if name not in FLOAT_TYPES + INT_TYPES:
        raise UnsupportedLayer(layer, f"Sign on element type {name} is not supported "
                                      f"({', '.join(FLOAT_TYPES + INT_TYPES)})")
    ctx.onnx_type(layer, x.etype)
    if foldable(x):
        return [np.sign(x.value()).astype(x.etype.numpy) + np.zeros((), x.etype.numpy)]  # -0.0 -> 0.0
    if name == "f16":
        return [ctx.b.Cast(ctx.b.Sign(ctx.b.Cast(x, to=1)), to=x.etype.onnx)]
    return [ctx.b.Sign(x)]


def round_away(v: np.ndarray) -> np.ndarray:
    """Half away from zero, exactly (ties: |x - trunc(x)| == 0.5)."""
    t = np.trunc(v)
    return np.where(np.abs(v - t) == 0.5, t + np.sign(v), np.round(v))


@lowers("Round", "opset5")
def round5(ctx, layer, inputs):
    """Round-5 -> Round (half_to_even); half_away_from_zero: Round, Sub, Sign, Mul, Equal, Add,
    Where (exact for every value). Integer inputs pass through unchanged."""
    x = inputs[0]
    name = _etype_name(x)
    if name in INT_TYPES:
        ctx.onnx_type(layer, x.etype)
        return [x]
    away = layer.attrs["mode"] == "half_away_from_zero"
    g = ctx.b

    def emit(v):
        r = g.Round(v)
        if not away:
            return r
        s = g.Sign(v)
        tie = g.Equal(g.Mul(g.Sub(v, r), s), _c(ctx, 0.5, v))  # exact: |x - r| <= 0.5, s is +-1 or 0
        return g.Where(tie, g.Add(r, s), r)

    return float_elementwise(ctx, layer, inputs, emit, round_away if away else np.round)


@lowers("Identity", "opset16")
def identity(ctx, layer, inputs):
    """Identity-16 (data) -> the input itself (no node; a model output gets its Identity from Result)."""
    return [inputs[0]]
