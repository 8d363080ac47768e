"""The activations: ReLU, Sigmoid, Tanh, Clamp, Gelu-2/-7, HSwish, Swish, PReLU, Elu, SoftPlus,
Mish, HSigmoid, SoftSign and Selu (floats; ReLU and Clamp also integers). Small constant inputs are
folded at convert time (float64 formulas rounded once).

HSigmoid is the spec's formula ``Div(Clip(Add(x, 3), 0, 6), 6)`` rather than ONNX HardSigmoid
(alpha=1/6, beta=0.5): measured on 220k f32 values, the formula is within 1 ulp (5.96e-8) of
OpenVINO's CPU plugin, HardSigmoid within 2 ulps (1.19e-7); neither is bit-exact with it
(29% vs 33% of the values), and the formula also covers f64, which HardSigmoid lacks.
"""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._activations_checks import check_scalar_param, clamp_bounds, refuse_f64, slope_shape, type_name
from ._common.inputs import FLOAT_TYPES, float_elementwise, float_input, foldable
from ._common.shapes import i64

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _scalar(ctx, value, etype) -> str:
    return ctx.b.const(np.asarray(value, dtype=etype.numpy), etype.numpy, "scalar")


@lowers("ReLU", "opset1")
def relu(ctx, layer, inputs):
    """ReLU-1 -> Relu (signed integers: Clip(x, 0); unsigned integers: unchanged)."""
    x = inputs[0]
    name = x.etype.name if x.etype else "?"
    if name in FLOAT_TYPES:
        return float_elementwise(ctx, layer, inputs, ctx.b.Relu, lambda v: np.maximum(v, 0))
    if name in ("u8", "u16", "u32", "u64"):
        return [x]
    if name in ("i8", "i16", "i32", "i64"):
        if foldable(x):
            return [np.maximum(x.value(), 0).astype(x.etype.numpy)]
        return [_clip(ctx, x, 0, None)]
    raise UnsupportedLayer(layer, f"ReLU on element type {name} is not supported")


def _clip(ctx, x, lo, hi) -> str:
    """Clip(x, lo[, hi]); i16/u16, which onnxruntime's CPU Clip lacks, through i32/u32 (exact)."""
    g, et = ctx.b, x.etype
    wide = {"i16": (TensorProto.INT32, np.int32), "u16": (TensorProto.UINT32, np.uint32)}.get(et.name)
    bounds = [g.const(np.array(v, wide[1] if wide else et.numpy), wide[1] if wide else et.numpy, "bound")
              for v in (lo, hi) if v is not None]
    return g.Clip(x, *bounds) if wide is None else g.Cast(g.Clip(g.Cast(x, to=wide[0]), *bounds), to=et.onnx)


@lowers("Sigmoid", "opset1")
def sigmoid(ctx, layer, inputs):
    """Sigmoid-1 -> Sigmoid."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Sigmoid, lambda v: 1 / (1 + np.exp(-v)))


@lowers("Tanh", "opset1")
def tanh(ctx, layer, inputs):
    """Tanh-1 -> Tanh."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Tanh, np.tanh)


@lowers("Clamp", "opset1")
def clamp(ctx, layer, inputs):
    """Clamp-1 -> Clip(x, min, max) with the bounds in the input's type (integers: ceil(min),
    floor(max))."""
    x = inputs[0]
    if x.etype is None or x.etype.numpy is None or x.etype.name in ("boolean", "string") or x.etype.bits < 8:
        raise UnsupportedLayer(layer, f"Clamp on element type {x.etype.name if x.etype else '?'} is not supported")
    ctx.onnx_type(layer, x.etype)
    lo, hi = clamp_bounds(layer, x.etype)
    if foldable(x):
        return [np.clip(x.value(), np.asarray(lo, x.etype.numpy), np.asarray(hi, x.etype.numpy))]
    return [_clip(ctx, x, lo, hi)]


def _gelu(ctx, layer, inputs, mode: str):
    g = ctx.b
    x = inputs[0]
    float_input(ctx, layer, x)
    et = x.etype
    if foldable(x):
        v = x.value().astype(np.float64)
        if mode == "tanh":
            y = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
        else:
            y = 0.5 * v * (1 + _erf(v / math.sqrt(2)))
        return [y.astype(et.numpy)]
    if et.name == "f64" and mode != "tanh":
        raise UnsupportedLayer(layer, "Gelu (erf) on f64 is not supported: onnxruntime's CPU provider "
                                      "has no f64 Erf or Gelu kernel")
    if ctx.opset >= 20:
        return [g.Gelu(x, approximate="tanh" if mode == "tanh" else "none")]
    half_x = g.Mul(x, _scalar(ctx, 0.5, et))
    if mode == "tanh":  # f32: Pow(x, 3) first, the form onnxruntime's FastGeluFusion takes
        cube = g.Pow(x, _scalar(ctx, 3, et)) if et.name == "f32" else g.Mul(g.Mul(x, x), x)
        inner = g.Add(g.Mul(cube, _scalar(ctx, 0.044715, et)), x)
        core = g.Tanh(g.Mul(inner, _scalar(ctx, math.sqrt(2 / math.pi), et)))
    else:
        core = g.Erf(g.Div(x, _scalar(ctx, math.sqrt(2), et)))
    return [g.Mul(half_x, g.Add(core, _scalar(ctx, 1, et)))]


