"""Element-wise activations (ReLU, Sigmoid, Tanh, Exp, Sqrt, Clamp, Gelu, HSwish, Swish) and
SoftMax. Small constant inputs are folded at convert time (float64 formulas rounded once)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import FLOAT_TYPES, float_elementwise, float_input, foldable
from ..lowering.registry import lowers

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
        return [ctx.b.Clip(x, _scalar(ctx, 0, x.etype))]
    raise UnsupportedLayer(layer, f"ReLU on element type {name} is not supported")


@lowers("Sigmoid", "opset1")
def sigmoid(ctx, layer, inputs):
    """Sigmoid-1 -> Sigmoid."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Sigmoid, lambda v: 1 / (1 + np.exp(-v)))


@lowers("Tanh", "opset1")
def tanh(ctx, layer, inputs):
    """Tanh-1 -> Tanh."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Tanh, np.tanh)


@lowers("Exp", "opset1")
def exp(ctx, layer, inputs):
    """Exp-1 -> Exp."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Exp, np.exp)


@lowers("Sqrt", "opset1")
def sqrt(ctx, layer, inputs):
    """Sqrt-1 -> Sqrt (negative inputs give NaN)."""
    return float_elementwise(ctx, layer, inputs, ctx.b.Sqrt, np.sqrt)


def clamp_bounds(layer, etype) -> tuple[float | int, float | int]:
    """The bounds in the input's type: integers take ceil(min) and floor(max), saturated."""
    lo, hi = float(layer.attrs["min"]), float(layer.attrs["max"])
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise InvalidLayer(layer, f"min={lo} must not be greater than max={hi}")
    if not etype.is_integer:
        return lo, hi
    info = np.iinfo(etype.numpy)
    lo_i = info.min if lo <= info.min else (info.max if lo >= info.max else math.ceil(lo))
    hi_i = info.max if hi >= info.max else (info.min if hi <= info.min else math.floor(hi))
    if lo_i > hi_i:
        raise UnsupportedLayer(layer, f"min={lo} and max={hi} leave no integer between them")
    return lo_i, hi_i


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
    return [ctx.b.Clip(x, _scalar(ctx, lo, x.etype), _scalar(ctx, hi, x.etype))]


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
    if ctx.opset >= 20:
        return [g.Gelu(x, approximate="tanh" if mode == "tanh" else "none")]
    half_x = g.Mul(x, _scalar(ctx, 0.5, et))
    if mode == "tanh":
        cube = g.Mul(g.Mul(x, x), x)
        inner = g.Add(x, g.Mul(cube, _scalar(ctx, 0.044715, et)))
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
    0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))) as Mul, Add, Tanh, Add, Mul."""
    mode = str(layer.attrs.get("approximation_mode", "ERF")).lower()
    return _gelu(ctx, layer, inputs, mode)


@lowers("HSwish", "opset4")
def hswish(ctx, layer, inputs):
    """HSwish-4 -> HardSwish: x * min(max(x + 3, 0), 6) / 6."""
    return float_elementwise(ctx, layer, inputs, ctx.b.HardSwish, lambda v: v * np.clip(v + 3, 0, 6) / 6)


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


def _softmax(ctx, layer, inputs, allow_negative: bool):
    x = inputs[0]
    float_input(ctx, layer, x)
    axis = int(layer.attrs.get("axis", 1))
    rank = x.rank
    low = -rank if (allow_negative and rank is not None) else 0
    if (rank is not None and not low <= axis < rank) or (not allow_negative and axis < 0):
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {rank}")
    if rank == 0:
        raise InvalidLayer(layer, "SoftMax needs an input of rank >= 1")
    return [ctx.b.Softmax(x, axis=axis)]


@lowers("SoftMax", "opset1")
def softmax1(ctx, layer, inputs):
    """SoftMax-1 -> Softmax(axis) (opset 13 semantics: one axis)."""
    return _softmax(ctx, layer, inputs, allow_negative=False)


@lowers("SoftMax", "opset8")
def softmax8(ctx, layer, inputs):
    """SoftMax-8 -> Softmax(axis) (negative axes count from the end)."""
    return _softmax(ctx, layer, inputs, allow_negative=True)
