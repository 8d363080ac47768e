"""Element-wise comparisons: Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual (all -1)
-> Equal, Not(Equal), Less, LessOrEqual, Greater, GreaterOrEqual; the output is boolean.

Operands have one element type and broadcast by ``auto_broadcast`` (numpy or none); small constant
operands are folded at convert time. NaN compares unequal to everything (NotEqual gives true).
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import check_broadcast, foldable, same_etype


def _compare(ctx, layer, inputs, onnx_op: str, fold, ordered: bool = True):
    a, b = inputs
    same_etype(layer, a, b)
    check_broadcast(layer, a.shape, b.shape)
    et = a.etype
    if et.numpy is None or (ordered and et.name == "boolean") or et.name == "string":
        raise UnsupportedLayer(layer, f"{layer.type} on element type {et.name} is not supported")
    ctx.onnx_type(layer, et)
    if foldable(a, b):
        with np.errstate(invalid="ignore"):
            return [np.asarray(fold(a.value(), b.value()), dtype=np.bool_)]
    if onnx_op == "NotEqual":
        return [ctx.b.Not(ctx.b.Equal(a, b))]
    return [ctx.b.op(onnx_op, a, b)]


@lowers("Equal", "opset1")
def equal(ctx, layer, inputs):
    """Equal-1 -> Equal."""
    return _compare(ctx, layer, inputs, "Equal", np.equal, ordered=False)


@lowers("NotEqual", "opset1")
def not_equal(ctx, layer, inputs):
    """NotEqual-1 -> Equal, Not."""
    return _compare(ctx, layer, inputs, "NotEqual", np.not_equal, ordered=False)


@lowers("Less", "opset1")
def less(ctx, layer, inputs):
    """Less-1 -> Less."""
    return _compare(ctx, layer, inputs, "Less", np.less)


@lowers("LessEqual", "opset1")
def less_equal(ctx, layer, inputs):
    """LessEqual-1 -> LessOrEqual."""
    return _compare(ctx, layer, inputs, "LessOrEqual", np.less_equal)


@lowers("Greater", "opset1")
def greater(ctx, layer, inputs):
    """Greater-1 -> Greater."""
    return _compare(ctx, layer, inputs, "Greater", np.greater)


@lowers("GreaterEqual", "opset1")
def greater_equal(ctx, layer, inputs):
    """GreaterEqual-1 -> GreaterOrEqual."""
    return _compare(ctx, layer, inputs, "GreaterOrEqual", np.greater_equal)