@lowers("Gelu", "opset2")
def gelu2(ctx, layer, inputs):
    """Gelu-2 -> Gelu (opset >= 20) or Mul, Div, Erf, Add, Mul: 0.5*x*(1 + erf(x/sqrt(2)))."""
    return _gelu(ctx, layer, inputs, "erf")


@lowers("Gelu", "opset7")
def gelu7(ctx, layer, inputs):
    """Gelu-7 -> Gelu (opset >= 20) or, below, erf: Mul, Div, Erf, Add, Mul; tanh:
    0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))) as Pow (f32; else Mul, Mul), Mul, Add, Mul,
    Tanh, Add, Mul: onnxruntime fuses the f32 form into FastGelu."""
    mode = str(layer.attrs.get("approximation_mode", "ERF")).lower()
    return _gelu(ctx, layer, inputs, mode)


@lowers("HSwish", "opset4")
def hswish(ctx, layer, inputs):
    """HSwish-4 -> HardSwish: x * min(max(x + 3, 0), 6) / 6 (f64, which onnxruntime's CPU
    HardSwish lacks: Add, Clip, Div, Mul)."""
    emit = lambda x: ctx.b.HardSwish(x) if x.etype.name != "f64" else ctx.b.Mul(x, _hard(ctx, x))  # noqa: E731
    return float_elementwise(ctx, layer, inputs, emit, lambda v: v * np.clip(v + 3, 0, 6) / 6)


def _hard(ctx, x) -> str:
    """min(max(x + 3, 0), 6) / 6 as Add, Clip, Div in x's type."""
    g, six = ctx.b, _scalar(ctx, 6, x.etype)
    return g.Div(g.Clip(g.Add(x, _scalar(ctx, 3, x.etype)), _scalar(ctx, 0, x.etype), six), six)


@lowers("Swish", "opset4")
def swish(ctx, layer, inputs):
    """Swish-4 -> Mul(x, Sigmoid(x * beta)) (beta: optional scalar input, default 1)."""
    x = inputs[0]
    float_input(ctx, layer, x)
    beta = inputs[1] if len(inputs) > 1 else None
    if beta is not None:
        if beta.etype != x.etype:
            raise InvalidLayer(layer, f"beta is {beta.etype.name} but data is {x.etype.name}")
        if beta.shape is not None and int(np.prod(beta.shape)) != 1:
            raise InvalidLayer(layer, f"beta must be a scalar, got shape {list(beta.shape)}")
    g = ctx.b
    if beta is None or (beta.is_const and float(np.asarray(beta.value()).reshape(-1)[0]) == 1.0):
        return [g.Mul(x, g.Sigmoid(x))]
    b = beta if beta.shape in ((), (1,)) else g.Reshape(beta, g.const([], np.int64), allowzero=0)
    return [g.Mul(x, g.Sigmoid(g.Mul(x, b)))]


# -- PReLU, Elu, SoftPlus, Mish --------------------------------------------------------------
def _softplus(v: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, v)


@lowers("PReLU", "opset1")
def prelu(ctx, layer, inputs):
    """PReLU-1 -> PRelu (a per-channel 1-D slope reshaped to [C, 1, ...] first).

    OpenVINO accepts a slope of another float type than the data (IR v10 FP16 models written by
    the Model Optimizer hold f32 slopes on f16 data) and computes in the wider of the two types,
    rounding the result to the data's type once (measured: f16 data, f32 slope 0.1 -> f16(x * 0.1)
    in f32, not x * f16(0.1)); so does the lowering: Cast -> PRelu -> Cast."""
    x, slope = inputs
    float_input(ctx, layer, x)
    if slope.etype is None or slope.etype.name not in FLOAT_TYPES:
        raise InvalidLayer(layer, f"slope is {slope.etype.name if slope.etype else '?'}; PReLU needs a float slope")
    wide = x.etype if x.etype.bits >= slope.etype.bits else slope.etype
    shape = slope_shape(layer, x, slope)
    if shape is None and slope.rank > x.rank:
        raise InvalidLayer(layer, f"slope of rank {slope.rank} does not broadcast to data of rank {x.rank}")
    if foldable(x) and foldable(slope):
        v, s = x.value().astype(np.float64), np.asarray(slope.value()).astype(np.float64)
        s = s if shape is None else s.reshape(shape)
        return [np.where(v < 0, (v * s).astype(wide.numpy), v).astype(x.etype.numpy)]
    if slope.etype != wide:
        slope = ctx.b.Cast(slope, to=ctx.onnx_type(layer, wide)) if not slope.is_const else \
            ctx.b.const_value(np.asarray(slope.value()).astype(wide.numpy), hint=layer.name)
    if shape is not None:
        if slope.is_const:
            slope = ctx.b.const_value(np.asarray(slope.value()).reshape(shape), hint=layer.name)
        else:
            slope = ctx.b.Reshape(slope, i64(ctx.b, list(shape)))
    if x.etype == wide:
        return [ctx.b.PRelu(x, slope)]
    y = ctx.b.PRelu(ctx.b.Cast(x, to=ctx.onnx_type(layer, wide)), slope)
    return [ctx.b.Cast(y, to=ctx.onnx_type(layer, x.etype))]


