"""Oracles of the comparisons (Equal ... GreaterEqual), the logical ops and Select (all -1), from
the specs: element by element over the broadcast output shape (numpy or none)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .elements import broadcast_shape, pick
from .registry import oracle


def _shape(layer, *arrays: np.ndarray) -> tuple[int, ...]:
    shape = arrays[0].shape
    for other in arrays[1:]:
        shape = broadcast_shape(layer, np.empty(shape), other)
    return shape


def _map(layer, arrays, fn, dtype) -> np.ndarray:
    shape = _shape(layer, *arrays)
    out = np.empty(shape, dtype)
    for pos in itertools.product(*[range(d) for d in shape]):
        out[pos] = fn(*[pick(a, pos) for a in arrays])
    return out


def _compare(layer, inputs, fn):
    a, b = inputs
    if a.dtype != b.dtype:
        raise InvalidLayer(layer, "operands have different element types")
    return [_map(layer, [a, b], lambda x, y: bool(fn(x, y)), np.bool_)]


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


def _booleans(layer, *arrays) -> None:
    if any(a.dtype != np.bool_ for a in arrays):
        raise InvalidLayer(layer, f"{layer.type} needs boolean inputs")


@oracle("LogicalNot", "opset1")
def logical_not(layer, inputs):
    _booleans(layer, inputs[0])
    return [_map(layer, inputs, lambda x: not x, np.bool_)]


def _logical(layer, inputs, fn):
    _booleans(layer, *inputs)
    return [_map(layer, inputs, lambda x, y: fn(bool(x), bool(y)), np.bool_)]


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
    return [_map(layer, [cond, then, other], lambda c, t, e: t if c else e, then.dtype)]
