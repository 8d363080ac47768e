"""ReduceL1-4, ReduceL2-4 (through the shared reduction lowering of :mod:`.elementwise`) and
NormalizeL2-1: x / sqrt(max(sum(x^2), eps)) or x / sqrt(sum(x^2) + eps) over constant axes ->
ReduceSumSquare(keepdims=1), Max/Add, Sqrt, Div. Floats only."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import const_ints, float_input
from ..lowering.registry import lowers
from ..lowering.shapes import i64
from .elementwise import _reduce


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


@lowers("NormalizeL2", "opset1")
def normalize_l2(ctx, layer, inputs):
    """NormalizeL2-1 -> ReduceSumSquare(keepdims=1), Max or Add (eps), Sqrt, Div."""
    x, axes_v = inputs
    float_input(ctx, layer, x)
    if x.rank is None:
        raise UnsupportedLayer(layer, "NormalizeL2 needs data of known rank")
    axes = const_ints(layer, axes_v, "axes")
    if not axes:
        raise UnsupportedLayer(layer, "NormalizeL2 over no axes is not supported (OpenVINO's CPU plugin "
                                      "returns |x|/|x| there, not x/|x|)")
    if any(not -x.rank <= a < x.rank for a in axes):
        raise InvalidLayer(layer, f"axes {axes} out of range for rank {x.rank}")
    axes = sorted({a % x.rank for a in axes})
    g = ctx.b
    eps = g.const(np.asarray(layer.attrs["eps"], x.etype.numpy), x.etype.numpy, "eps")
    if ctx.opset >= 18:
        total = g.ReduceSumSquare(x, i64(g, axes, "axes"), keepdims=1)
    else:
        total = g.ReduceSumSquare(x, axes=axes, keepdims=1)
    total = g.Max(total, eps) if layer.attrs["eps_mode"] == "max" else g.Add(total, eps)
    return [g.Div(x, g.Sqrt(total))]
