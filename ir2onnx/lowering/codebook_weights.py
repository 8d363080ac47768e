"""Codebook-compressed weights (NNCF ``CompressWeightsMode.CB4``, optimum-intel
``--weight-format cb4``): 4-bit indices into a 16-entry codebook, times a group scale.

IR (NNCF 3.4, OpenVINO 2026.4; ``samples/real/mlp_cb4``)::

    Const(f8e4m3 [16]) -> Convert(f16) ------------------------------\\
    Const(u4 [N, G, gs], the indices) -> Convert(u8) -> Gather-8(codebook, indices, axis 0)
        -> Multiply(Const f16 scale [N, G, 1]) -> Reshape [N, K] -> Convert(f32) -> MatMul(transpose_b)

:func:`head` matches the indices' Const -> Convert -> Gather and computes the codebook at
convert time (f8e4m3 -> f16 is exact); :mod:`.decompression` matches the rest (the Multiply,
Reshape and Convert of every compressed weight) and :mod:`.table_weights` emits it as it does
nf4: the UINT4 indices as the .bin stores them -> Cast(int32) -> Gather(the codebook as f32,
padded to 16 entries with zeros, as OpenVINO's Gather gives zeros past the end) -> Mul(the
scale widened to f32) -> Reshape [-> Cast(f16)]. The product is one f32 rounding, as OpenVINO's
CPU plugin decompresses (a chain that stays f16 rounds it to f16 once, as the f16 Multiply).
A codebook head whose tail is not this pattern is refused, naming it: lowered layer by layer it
would store the indices as int64 and multiply in f16.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..ir.graph import Graph, Layer

INDEX_TYPES = ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64")  # the Convert of the u4 indices
PATTERN = ("a codebook-compressed weight (NNCF CB4: u4 indices -> Convert -> Gather on a constant "
           "codebook -> Multiply(scale) -> [Reshape] -> [Convert f32])")


def head(graph: Graph, consumers, convert: Layer, consts: list, const_value) -> tuple[np.ndarray, Layer] | None:
    """(the codebook as f16/f32 values, the Gather) when ``convert`` (of a u4 Const to an integer
    type) feeds the indices of a Gather on a constant codebook along axis 0, else None."""
    users = consumers.get((convert.id, 0), [])
    if len(users) != 1 or users[0][0].type != "Gather" or users[0][1] != 1:
        return None
    gather = users[0][0]
    if gather.attrs.get("batch_dims", 0) != 0 or len(gather.sources) != 3:
        return None
    book = const_value(graph, graph.producer(gather, 0)[0], consts)
    axis = const_value(graph, graph.producer(gather, 2)[0], consts)
    if book is None or axis is None or np.asarray(axis).reshape(-1).tolist() not in ([0], [-1]) or book.ndim != 1:
        return None
    if book.dtype not in (np.float16, np.float32) or not 0 < book.size <= 16 or not np.all(np.isfinite(book)):
        raise UnsupportedLayer(gather, f"{PATTERN} with a codebook of {book.size} {book.dtype} value(s) is not "
                                       "supported (--compressed-weights unpack lowers it layer by layer)")
    return book, gather


def refuse(gather: Layer, why: str) -> UnsupportedLayer:
    return UnsupportedLayer(gather, f"{PATTERN}: {why} (--compressed-weights unpack lowers it layer by layer)")


def table(book: np.ndarray, out_type: str) -> np.ndarray:
    """The 16 f32 values of the indices 0..15 (zeros past the codebook's end)."""
    values = np.zeros(16, np.float32)
    values[:book.size] = book.astype(np.float16 if out_type == "f16" else book.dtype).astype(np.float32)
    return values
