"""LogicalNot, LogicalAnd, LogicalOr, LogicalXor (-1; Xor -2) on booleans -> Not, And, Or, Xor; and
Select-1 -> Where. onnxruntime's Where lacks some element types: i16/u16 go through i32/u32,
u64 through i64 (a bit-preserving round trip), booleans become Or(And(c, a), And(Not(c), b)).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common import exact
from ._common.inputs import check_broadcast, foldable, same_etype

_WHERE_TYPES = ("f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32")
_WIDER = {"i16": 6, "u16": 12, "u64": 7}  # TensorProto INT32, UINT32, INT64


def _booleans(layer, *values) -> None:
    for v in values:
        if v.etype is None or v.etype.name != "boolean":
            raise InvalidLayer(layer, f"{layer.type} needs boolean inputs, got {v.etype.name if v.etype else '?'}")


@lowers("LogicalNot", "opset1")
def logical_not(ctx, layer, inputs):
    """LogicalNot-1 -> Not."""
    x = inputs[0]
    _booleans(layer, x)
    if foldable(x):
        return [np.logical_not(x.value())]
    return [ctx.b.Not(x)]


def _logical(ctx, layer, inputs, onnx_op: str, fold):
    a, b = inputs
    _booleans(layer, a, b)
    check_broadcast(layer, a.shape, b.shape)
    if foldable(a, b):
        return [np.asarray(fold(a.value(), b.value()), dtype=np.bool_)]
    return [ctx.b.op(onnx_op, a, b)]


@lowers("LogicalAnd", "opset1")
def logical_and(ctx, layer, inputs):
    """LogicalAnd-1 -> And."""
    return _logical(ctx, layer, inputs, "And", np.logical_and)


@lowers("LogicalOr", "opset1")
def logical_or(ctx, layer, inputs):
    """LogicalOr-1 -> Or."""
    return _logical(ctx, layer, inputs, "Or", np.logical_or)


@lowers("LogicalXor", "opset2")
def logical_xor(ctx, layer, inputs):
    """LogicalXor-2 -> Xor (OpenVINO writes LogicalXor as opset2)."""
    return _logical(ctx, layer, inputs, "Xor", np.logical_xor)


@lowers("Select", "opset1")
def select(ctx, layer, inputs):
    """Select-1 -> Where (i16/u16/u64: Cast, Where, Cast; boolean: And, Not, And, Or; f16:
    Expand, Concat, GatherElements, since onnxruntime's f16 Where quiets signalling NaNs)."""
    cond, then, other = inputs
    _booleans(layer, cond)
    same_etype(layer, then, other)
    check_broadcast(layer, cond.shape, then.shape, other.shape)
    et = then.etype
    if foldable(cond, then, other):
        return [np.where(cond.value(), then.value(), other.value()).astype(et.numpy)]
    g = ctx.b
    if et.name == "boolean":
        return [g.Or(g.And(cond, then), g.And(g.Not(cond), other))]
    if et.name in _WIDER:
        wide = _WIDER[et.name]
        return [g.Cast(g.Where(cond, g.Cast(then, to=wide), g.Cast(other, to=wide)), to=et.onnx)]
    if et.name in exact.QUIETING:
        if any(v.shape is None for v in (cond, then, other)):
            raise UnsupportedLayer(layer, f"Select on {et.name} operands of unknown rank is not supported")
        return [exact.select(g, cond, then, other)]
    if et.name not in _WHERE_TYPES:
        raise UnsupportedLayer(layer, f"Select on element type {et.name} is not supported")
    return [g.Where(cond, then, other)]
