"""Oracles of the element-wise arithmetic (Add, Subtract, Multiply, Divide, Maximum, Minimum) and
of ReduceProd/ReduceSum, from the specs. Integer results wrap modulo 2^bits; integer Divide is
computed on Python integers (floor with m_pythondiv, toward zero without)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .elements import broadcast_shape, normalize_axis, pick
from .registry import oracle


def _elementwise(layer, inputs, fn):
    a, b = inputs
    if a.dtype != b.dtype:
        raise InvalidLayer(layer, "operands have different element types")
    shape = broadcast_shape(layer, a, b)
    out = np.empty(shape, dtype=a.dtype)
    integer = a.dtype.kind in "iu"
    bits = a.dtype.itemsize * 8
    for pos in itertools.product(*[range(d) for d in shape]):
        x, y = pick(a, pos), pick(b, pos)
        if integer:
            r = fn(int(x), int(y)) % (1 << bits)  # wrap modulo 2^bits
            if a.dtype.kind == "i" and r >= 1 << (bits - 1):
                r -= 1 << bits
            out[pos] = r
        else:
            with np.errstate(all="ignore"):
                out[pos] = fn(x, y)
    return [out]


@oracle("Add", "opset1")
def add(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x + y)


@oracle("Subtract", "opset1")
def subtract(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x - y)


@oracle("Multiply", "opset1")
def multiply(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x * y)


@oracle("Maximum", "opset1")
def maximum(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x if x >= y or x != x else y)


@oracle("Minimum", "opset1")
def minimum(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x if x <= y or x != x else y)


@oracle("Divide", "opset1")
def divide(layer, inputs):
    a = inputs[0]
    if a.dtype.kind not in "iu":
        return _elementwise(layer, inputs, lambda x, y: x / y)
    python_div = bool(layer.attrs.get("m_pythondiv", True))

    def div(x: int, y: int) -> int:
        if y == 0:
            raise InvalidLayer(layer, "integer division by zero")
        q = abs(x) // abs(y)
        q = q if (x < 0) == (y < 0) else -q  # toward zero
        if python_div and q * y != x and (x < 0) != (y < 0):
            q -= 1  # floor
        return q

    return _elementwise(layer, inputs, div)


def _reduce(layer, inputs, combine, start):
    data, axes = inputs
    rank = data.ndim
    axes = {normalize_axis(layer, int(a), rank) for a in np.asarray(axes).reshape(-1)} if rank else set()
    keep = bool(layer.attrs.get("keep_dims", False))
    kept_shape = tuple(1 if i in axes else d for i, d in enumerate(data.shape))
    out = np.empty(kept_shape, dtype=data.dtype)
    for pos in itertools.product(*[range(d) for d in kept_shape]):
        ranges = [range(data.shape[i]) if i in axes else [pos[i]] for i in range(rank)]
        acc = start(data.dtype)
        for src in itertools.product(*ranges):
            acc = combine(acc, data[src])
        out[pos] = acc
    if not keep:
        out = out.reshape(tuple(d for i, d in enumerate(data.shape) if i not in axes))
    return [out]


def _wrapping(op):
    def combine(acc, v):
        with np.errstate(over="ignore"):
            return np.asarray(op(acc, v)).astype(acc.dtype)[()]
    return combine


@oracle("ReduceProd", "opset1")
def reduce_prod(layer, inputs):
    return _reduce(layer, inputs, _wrapping(np.multiply), lambda dt: np.ones((), dt)[()])


@oracle("ReduceSum", "opset1")
def reduce_sum(layer, inputs):
    return _reduce(layer, inputs, _wrapping(np.add), lambda dt: np.zeros((), dt)[()])
