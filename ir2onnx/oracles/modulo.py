"""Oracles of FloorMod-1, Mod-1 and SquaredDifference-1 from the specs, element by element:
integers on Python integers (wrapping), floats through math.fmod in float64, rounded once."""
from __future__ import annotations

import math

from ..errors import InvalidLayer
from .elementwise import _elementwise
from .registry import oracle


def _trunc_rem(x, y, layer):
    if isinstance(x, int):
        if y == 0:
            raise InvalidLayer(layer, "integer remainder by zero")
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    return math.fmod(float(x), float(y)) if y != 0 and math.isfinite(float(x)) else math.nan


def _floor_rem(x, y, layer):
    r = _trunc_rem(x, y, layer)
    if r == r and r != 0 and (r < 0) != (y < 0):
        r += y
    return r


@oracle("FloorMod", "opset1")
def floor_mod(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: _floor_rem(x, y, layer))


@oracle("Mod", "opset1")
def mod(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: _trunc_rem(x, y, layer))


@oracle("SquaredDifference", "opset1")
def squared_difference(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: (x - y) * (x - y) if isinstance(x, int)
                        else (float(x) - float(y)) ** 2)
