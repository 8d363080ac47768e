"""Integer division in ONNX, exact: ONNX ``Div`` truncates toward zero; floor division adds the
correction ``q - 1`` where the remainder is non-zero and its sign differs from the divisor's."""
from __future__ import annotations

import numpy as np

from ...lowering.builder import Builder, Value


def trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` rounded toward zero (C, ONNX), in ``a``'s type; b has no zeros."""
    q = np.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a)).astype(a.dtype)


def floor_divide_chain(g: Builder, a: Value, b: Value) -> str:
    """Div, Mul, Sub, Equal, Not, Less, Xor, And, Cast, Sub: ``a / b`` rounded toward -inf, for
    signed integers (unsigned: Div alone is already the floor)."""
    q = g.Div(a, b)
    if a.etype.name.startswith("u"):
        return q
    zero = g.const(np.zeros((), a.etype.numpy), a.etype.numpy, "zero")
    r = g.Sub(a, g.Mul(q, b))
    inexact = g.Not(g.Equal(r, zero))
    signs_differ = g.Xor(g.Less(r, zero), g.Less(b, zero))
    return g.Sub(q, g.Cast(g.And(inexact, signs_differ), to=a.etype.onnx))
