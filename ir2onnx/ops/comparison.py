"""Element-wise comparisons: Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual (all -1)
-> Equal, Not(Equal), Less, LessOrEqual, Greater, GreaterOrEqual; the output is boolean.

Operands have one element type and broadcast by ``auto_broadcast`` (numpy or none); small constant
operands are folded at convert time. NaN compares unequal to everything (NotEqual gives true).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import Shape
from ..lowering.registry import lowers
from .shape import foldable


def check_broadcast(layer, *shapes: Shape) -> None:
    """Shapes compatible under the layer's ``auto_broadcast`` (numpy or none), where known."""
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode not in ("numpy", "none"):
        raise UnsupportedLayer(layer, f"auto_broadcast='{mode}' is not supported (only 'numpy' and 'none')")
    known = [s for s in shapes if s is not None]
    if mode == "none":
        if len({len(s) for s in known}) > 1 or any(
                len({d for d in dims if d is not None}) > 1 for dims in zip(*known)):
            raise InvalidLayer(layer, "auto_broadcast='none' needs equal shapes, got "
                                      + " and ".join(str(list(s)) for s in known))
        return
    rank = max((len(s) for s in known), default=0)
    for axis in range(1, rank + 1):
        dims = {s[-axis] for s in known if len(s) >= axis and s[-axis] is not None} - {1}
        if len(dims) > 1:
            raise InvalidLayer(layer, "shapes " + ", ".join(str(list(s)) for s in known)
                               + " do not broadcast (numpy rules)")


def same_etype(layer, *values) -> None:
    if len({v.etype for v in values}) > 1:
        names = " and ".join(v.etype.name for v in values)
        raise InvalidLayer(layer, f"operands have different element types ({names})")


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
