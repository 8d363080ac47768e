"""nf4 and f4e2m1 compressed weights kept packed: 4-bit codes looked up in a 16-entry table.

IR (NNCF ``compress_weights`` modes NF4, FP4, MXFP4, NVFP4; matched by :mod:`.decompression`)::

    Const(nf4 | f4e2m1) -> Convert(F) -> Multiply(scale) -> [Reshape] -> [Convert(f32)]

with the scale a float Const or a constant sub-graph that :mod:`.decompression` computes at
convert time (MXFP4: Const(f8e8m0) -> Convert(F), power-of-two group scales converted exactly;
NVFP4: Convert(f16)(Const(f8e4m3) -> Convert(f32) times a global f32 Const), rounded to f16 as
the IR says). No zero point (NNCF writes none for these types). ONNX (opset 21)::

    UINT4 initializer (the .bin's packed codes) -> Cast(int32) -> Gather(16-entry f32 table)
        -> Mul(scale) -> [Reshape] -> [Cast(f16)]

Why a table: ONNX has no nf4 type, and onnxruntime 1.32 has no CPU kernel for FLOAT4E2M1
DequantizeLinear or Cast (opset 23); both types store one code per 4 bits, low nibble first,
as UINT4 does, so the initializer is the .bin's bytes as they are.

Arithmetic: a chain that ends in Convert(f32), or whose F is f32, is decompressed in f32 with the
table's f32 values (nf4: OpenVINO's values, src/core/src/type/nf4.cpp), one rounding of
``value * scale``: what OpenVINO's CPU plugin computes (measured, 2026.4: an NNCF NF4 MatMul
matches this within 2e-7 and the f16-rounded table only within 4e-4), bit for bit. A chain that
stays f16 follows the IR: the table rounded to f16 (Convert(f16)), the product exact in f32 (two
11-bit significands), then one rounding to f16 as the f16 Multiply does. f4e2m1 values have at
most 2 significant bits, so every product is exact but for overflow.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from ..ir.element_types import NF4_VALUES, TYPES
from . import codebook_weights, compressed_gather
from .builder import LazyValue, Value

TABLE_TYPES = ("nf4", "f4e2m1")


def table(wtype: str, out_type: str) -> np.ndarray:
    """The 16 values of the codes 0..15 of ``wtype`` as f32, rounded to f16 first when the chain
    computes in f16 (``out_type`` f16), as the IR's Convert(f16) does."""
    if wtype == "nf4":
        values = NF4_VALUES
    else:
        values = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    if out_type == "f16":
        values = values.astype(np.float16)
    return values.astype(np.float32)


def emit(ctx, m) -> Value:
    """The Cast -> Gather -> Mul [-> Reshape] [-> Cast] that replaces ``m.root`` (a
    :class:`~ir2onnx.lowering.decompression.Match` of an nf4 / f4e2m1 weight, or of CB4's u4
    indices into a codebook: :mod:`.codebook_weights`)."""
    b, layer, wtype = ctx.b, m.root, m.weight.etype
    what = "codebook indices" if m.codebook is not None else f"{wtype.name} weights"
    ctx.require_opset(layer, 21, f"{what} kept packed (UINT4 codes and a Gather table; "
                                 "--compressed-weights unpack unpacks them)")
    values_f32 = codebook_weights.table(m.codebook, m.out_type) if m.codebook is not None \
        else table(wtype.name, m.out_type)
    label = "codebook" if m.codebook is not None else f"{wtype.name}_table"
    w = tuple(int(d) for d in m.weight.shape)
    target = tuple(m.reshape_to or w)
    ctx.stats["compressed_weights"] = ctx.stats.get("compressed_weights", 0) + 1

    def emit_table() -> str:
        codes = b.add_tensor(m.weight, TYPES["u4"], w, f"{m.chain[0].name}_codes")
        index = b.Cast(codes, to=TensorProto.INT32)
        values = b.Gather(b.const(values_f32, np.float32, label), index)
        scale_name = b.const(np.asarray(m.scale, order="C"), m.scale.dtype, "table_scale")
        if m.scale.dtype != np.float32:  # f16 scales stay f16 in the file; widened exactly
            scale_name = b.Cast(scale_name, to=TensorProto.FLOAT)
        out = b.Mul(values, scale_name)
        if target != w:
            out = b.Reshape(out, b.const(list(target)))
        if m.out_type == "f16":
            out = b.Cast(out, to=TensorProto.FLOAT16)
        return out

    out = LazyValue(b, TYPES[m.out_type], target, emit_table)
    compressed_gather.attach_table(ctx, m, values_f32, out)
    return out
