"""Oracles of LogicalNot, LogicalAnd, LogicalOr (-1), LogicalXor (-2) and Select-1, from the specs:
element by element over the broadcast output shape (numpy or none)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import map_broadcast
from .registry import oracle


def _booleans(layer, *arrays) -> None:
    if any(a.dtype != np.bool_ for a in arrays):
        raise InvalidLayer(layer, f"{layer.type} needs boolean inputs")


@oracle("LogicalNot", "opset1")
def logical_not(layer, inputs):
    _booleans(layer, inputs[0])
    return [map_broadcast(layer, inputs, lambda x: not x, np.bool_)]


def _logical(layer, inputs, fn):
    _booleans(layer, *inputs)
    return [map_broadcast(layer, inputs, lambda x, y: fn(bool(x), bool(y)), np.bool_)]


@oracle("LogicalAnd", "opset1")
def logical_and(layer, inputs):
    return _logical(layer, inputs, lambda x, y: x and y)


@oracle("LogicalOr", "opset1")
def logical_or(layer, inputs):
    return _logical(layer, inputs, lambda x, y: x or y)


@oracle("LogicalXor", "opset2")
def logical_xor(layer, inputs):
    return _logical(layer, inputs, lambda x, y: x != y)


@oracle("Select", "opset1")
def select(layer, inputs):
    cond, then, other = inputs
    _booleans(layer, cond)
    if then.dtype != other.dtype:
        raise InvalidLayer(layer, "then and else have different element types")
    return [map_broadcast(layer, [cond, then, other], lambda c, t, e: t if c else e, then.dtype)]
