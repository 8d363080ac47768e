"""More activations: PReLU-1, Elu-1, SoftPlus-4, Mish-4 and LogSoftmax-5 (floats only; small
constant inputs folded at convert time through :func:`.activations._unary`)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import float_elementwise, float_input, foldable
from ..lowering.registry import lowers
from ..lowering.shapes import i64


def _softplus(v: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, v)


def _refuse_f64(layer, x, onnx_op: str) -> None:
    """onnxruntime's CPU Elu and Softplus have no f64 kernel (constants still fold)."""
    if x.etype is not None and x.etype.name == "f64" and not foldable(x):
        raise UnsupportedLayer(layer, f"{layer.type} on f64 is not supported (onnxruntime's {onnx_op} "
                                      "is f16/f32 only)")


def _slope_shape(layer, x, slope) -> tuple | None:
    """The shape the slope takes before numpy broadcasting: OpenVINO puts a 1-D slope whose size
    equals the channel dim (dim 1, or dim 0 of a 1-D input) along that dim."""
    if x.rank is None or slope.shape is None:
        raise UnsupportedLayer(layer, "PReLU needs inputs of known rank")
    if len(slope.shape) != 1 or x.rank < 2:
        return None
    channel, size = x.shape[1], slope.shape[0]
    if channel is None or size is None:
        if size == 1:
            return None
        raise UnsupportedLayer(layer, "PReLU with a dynamic channel dim or slope size is not supported "
                                      "(OpenVINO decides per-channel or numpy broadcasting by the sizes)")
    if channel == size:
        return (size,) + (1,) * (x.rank - 2)
    return None


@lowers("PReLU", "opset1")
def prelu(ctx, layer, inputs):
    """PReLU-1 -> PRelu (a per-channel 1-D slope reshaped to [C, 1, ...] first)."""
    x, slope = inputs
    float_input(ctx, layer, x)
    if slope.etype != x.etype:
        raise InvalidLayer(layer, f"slope is {slope.etype.name} but data is {x.etype.name}")
    shape = _slope_shape(layer, x, slope)
    if shape is None and slope.rank > x.rank:
        raise InvalidLayer(layer, f"slope of rank {slope.rank} does not broadcast to data of rank {x.rank}")
    if foldable(x) and foldable(slope):
        v, s = x.value().astype(np.float64), np.asarray(slope.value()).astype(np.float64)
        s = s if shape is None else s.reshape(shape)
        return [np.where(v < 0, v * s, v).astype(x.etype.numpy)]
    if shape is not None:
        if slope.is_const:
            slope = ctx.b.const_value(np.asarray(slope.value()).reshape(shape), hint=layer.name)
        else:
            slope = ctx.b.Reshape(slope, i64(ctx.b, list(shape)))
    return [ctx.b.PRelu(x, slope)]


@lowers("Elu", "opset1")
def elu(ctx, layer, inputs):
    """Elu-1 -> Elu(alpha): x if x > 0 else alpha * (exp(x) - 1)."""
    alpha = float(layer.attrs["alpha"])
    _refuse_f64(layer, inputs[0], "Elu")
    return float_elementwise(ctx, layer, inputs, lambda x: ctx.b.Elu(x, alpha=alpha),
                  lambda v: np.where(v > 0, v, alpha * np.expm1(v)))


@lowers("SoftPlus", "opset4")
def softplus(ctx, layer, inputs):
    """SoftPlus-4 -> Softplus: ln(1 + exp(x))."""
    _refuse_f64(layer, inputs[0], "Softplus")
    return float_elementwise(ctx, layer, inputs, ctx.b.Softplus, _softplus)


@lowers("Mish", "opset4")
def mish(ctx, layer, inputs):
    """Mish-4 -> Mish (opset >= 18) or Softplus, Tanh, Mul: x * tanh(ln(1 + exp(x)))."""
    g = ctx.b
    if ctx.opset >= 18:
        emit = g.Mish
    else:
        _refuse_f64(layer, inputs[0], "Softplus")

        def emit(x):
            return g.Mul(x, g.Tanh(g.Softplus(x)))
    return float_elementwise(ctx, layer, inputs, emit, lambda v: v * np.tanh(_softplus(v)))


@lowers("LogSoftmax", "opset5")
def log_softmax(ctx, layer, inputs):
    """LogSoftmax-5 -> LogSoftmax(axis) (negative axes count from the end)."""
    x = inputs[0]
    float_input(ctx, layer, x)
    axis = int(layer.attrs["axis"])
    if x.rank is not None and not -x.rank <= axis < x.rank:
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {x.rank}")
    return [ctx.b.LogSoftmax(x, axis=axis)]
