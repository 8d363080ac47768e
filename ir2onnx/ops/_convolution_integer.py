"""i32 Convolution / GroupConvolution (what OpenVINO's ONNX frontend writes for ConvInteger: both
operands converted to i32 after subtracting the zero points) as an exact ONNX chain.

ONNX Conv has no integer kernel and ConvInteger takes 8-bit operands, so each i32 operand is split
into its four bytes (``Cast`` to u32, ``BitShift``, ``Cast`` to u8: ``v = sum b_i * 256^i`` modulo
2^32) and the convolution is ``sum over i + j < 4 of ConvInteger(x_i, w_j) * 256^(i+j)`` in
int32, whose Mul and Add wrap: the result modulo 2^32, i.e. the i32 convolution bit for bit
(wrapping on overflow; terms with i + j >= 4 vanish modulo 2^32). Zero padding is ConvInteger's
default zero point. Ten ConvInteger nodes; constant filters' bytes fold when the session loads.
"""
from __future__ import annotations

import numpy as np

_UINT8, _UINT32 = 2, 12


def _bytes(g, v) -> list[str]:
    """The four little-endian bytes of an i32 tensor, as u8 tensors."""
    u = g.Cast(v, to=_UINT32)
    out = []
    for k in range(4):
        shifted = u if k == 0 else g.BitShift(u, g.const(np.asarray(8 * k, np.uint32), np.uint32, "shift"),
                                              direction="RIGHT")
        out.append(g.Cast(shifted, to=_UINT8))
    return out


def integer_conv(g, x, weights, **conv_attrs) -> str:
    """``Conv(x, weights)`` of i32 tensors, exact modulo 2^32, from ConvInteger on their bytes."""
    xb, wb = _bytes(g, x), _bytes(g, weights)
    total = None
    for i in range(4):
        for j in range(4 - i):
            term = g.ConvInteger(xb[i], wb[j], **conv_attrs)
            if i + j:
                term = g.Mul(term, g.const(np.asarray(1 << (8 * (i + j)), np.int32), np.int32, "byte_weight"))
            total = term if total is None else g.Add(total, term)
    return total
