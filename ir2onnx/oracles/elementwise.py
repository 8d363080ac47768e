"""Oracles of the element-wise arithmetic (Add, Subtract, Multiply, Divide, Maximum, Minimum,
FloorMod, Mod, SquaredDifference, Power), from the specs, element by element (on whole arrays
where numpy's per-element arithmetic is the spec's, see :func:`_elementwise`). Integer results wrap
modulo 2^bits; integer Divide and the remainders are computed on Python integers (Divide toward zero); float remainders through math.fmod in float64, rounded once."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .elements import broadcast_shape, map_broadcast, pick, wrap
from .registry import oracle


def _elementwise(layer, inputs, fn, array_fn=None):
    """``fn`` on every pair of elements (Python ints for integers, wrapped modulo 2^bits; numpy
    scalars of the operands' type for floats). ``array_fn`` computes the same on whole broadcast
    arrays where numpy's arithmetic in the operand type is that per-element operation: floats
    (numpy rounds each element's result once to the type, as the scalar does) and, for Add,
    Subtract, Multiply (numpy wraps modulo 2^bits), Maximum and Minimum, integers."""
    a, b = inputs
    if a.dtype != b.dtype:
        raise InvalidLayer(layer, "operands have different element types")
    shape = broadcast_shape(layer, a, b)
    integer = a.dtype.kind in "iu"
    if array_fn is not None and (not integer or array_fn in _WRAPPING):
        x, y = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        with np.errstate(all="ignore"):
            return [np.asarray(array_fn(x, y), dtype=a.dtype).reshape(shape)]
    out = np.empty(shape, dtype=a.dtype)
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


def _pick_max(x, y):
    return np.where((x >= y) | (x != x), x, y)  # x if x >= y or x is NaN, else y


def _pick_min(x, y):
    return np.where((x <= y) | (x != x), x, y)


_WRAPPING = (np.add, np.subtract, np.multiply, _pick_max, _pick_min)  # exact on numpy integers


@oracle("Add", "opset1")
def add(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x + y, np.add)


@oracle("Subtract", "opset1")
def subtract(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x - y, np.subtract)


@oracle("Multiply", "opset1")
def multiply(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x * y, np.multiply)


@oracle("Maximum", "opset1")
def maximum(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x if x >= y or x != x else y, _pick_max)


@oracle("Minimum", "opset1")
def minimum(layer, inputs):
    return _elementwise(layer, inputs, lambda x, y: x if x <= y or x != x else y, _pick_min)


@oracle("Divide", "opset1")
def divide(layer, inputs):
    """Integers truncate toward zero with either m_pythondiv: what ONNX Div and torch's trunc
    division compute, which OpenVINO's frontends write as Divide(m_pythondiv=true). torch's floor
    division, Floor(Divide), is floored by the Floor (see the Floor oracle)."""
    a = inputs[0]
    if a.dtype.kind not in "iu":
        return _elementwise(layer, inputs, lambda x, y: x / y, np.divide)

    def div(x: int, y: int) -> int:
        if y == 0:
            raise InvalidLayer(layer, "integer division by zero")
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q  # toward zero

    return _elementwise(layer, inputs, div)


# -- FloorMod, Mod, SquaredDifference --------------------------------------------------------
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


# -- Power -----------------------------------------------------------------------------------
def _float_pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except ValueError:  # negative base, fractional exponent
        return math.nan
    except OverflowError:
        return math.inf if x > 0 or float(y).is_integer() and y % 2 == 0 else -math.inf


def _int_pow(layer, x: int, y: int, bits: int) -> int:
    """``x ** y`` modulo 2^bits (wrapped by the caller); negative ``y``: truncated toward zero."""
    if y >= 0:
        return pow(x, y, 1 << bits)
    if abs(x) == 1:  # 1 / x**|y| truncated toward zero
        return x if y % 2 else 1
    return 0  # 0 ** -n too: PyTorch's integer pow (OpenVINO's CPU plugin: a float infinity cast)


@oracle("Power", "opset1")
def power(layer, inputs):
    a, b = inputs
    bits = a.dtype.itemsize * 8
    if a.dtype.kind in "iu":
        return [map_broadcast(layer, [a, b], lambda x, y: wrap(_int_pow(layer, int(x), int(y), bits), a.dtype), a.dtype)]
    return [map_broadcast(layer, [a, b], lambda x, y: _float_pow(float(x), float(y)), a.dtype)]