@lowers("Elu", "opset1")
def elu(ctx, layer, inputs):
    """Elu-1 -> Elu(alpha): x if x > 0 else alpha * (exp(x) - 1)."""
    alpha = float(layer.attrs["alpha"])
    refuse_f64(layer, inputs[0], "Elu")
    return float_elementwise(ctx, layer, inputs, lambda x: ctx.b.Elu(x, alpha=alpha),
                  lambda v: np.where(v > 0, v, alpha * np.expm1(v)))


@lowers("SoftPlus", "opset4")
def softplus(ctx, layer, inputs):
    """SoftPlus-4 -> Softplus: ln(1 + exp(x))."""
    refuse_f64(layer, inputs[0], "Softplus")
    return float_elementwise(ctx, layer, inputs, ctx.b.Softplus, _softplus)


@lowers("Mish", "opset4")
def mish(ctx, layer, inputs):
    """Mish-4 -> Mish (opset >= 18) or Softplus, Tanh, Mul: x * tanh(ln(1 + exp(x)))."""
    g = ctx.b
    if ctx.opset >= 18:
        emit = g.Mish
    else:
        refuse_f64(layer, inputs[0], "Softplus")

        def emit(x):
            return g.Mul(x, g.Tanh(g.Softplus(x)))
    return float_elementwise(ctx, layer, inputs, emit, lambda v: v * np.tanh(_softplus(v)))


# -- HSigmoid, SoftSign, Selu ----------------------------------------------------------------
@lowers("HSigmoid", "opset5")
def hsigmoid(ctx, layer, inputs):
    """HSigmoid-5 -> Add, Clip, Div: min(max(x + 3, 0), 6) / 6 (f16, f32, f64)."""
    return float_elementwise(ctx, layer, inputs, lambda x: _hard(ctx, x), lambda v: np.clip(v + 3, 0, 6) / 6)


@lowers("SoftSign", "opset9")
def softsign(ctx, layer, inputs):
    """SoftSign-9 -> Softsign (f16, f32); f64: Div(x, Add(Abs(x), 1))."""
    g = ctx.b

    def emit(x):
        if type_name(x) == "f64":  # onnxruntime's Softsign has no double kernel
            return g.Div(x, g.Add(g.Abs(x), _scalar(ctx, 1, x.etype)))
        return g.Softsign(x)

    return float_elementwise(ctx, layer, inputs, emit, lambda v: v / (1 + np.abs(v)))


def _selu64(v, alpha, lam):
    return lam * np.where(v > 0, v, alpha * np.expm1(v))


@lowers("Selu", "opset1")
def selu(ctx, layer, inputs):
    """Selu-1 (data, alpha, lambda) -> Selu(alpha, gamma) for constant alpha/lambda on f16/f32;
    else Mul(lambda, Where(Greater(x, 0), x, Mul(alpha, Sub(Exp(x), 1))))."""
    x, alpha, lam = inputs
    float_input(ctx, layer, x)
    check_scalar_param(layer, alpha, "alpha", x)
    check_scalar_param(layer, lam, "lambda", x)
    if foldable(x, alpha, lam):
        a, l_ = (float(np.asarray(v.value()).reshape(-1)[0]) for v in (alpha, lam))
        with np.errstate(all="ignore"):
            return [_selu64(x.value().astype(np.float64), a, l_).astype(x.etype.numpy)]
    g = ctx.b
    if alpha.is_const and lam.is_const and type_name(x) != "f64":
        a, l_ = (float(np.asarray(v.value()).reshape(-1)[0]) for v in (alpha, lam))
        return [g.Selu(x, alpha=a, gamma=l_)]
    flat = [g.Reshape(v, g.const([], np.int64, "scalar_shape")) for v in (alpha, lam)]  # 0-D: keep x's shape
    neg = g.Mul(flat[0], g.Sub(g.Exp(x), _scalar(ctx, 1, x.etype)))
    return [g.Mul(flat[1], g.Where(g.Greater(x, _scalar(ctx, 0, x.etype)), x, neg))]
