"""BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (-13) and BitwiseLeftShift, BitwiseRightShift (-15).

Booleans -> And, Or, Xor, Not (any opset); integers -> BitwiseAnd, BitwiseOr, BitwiseXor,
BitwiseNot (ONNX opset >= 18; onnxruntime's CPU provider has them for every integer type). Below
opset 18, exactly by bits: the operands (Cast to the unsigned type of the same width) are spread
into their n bits along a new last axis (BitShift left by n-1-k, then right by n-1: bit k as 0/1),
combined per bit (and: a*b, or: a+b-a*b, xor: a+b-2ab), weighted by 2^k in i64, summed
(ReduceSum; 64-bit types in two 32-bit halves, joined by BitShift and Add in u64) and Cast back;
not: Sub(all ones, x).

Shifts: ONNX BitShift is unsigned-only and says nothing of amounts outside ``[0, bits)``, which
the spec leaves undefined. ir2onnx defines them as PyTorch does (the framework whose ``<<`` and
``>>`` OpenVINO's PyTorch frontend turns into these ops): a left shift by an amount outside
``[0, bits)`` gives 0, a right shift gives the sign fill (0, or -1 for negative signed values).
The chain, with ``valid = 0 <= b < bits`` (Less, And, Not) and ``amount = b * valid``:
- unsigned: ``BitShift(a, amount) * valid``;
- signed left: Cast to the unsigned type of the same width (bit-preserving), as above, Cast back;
- signed right (arithmetic): with ``s = (a < 0)``, ``y = |a + s|`` (= ``~a`` for negative ``a``,
  never overflows) is non-negative; ``r = BitShift(unsigned(y), amount) * valid``, and the result
  is ``r * (1 - 2s) - s`` (= ``~r`` for negative ``a``): no bitwise op, so any opset >= 11.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.inputs import INT_TYPES, check_broadcast, foldable, same_etype

_SAME_WIDTH_UNSIGNED = {"i8": TensorProto.UINT8, "i16": TensorProto.UINT16, "i32": TensorProto.UINT32,
             "i64": TensorProto.UINT64}


def _etype(layer, *values, boolean=True) -> str:
    """The operands' common element type: an integer type, or boolean when ``boolean``."""
    same_etype(layer, *values)
    name = values[0].etype.name if values[0].etype else "?"
    allowed = INT_TYPES + (("boolean",) if boolean else ())
    if name not in allowed:
        raise InvalidLayer(layer, f"{layer.type} needs {'boolean or ' if boolean else ''}integer inputs, got {name}")
    return name


def _binary(ctx, layer, inputs, onnx_int: str, onnx_bool: str, fold):
    a, b = inputs
    name = _etype(layer, a, b)
    check_broadcast(layer, a.shape, b.shape)
    if foldable(a, b):
        return [np.asarray(fold(a.value(), b.value())).astype(a.etype.numpy)]
    if name == "boolean":
        return [ctx.b.op(onnx_bool, a, b)]
    if ctx.opset < 18:
        return [_by_bits(ctx, a, b, onnx_bool)]
    return [ctx.b.op(onnx_int, a, b)]


def _unsigned(ctx, x):
    """``x`` as the unsigned type of its width (a bit-preserving Cast for signed types)."""
    return ctx.b.Cast(x, to=_SAME_WIDTH_UNSIGNED[x.etype.name]) if x.etype.name in _SAME_WIDTH_UNSIGNED else x


def _by_bits(ctx, a, b, op: str) -> str:
    """And/Or/Xor of integers without ONNX's Bitwise ops (opset < 18), bit by bit (see above)."""
    g, et = ctx.b, a.etype
    n = et.bits
    udtype = np.dtype(f"uint{n}")
    left = g.const(np.arange(n - 1, -1, -1).astype(udtype), udtype, "to_top")
    down = g.const(np.array(n - 1, udtype), udtype, "to_bottom")
    last = g.const([-1], np.int64, "last_axis")

    def spread(x):  # [..., n]: bit k of x at position k, as 0 or 1
        top = g.BitShift(g.Unsqueeze(_unsigned(ctx, x), last), left, direction="LEFT")
        return g.BitShift(top, down, direction="RIGHT")

    p, q = spread(a), spread(b)
    both = g.Mul(p, q)
    bits = {"And": both, "Or": g.Sub(g.Add(p, q), both), "Xor": g.Sub(g.Add(p, q), g.Add(both, both))}[op]
    # onnxruntime's int64 ReduceSum accumulates in double: sums stay below 2^32 (exact), so 64-bit
    # values are summed in two halves joined by a shift in u64
    weights = g.const([1 << k for k in range(min(n, 32))], np.int64, "bit_weights")

    def total(part):
        return g.ReduceSum(g.Mul(g.Cast(part, to=TensorProto.INT64), weights), last, keepdims=0)

    if n <= 32:
        return g.Cast(total(bits), to=et.onnx)
    halves = [g.Cast(total(g.Slice(bits, g.const([k], np.int64, "start"), g.const([k + 32], np.int64, "stop"), last)),
                     to=TensorProto.UINT64) for k in (0, 32)]
    high = g.BitShift(halves[1], g.const(np.array(32, np.uint64), np.uint64, "half"), direction="LEFT")
    return g.Cast(g.Add(halves[0], high), to=et.onnx)


