"""Integer ``a ** b`` in ONNX, exact and wrapping like PyTorch's integer pow (which OpenVINO's
PyTorch frontend writes as Power-1): onnxruntime's Pow has no kernel for 8/16-bit and unsigned
integers, and its i32/i64 kernels go through ``double`` (3 ** 21 in i32 gives INT_MIN, not
the wrapped 1870418611; measured on onnxruntime 1.32).

Square and multiply on the exponent's bits in int64, whose ``Mul`` wraps modulo 2^64, so the
low bits of every product are those of the narrow type; a final ``Cast`` keeps them (modulo
2^bits). A negative exponent gives what PyTorch gives, ``1 / a**|b|`` truncated toward zero:
1 for base 1, +-1 for base -1 (the exponent's parity), else 0 (0 included).
"""
from __future__ import annotations

import numpy as np

from ...lowering.builder import Builder, Value

_INT64, _UINT64, _BOOL = 7, 13, 9


def exponent_bits(etype_name: str) -> int:
    """The exponent bits that matter for a non-negative exponent of this type."""
    bits = int(etype_name[1:])
    return bits - 1 if etype_name.startswith("i") else bits


def integer_power_chain(g: Builder, a: Value, b: Value) -> str:
    """``a ** b`` for integer ``a``, ``b`` of one type (broadcasting), as ONNX nodes."""
    name = a.etype.name
    one = g.const(np.ones((), np.int64), np.int64, "one")
    base = a.name if name == "i64" else g.Cast(a, to=_INT64)
    if b.is_const:
        exponent = np.asarray(b.value()).astype(np.int64 if name != "u64" else np.uint64)
        width = max(1, int(np.max(np.where(exponent > 0, exponent, 0))).bit_length())
        bit_of = lambda k: g.const((exponent >> k) & 1 == 1, np.bool_, "bit")  # noqa: E731
    else:
        unsigned = b.name if name == "u64" else g.Cast(b, to=_UINT64)
        width = exponent_bits(name)
        left = lambda k: g.const(np.asarray(63 - k, np.uint64), np.uint64, "shift")  # noqa: E731
        top = g.const(np.asarray(63, np.uint64), np.uint64, "shift")
        bit_of = lambda k: g.Cast(g.BitShift(g.BitShift(unsigned, left(k), direction="LEFT"), top,  # noqa: E731
                                             direction="RIGHT"), to=_BOOL)
    result = None
    for k in range(width):
        factor = g.Where(bit_of(k), base, one)
        result = factor if result is None else g.Mul(result, factor)
        if k < width - 1:
            base = g.Mul(base, base)
    if name.startswith("i") and not (b.is_const and np.all(np.asarray(b.value()) >= 0)):
        result = g.Where(g.Less(g.Cast(b, to=_INT64) if name != "i64" else b.name, g.const(0, np.int64, "zero")),
                         _negative_exponent(g, a, b, base=a.name if name == "i64" else g.Cast(a, to=_INT64)),
                         result)
    return result if name == "i64" else g.Cast(result, to=a.etype.onnx)


def _negative_exponent(g: Builder, a: Value, b: Value, base: str) -> str:
    """1 / a**|b| truncated toward zero, in int64: 1 (a = 1), +-1 (a = -1, by b's parity), else 0."""
    one = g.const(np.ones((), np.int64), np.int64, "one")
    minus = g.const(-np.ones((), np.int64), np.int64, "minus_one")
    zero = g.const(np.zeros((), np.int64), np.int64, "zero")
    exponent = b.name if b.etype.name == "i64" else g.Cast(b, to=_INT64)
    odd = g.Equal(g.Mod(exponent, g.const(2, np.int64, "two")), one)
    return g.Where(g.Equal(base, one), one, g.Where(g.Equal(base, minus), g.Where(odd, minus, one), zero))
