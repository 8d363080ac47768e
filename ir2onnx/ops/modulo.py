"""FloorMod-1, Mod-1 and SquaredDifference-1 (numpy/none broadcasting, constants folded).

FloorMod (the sign of the divisor, Python's %): integers -> Mod(fmod=0); floats ->
Sub(a, Mul(Floor(Div(a, b)), b)), OpenVINO's formula. Mod (the sign of the dividend, C's fmod):
Mod(fmod=1). SquaredDifference: Sub, Mul.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.inputs import foldable
from ..lowering.registry import lowers
from .elementwise import _check_operands, _fold

INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOATS = ("f16", "f32", "f64")


def _operands(ctx, layer, inputs, allowed):
    a, b = inputs
    _check_operands(layer, a, b)
    if a.etype.name not in allowed:
        raise UnsupportedLayer(layer, f"{layer.type} on {a.etype.name} is not supported ({', '.join(allowed)})")
    ctx.onnx_type(layer, a.etype)
    return a, b


@lowers("FloorMod", "opset1")
def floor_mod(ctx, layer, inputs):
    """FloorMod-1 -> Mod(fmod=0) for integers; Div, Floor, Mul, Sub for floats."""
    a, b = _operands(ctx, layer, inputs, INTS + FLOATS)
    g = ctx.b
    if a.etype.name in INTS:
        if foldable(a, b) and not np.any(b.value() == 0):
            return [_fold(np.mod, a.value(), b.value())]
        return [g.Mod(a, b, fmod=0)]
    if foldable(a, b):
        return [_fold(lambda x, y: x - np.floor(x / y) * y, a.value(), b.value())]
    return [g.Sub(a, g.Mul(g.Floor(g.Div(a, b)), b))]


@lowers("Mod", "opset1")
def mod(ctx, layer, inputs):
    """Mod-1 -> Mod(fmod=1) (the remainder takes the dividend's sign)."""
    a, b = _operands(ctx, layer, inputs, INTS + FLOATS)
    if foldable(a, b) and not (a.etype.name in INTS and np.any(b.value() == 0)):
        return [_fold(np.fmod, a.value(), b.value())]
    return [ctx.b.Mod(a, b, fmod=1)]


@lowers("SquaredDifference", "opset1")
def squared_difference(ctx, layer, inputs):
    """SquaredDifference-1 -> Sub, Mul: (a - b)^2."""
    a, b = _operands(ctx, layer, inputs, ("i32", "i64") + FLOATS)
    if foldable(a, b):
        return [_fold(lambda x, y: (x - y) * (x - y), a.value(), b.value())]
    d = ctx.b.Sub(a, b)
    return [ctx.b.Mul(d, d)]
