"""A compressed table read by a Gather: the packed rows, scales and zero points are gathered
first and only those rows are dequantized (what OpenVINO's GatherCompressed does), instead of
dequantizing the whole table on every run (onnxruntime never folds a DequantizeLinear).

IR (an embedding or position table, matched by :mod:`.decompression`)::

    Const(u8/i8/u4/i4/f8/nf4/f4e2m1 [V, ...]) -> Convert -> [Subtract zp] -> Multiply scale
        -> [Reshape [V, H]] -> [Convert f32] -> Gather(ids, axis 0)

ONNX (``ids`` already made safe by the Gather lowering, which masks out-of-range ones after)::

    u8/i8:   Gather(codes [V, H]) -> DequantizeLinear(., Gather(scale), Gather(zp)) -> Reshape
    u4/i4:   Gather(the codes as uint8 rows [V, H/2]) -> [BitwiseXor 0x88 (i4)] -> BitwiseAnd /
             BitShift (the two nibbles) -> DequantizeLinear(uint8 codes, scale, zp (+8 for i4))
             (i4 without zero point: Cast(int8) -> Sub 8 -> DequantizeLinear)
    u8/i8 in groups below opset 21: Gather rows -> Reshape [1, n*G, gs] -> DequantizeLinear(axis 1,
             the gathered group scales [n*G])
    f8:      Gather(uint8 rows) -> Cast(int32) -> Gather(256-entry f32 table) -> Mul(scale)
    nf4/f4e2m1/cb4: Gather(uint8 rows) -> nibbles -> Cast(int32) -> Gather(16-entry table) -> Mul(scale)

then Reshape to ``ids.shape + [H]`` and the chain's last Cast. Every value is the one the whole
table's form gives, bit for bit: the codes are the same integers (``n ^ 8`` minus ``zp + 8`` is
``v - zp`` for an i4 nibble ``n`` of value ``v``), the arithmetic the same single rounding.

A tied table (the same chain also feeds MatMul(transpose_b), the lm_head) is stored once, in the
transposed [H, V] layout that onnxruntime fuses into MatMulNBits. onnxruntime fuses MatMulNBits
only for a weight that no other node reads when it fuses (measured, 1.32), so the Gather reads
the initializer through a node that onnxruntime folds into an initializer of its own when the
session is created (one packed copy in the file, with or without external data; a second, 8-bit
copy in memory). 4-bit: a Cast to 8 bits; the Gather reads its columns and moves them back to
rows before DequantizeLinear. 8-bit: a Transpose back to [V, H], whose rows the Gather reads.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np
from onnx import TensorProto

from ..ir.element_types import TYPES
from .builder import Value

FLOAT8 = ("f8e4m3", "f8e5m2")
_F8 = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}


@dataclass
class Plan:
    """How :mod:`.decompression` dequantizes a weight: DequantizeLinear's input dims, scale, zero
    point and attributes; ``transposed``: (the transposed inputs' maker, its attributes)."""

    m: object  # decompression.Match
    dims: tuple[int, ...]
    scale: np.ndarray
    zp: np.ndarray | None
    attrs: dict
    f16_out: bool
    target: tuple[int, ...]
    transposed: tuple[Callable[[], list[str]], dict] | None = None


def attach(ctx, plan: Plan, out: Value) -> None:
    out.gathered = lambda idx: _dequantized_rows(ctx, plan, idx)


def attach_table(ctx, m, table: np.ndarray, out: Value) -> None:
    out.gathered = lambda idx: _table_rows(ctx, m, table, idx)


def _count(ctx, what: str) -> None:
    ctx.stats[what] = ctx.stats.get(what, 0) + 1


def _shaped(b, y: str, idx: Value, rest: tuple[int, ...]) -> str:
    """``y`` [n, ...] reshaped to ``idx.shape + rest``."""
    if all(d is not None for d in idx.shape):
        return b.Reshape(y, b.const([*idx.shape, *rest]))
    return b.Reshape(y, b.Concat(b.Shape(idx), b.const(list(rest)), axis=0))


def _nibbles(b, rows: str, width: int) -> str:
    """uint8 rows [n, width/2] of packed 4-bit codes -> uint8 codes [n, width], low nibble first."""
    low = b.BitwiseAnd(rows, b.const(0x0F, np.uint8))
    high = b.BitShift(rows, b.const(4, np.uint8), direction="RIGHT")
    last = b.const([-1])
    pairs = b.Concat(b.Unsqueeze(low, last), b.Unsqueeze(high, last), axis=-1)
    return b.Reshape(pairs, b.const([-1, width]))


def _dequantized_rows(ctx, plan: Plan, idx: Value) -> Value | None:
    m, b = plan.m, ctx.b
    wtype = m.weight.etype
    if idx.shape is None or (m.out_type == "f16" and wtype.name in FLOAT8):  # f16 Where would quiet NaNs
        return None
    if wtype.name in FLOAT8:  # any scale layout: a lookup and a Mul, as nf4
        f8 = np.arange(256, dtype=np.uint8).view(_F8[wtype.name]).astype(np.float32)
        return _table_rows(ctx, m, f8, idx)
    if m.tied and plan.transposed is not None:
        return _columns(ctx, plan, idx)
    axis, blocked = plan.attrs.get("axis"), "block_size" in plan.attrs
    if len(plan.dims) == 3 and not blocked and axis == 1 and wtype.bits == 8:
        return _flattened_groups(ctx, plan, idx)
    if len(plan.dims) != 2 or plan.dims != plan.target:
        return None
    if blocked and axis != 1:
        return None
    by_row = blocked or axis == 0  # the scale (and zero point) has one row per table row
    (v, h), flat = plan.dims, b.Reshape(idx, b.const([-1]))
    hint = f"{m.chain[0].name}_rows"
    zp = plan.zp
    if wtype.bits == 4:
        if h % 2:
            return None
        rows = b.Gather(b.add_tensor(m.weight, TYPES["u8"], (v, h // 2), hint, key=("rows",)), flat, axis=0)
        if wtype.name == "i4":
            rows = b.BitwiseXor(rows, b.const(0x88, np.uint8))  # n ^ 8 = v + 8
        codes, ztype = _nibbles(b, rows, h), TYPES["u8"]
        if wtype.name == "i4" and zp is None:
            codes = b.Sub(b.Cast(codes, to=TensorProto.INT8), b.const(8, np.int8))
        elif zp is not None:
            zp = (zp.astype(np.int16) + (8 if wtype.name == "i4" else 0)).astype(np.uint8)
    else:
        codes, ztype = b.Gather(b.add_tensor(m.weight, wtype, (v, h), hint), flat, axis=0), wtype
    scale = b.const(np.asarray(plan.scale, m.scale.dtype, order="C"), m.scale.dtype, "gather_scale")
    if by_row:
        scale = b.Gather(scale, flat, axis=0)
    if m.scale.dtype != (np.float16 if plan.f16_out else np.float32):
        scale = b.Cast(scale, to=TensorProto.FLOAT)
    inputs = [codes, scale]
    if zp is not None:
        z = b.add_initializer(np.asarray(zp, order="C"), ztype, "gather_zero_point")
        inputs.append(b.Gather(z, flat, axis=0) if by_row else z)
    out = _shaped(b, b.DequantizeLinear(*inputs, **plan.attrs), idx, (h,))
    if m.out_type == "f16" and not plan.f16_out:
        out = b.Cast(out, to=TensorProto.FLOAT16)
    _count(ctx, "gathered_tables")
    return Value(b, TYPES[m.out_type], idx.shape + (h,), name=out)


def _flattened_groups(ctx, plan: Plan, idx: Value) -> Value | None:
    """8-bit groups below opset 21: DequantizeLinear per axis on [1, V*G, gs] (decompression's
    form), here on the gathered rows [1, n*G, gs] with the gathered group scales [n*G]."""
    m, b = plan.m, ctx.b
    target = plan.target
    one, groups, size = plan.dims
    if len(target) != 2 or one != 1 or groups % target[0] or groups * size != target[0] * target[1]:
        return None
    v, h = target
    flat = b.Reshape(idx, b.const([-1]))
    codes = b.Gather(b.add_tensor(m.weight, m.weight.etype, (v, h), f"{m.chain[0].name}_rows"), flat, axis=0)
    by_group = lambda a: b.Reshape(b.Gather(a, flat, axis=0), b.const([-1]))  # noqa: E731
    scale = by_group(b.const(np.asarray(plan.scale.reshape(v, -1), m.scale.dtype, order="C"), m.scale.dtype,
                             "gather_scale"))
    if m.scale.dtype != (np.float16 if plan.f16_out else np.float32):
        scale = b.Cast(scale, to=TensorProto.FLOAT)
    inputs = [b.Reshape(codes, b.const([1, -1, size])), scale]
    if plan.zp is not None:
        inputs.append(by_group(b.add_initializer(np.asarray(plan.zp.reshape(v, -1), order="C"), m.weight.etype,
                                                 "gather_zero_point")))
    out = _shaped(b, b.DequantizeLinear(*inputs, **plan.attrs), idx, (h,))
    if m.out_type == "f16" and not plan.f16_out:
        out = b.Cast(out, to=TensorProto.FLOAT16)
    _count(ctx, "gathered_tables")
    return Value(b, TYPES[m.out_type], idx.shape + (h,), name=out)


def _columns(ctx, plan: Plan, idx: Value) -> Value:
    """A tied table stored transposed [H, V]: the rows of its folded Transpose (8-bit), or its
    columns moved back to rows (4-bit), dequantized as rows [n, H]."""
    m, b = plan.m, ctx.b
    make, attrs = plan.transposed
    codes, _, *zp = make()
    # onnxruntime fuses MatMulNBits only for a weight and scale that no other node reads: the
    # Gather reads its own scale, and the weight through a node that onnxruntime folds into a new
    # initializer before it fuses: a Transpose back to rows (8-bit), a Cast to 8 bits (4-bit)
    wtype = m.weight.etype
    by_rows = wtype.bits == 8 and ctx.target.onnxruntime_forms  # (another target: columns, no fold to count on)
    if by_rows:
        codes = b.Transpose(codes, perm=[1, 0])
    scale = b.const(np.asarray(np.asarray(plan.scale).T, m.scale.dtype, order="C"), m.scale.dtype, "gather_scale")
    if m.scale.dtype != np.float32:
        scale = b.Cast(scale, to=TensorProto.FLOAT)
    if wtype.bits == 4:  # ONNX's Gather takes no 4-bit type; onnxruntime folds the Cast
        to = TensorProto.INT8 if wtype.name == "i4" else TensorProto.UINT8
        codes, zp = b.Cast(codes, to=to), [b.Cast(z, to=to) for z in zp]
    flat = b.Reshape(idx, b.const([-1]))
    axis, blocked = attrs.get("axis"), "block_size" in attrs
    # columns gathered and moved back to rows before DequantizeLinear: a Transpose after it would
    # be crossed by onnxruntime's QDQ propagation, which then keeps the lm_head from MatMulNBits
    rows = lambda t: b.Transpose(b.Gather(t, flat, axis=1), perm=[1, 0])  # noqa: E731
    codes = b.Gather(codes, flat, axis=0) if by_rows else rows(codes)
    if blocked:
        scale, zp = rows(scale), [rows(z) for z in zp]
    elif axis == 1:  # per table row: a vector
        scale, zp = b.Gather(scale, flat, axis=0), [b.Gather(z, flat, axis=0) for z in zp]
    row_attrs = dict(attrs)
    if "axis" in row_attrs:
        row_attrs["axis"] = 1 - row_attrs["axis"]
    y = b.DequantizeLinear(codes, scale, *zp, **row_attrs)
    h = plan.target[1]
    _count(ctx, "gathered_tables")
    _count(ctx, "tied_tables")
    return Value(b, TYPES[m.out_type], idx.shape + (h,), name=_shaped(b, y, idx, (h,)))


def _table_rows(ctx, m, table: np.ndarray, idx: Value) -> Value | None:
    """nf4 / f4e2m1 / CB4 indices (16-entry table) and f8 (256 entries: f8 -> f32 is exact, and
    the f32 product is DequantizeLinear's one rounding): the codes' uint8 rows gathered, then
    the table and the scale."""
    b = ctx.b
    w = tuple(int(d) for d in m.weight.shape)
    target = tuple(m.reshape_to or w)
    per_row, bits = math.prod(w[1:]), m.weight.etype.bits
    if idx.shape is None or len(w) < 2 or target[0] != w[0] or (bits == 4 and per_row % 2):
        return None
    flat = b.Reshape(idx, b.const([-1]))
    packed = b.add_tensor(m.weight, TYPES["u8"], (w[0], per_row * bits // 8), f"{m.chain[0].name}_rows",
                          key=("rows",))
    codes = b.Gather(packed, flat, axis=0)
    if bits == 4:
        codes = _nibbles(b, codes, per_row)
    codes = b.Reshape(codes, b.const([-1, *w[1:]]))
    label = "codebook" if m.codebook is not None else f"{m.weight.etype.name}_table"
    values = b.Gather(b.const(table, np.float32, label), b.Cast(codes, to=TensorProto.INT32))
    scale = b.const(np.asarray(m.scale, order="C"), m.scale.dtype, "table_scale")
    if m.scale.shape[0] == w[0] and w[0] > 1:
        scale = b.Gather(scale, flat, axis=0)
    if m.scale.dtype != np.float32:
        scale = b.Cast(scale, to=TensorProto.FLOAT)
    out = _shaped(b, b.Mul(values, scale), idx, target[1:])
    if m.out_type == "f16":
        out = b.Cast(out, to=TensorProto.FLOAT16)
    _count(ctx, "gathered_tables")
    return Value(b, TYPES[m.out_type], idx.shape + target[1:], name=out)
