"""Oracles of the comparisons (Equal ... GreaterEqual, all -1), from the specs: element by element
over the broadcast output shape (numpy or none)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import map_broadcast
from .registry import oracle


def _compare(layer, inputs, fn):
    a, b = inputs
    if a.dtype != b.dtype:
        raise InvalidLayer(layer, "operands have different element types")
    return [map_broadcast(layer, [a, b], lambda x, y: bool(fn(x, y)), np.bool_)]


@oracle("Equal", "opset1")
def equal(layer, inputs):
    return _compare(layer, inputs, lambda x, y: x == y)


@oracle("NotEqual", "opset1")
def not_equal(layer, inputs):
    return _compare(layer, inputs, lambda x, y: not x == y)


@oracle("Less", "opset1")
def less(layer, inputs):
    return _compare(layer, inputs, lambda x, y: x < y)


@oracle("LessEqual", "opset1")
def less_equal(layer, inputs):
    return _compare(layer, inputs, lambda x, y: x <= y)


@oracle("Greater", "opset1")
def greater(layer, inputs):
    return _compare(layer, inputs, lambda x, y: x > y)


@oracle("GreaterEqual", "opset1")
def greater_equal(layer, inputs):
    return _compare(layer, inputs, lambda x, y: x >= y)
