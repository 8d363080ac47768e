"""IsNaN-10, IsInf-10 and IsFinite-10: which float elements are NaN, infinite, or neither.

IsNaN -> IsNaN; IsInf(detect_negative, detect_positive) -> IsInf with the same attributes;
IsFinite -> IsNaN, IsInf, Or, Not. Floats only: f32, f64; f16 and bf16 go through an exact Cast to
f32 where ONNX lacks them (IsInf takes f16 and both take bf16 from opset 20 on); small constants
are folded.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.inputs import FLOAT_TYPES, foldable


def _float(ctx, layer, x) -> None:
    name = x.etype.name if x.etype else "?"
    if name not in FLOAT_TYPES + ("bf16",):
        raise InvalidLayer(layer, f"{layer.type} needs a float input, got {name}")
    ctx.onnx_type(layer, x.etype)


def _operand(ctx, x, f16_ok: bool):
    """``x``, or an exact Cast to f32 where ONNX's IsNaN/IsInf lack its type at this opset."""
    name = x.etype.name
    if ctx.opset < 20 and (name == "bf16" or (name == "f16" and not f16_ok)):
        return ctx.b.Cast(x, to=TensorProto.FLOAT)
    return x


def _flags(layer) -> tuple[bool, bool]:
    return bool(layer.attrs.get("detect_negative", True)), bool(layer.attrs.get("detect_positive", True))


def _np_isinf(v: np.ndarray, negative: bool, positive: bool) -> np.ndarray:
    return (np.isneginf(v) & negative) | (np.isposinf(v) & positive)


@lowers("IsNaN", "opset10")
def is_nan(ctx, layer, inputs):
    """IsNaN-10 (data) -> IsNaN."""
    x = inputs[0]
    _float(ctx, layer, x)
    if foldable(x):
        return [np.isnan(x.value().astype(np.float64))]
    return [ctx.b.IsNaN(_operand(ctx, x, True))]


@lowers("IsInf", "opset10")
def is_inf(ctx, layer, inputs):
    """IsInf-10 (data; detect_negative, detect_positive) -> IsInf (the same attributes)."""
    x = inputs[0]
    _float(ctx, layer, x)
    negative, positive = _flags(layer)
    if foldable(x):
        return [_np_isinf(x.value().astype(np.float64), negative, positive)]
    return [ctx.b.IsInf(_operand(ctx, x, False), detect_negative=int(negative), detect_positive=int(positive))]


@lowers("IsFinite", "opset10")
def is_finite(ctx, layer, inputs):
    """IsFinite-10 (data) -> IsNaN, IsInf, Or, Not."""
    x = inputs[0]
    _float(ctx, layer, x)
    if foldable(x):
        return [np.isfinite(x.value().astype(np.float64))]
    g = ctx.b
    return [g.Not(g.Or(g.IsNaN(_operand(ctx, x, True)), g.IsInf(_operand(ctx, x, False))))]
