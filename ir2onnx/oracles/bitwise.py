"""Oracles of BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (-13), BitwiseLeftShift and
BitwiseRightShift (-15), from the specs: element by element over the broadcast output shape, on
the two's complement bits of Python integers (``x & (2^bits - 1)``). Shift amounts outside
``[0, bits)``, which the spec leaves undefined, follow PyTorch: 0 for a left shift, the sign fill
(0 or -1) for a right shift."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import map_broadcast, wrap
from .registry import oracle

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _check(layer, arrays, boolean=True) -> np.dtype:
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1:
        raise InvalidLayer(layer, f"{layer.type} operands have different element types")
    dtype = arrays[0].dtype
    if dtype.name not in _INTS and not (boolean and dtype == np.bool_):
        raise InvalidLayer(layer, f"{layer.type} needs {'boolean or ' if boolean else ''}integer inputs")
    return dtype


def _bits(x, dtype: np.dtype) -> int:
    """The two's complement bit pattern of ``x`` as a non-negative Python integer."""
    return int(x) & ((1 << dtype.itemsize * 8) - 1)


def _logic(layer, inputs, fn):
    dtype = _check(layer, inputs)
    if dtype == np.bool_:
        return [map_broadcast(layer, inputs, lambda x, y: bool(fn(int(bool(x)), int(bool(y)))), np.bool_)]
    return [map_broadcast(layer, inputs, lambda x, y: wrap(fn(_bits(x, dtype), _bits(y, dtype)), dtype), dtype)]


@oracle("BitwiseAnd", "opset13")
def bitwise_and(layer, inputs):
    return _logic(layer, inputs, lambda x, y: x & y)


@oracle("BitwiseOr", "opset13")
def bitwise_or(layer, inputs):
    return _logic(layer, inputs, lambda x, y: x | y)


@oracle("BitwiseXor", "opset13")
def bitwise_xor(layer, inputs):
    return _logic(layer, inputs, lambda x, y: x ^ y)


@oracle("BitwiseNot", "opset13")
def bitwise_not(layer, inputs):
    dtype = _check(layer, inputs)
    if dtype == np.bool_:
        return [map_broadcast(layer, inputs, lambda x: not x, np.bool_)]
    ones = (1 << dtype.itemsize * 8) - 1
    return [map_broadcast(layer, inputs, lambda x: wrap(_bits(x, dtype) ^ ones, dtype), dtype)]


def _shift(layer, inputs, left: bool):
    dtype = _check(layer, inputs, boolean=False)
    bits = dtype.itemsize * 8

    def one(x, n):
        x, n = int(x), int(n)
        if not 0 <= n < bits:
            return 0 if left or x >= 0 else -1
        if left:
            return wrap(_bits(x, dtype) << n, dtype)
        return x // (1 << n)  # floor division: the arithmetic shift of a signed value

    return [map_broadcast(layer, inputs, one, dtype)]


@oracle("BitwiseLeftShift", "opset15")
def bitwise_left_shift(layer, inputs):
    return _shift(layer, inputs, left=True)


@oracle("BitwiseRightShift", "opset15")
def bitwise_right_shift(layer, inputs):
    return _shift(layer, inputs, left=False)