@lowers("BitwiseAnd", "opset13")
def bitwise_and(ctx, layer, inputs):
    """BitwiseAnd-13 (a, b) -> And (boolean) or BitwiseAnd (integers, opset >= 18; below: Cast,
    Unsqueeze, BitShift, BitShift, Mul, Cast, Mul, ReduceSum, Cast)."""
    return _binary(ctx, layer, inputs, "BitwiseAnd", "And", np.bitwise_and)


@lowers("BitwiseOr", "opset13")
def bitwise_or(ctx, layer, inputs):
    """BitwiseOr-13 (a, b) -> Or (boolean) or BitwiseOr (integers, opset >= 18; below: per bit
    a + b - a*b, as BitwiseAnd)."""
    return _binary(ctx, layer, inputs, "BitwiseOr", "Or", np.bitwise_or)


@lowers("BitwiseXor", "opset13")
def bitwise_xor(ctx, layer, inputs):
    """BitwiseXor-13 (a, b) -> Xor (boolean) or BitwiseXor (integers, opset >= 18; below: per bit
    a + b - 2ab, as BitwiseAnd)."""
    return _binary(ctx, layer, inputs, "BitwiseXor", "Xor", np.bitwise_xor)


@lowers("BitwiseNot", "opset13")
def bitwise_not(ctx, layer, inputs):
    """BitwiseNot-13 (data) -> Not (boolean) or BitwiseNot (integers, opset >= 18; below: Cast,
    Sub(all ones, x), Cast)."""
    x = inputs[0]
    name = _etype(layer, x)
    if foldable(x):
        return [np.invert(x.value())]
    if name == "boolean":
        return [ctx.b.Not(x)]
    if ctx.opset < 18:  # ~x = (2^n - 1) - x in the unsigned type of the same width: no borrow
        udtype = np.dtype(f"uint{x.etype.bits}")
        ones = ctx.b.const(np.array(np.iinfo(udtype).max, udtype), udtype, "all_ones")
        return [ctx.b.Cast(ctx.b.Sub(ones, _unsigned(ctx, x)), to=x.etype.onnx)]
    return [ctx.b.BitwiseNot(x)]


def _fold_shift(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """The shift on constants, by Python integers (amounts outside [0, bits): 0 or the sign fill)."""
    dtype = a.dtype
    bits = dtype.itemsize * 8
    a2, b2 = np.broadcast_arrays(a, b)
    out = np.empty(a2.shape, dtype)
    for pos in np.ndindex(*a2.shape):
        x, n = int(a2[pos]), int(b2[pos])
        if left:
            v = (x << n) % (1 << bits) if 0 <= n < bits else 0
            out[pos] = np.array(v, np.uint64).astype(dtype) if dtype.kind == "i" else v
        else:
            out[pos] = x >> n if 0 <= n < bits else (-1 if x < 0 else 0)
    return out


def _shift(ctx, layer, inputs, left: bool):
    a, b = inputs
    name = _etype(layer, a, b, boolean=False)
    check_broadcast(layer, a.shape, b.shape)
    if foldable(a, b):
        return [_fold_shift(np.asarray(a.value()), np.asarray(b.value()), left)]
    ctx.require_opset(layer, 11, f"{layer.type} (ONNX BitShift)")
    g, et = ctx.b, a.etype
    signed = name in _SAME_WIDTH_UNSIGNED
    unsigned = _SAME_WIDTH_UNSIGNED.get(name, et.onnx)
    zero = g.const(np.array(0, et.numpy), et.numpy, "zero")
    valid = g.Less(b, g.const(np.array(et.bits, et.numpy), et.numpy, "bits"))
    if signed:
        valid = g.And(valid, g.Not(g.Less(b, zero)))
    amount = g.Mul(b, g.Cast(valid, to=et.onnx))  # out-of-range amounts shift by 0 ...
    flag = g.Cast(valid, to=unsigned)  # ... and their result is multiplied by 0
    direction = "LEFT" if left else "RIGHT"
    if not signed:  # unsigned: a logical shift either way
        return [g.Mul(g.BitShift(a, amount, direction=direction), flag)]
    amount = g.Cast(amount, to=unsigned)
    if left:
        shifted = g.Mul(g.BitShift(g.Cast(a, to=unsigned), amount, direction="LEFT"), flag)
        return [g.Cast(shifted, to=et.onnx)]
    s = g.Cast(g.Less(a, zero), to=et.onnx)  # 1 for negative a
    y = g.Abs(g.Add(a, s))  # ~a for negative a, a otherwise: non-negative, no overflow
    r = g.Cast(g.Mul(g.BitShift(g.Cast(y, to=unsigned), amount, direction="RIGHT"), flag), to=et.onnx)
    one = g.const(np.array(1, et.numpy), et.numpy, "one")
    return [g.Sub(g.Mul(r, g.Sub(one, g.Add(s, s))), s)]  # ~r for negative a, r otherwise


@lowers("BitwiseLeftShift", "opset15")
def bitwise_left_shift(ctx, layer, inputs):
    """BitwiseLeftShift-15 (a, b) -> Less, Cast, Mul, BitShift(LEFT), Mul (signed: through the
    unsigned type of the same width, Cast, Cast)."""
    return _shift(ctx, layer, inputs, left=True)


@lowers("BitwiseRightShift", "opset15")
def bitwise_right_shift(ctx, layer, inputs):
    """BitwiseRightShift-15 (a, b) -> Less, Cast, Mul, BitShift(RIGHT), Mul (signed, arithmetic:
    Less, Cast, Add, Abs, Cast, BitShift, Mul, Cast, Sub, Mul, Sub)."""
    return _shift(ctx, layer, inputs, left=False)
