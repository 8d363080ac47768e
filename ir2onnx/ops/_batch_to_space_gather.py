"""BatchToSpace-2 and SpaceToBatch-2 as one Gather (helpers of :mod:`ir2onnx.ops.batch_to_space`).

For static spatial dims and constant block and crops/pads, the data is viewed as rows of the
trailing axes that move as one contiguous block (unblocked, uncropped axes) and the output is
``Gather(rows, index, axis=0)``: one pass over the data, where the chain needs a Transpose and a
Slice (and onnxruntime copies once more when the last Reshape produces a graph output).

The index is the broadcast sum of one small constant table per axis (``Add`` nodes over
initializers of a few hundred elements), which onnxruntime folds into one tensor when the
session is created, so the model file stays small. With a dynamic batch, the batch's part of the
index (a Range) is added at run time: a pass over the index only, a fraction of the data.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.element_types import ElementType
from ._batch_to_space_chain import Dim, Dims
from ._common.shapes import folded_sum, i64

_INVALID = 1 << 40  # marks a padded position before the Min when the batch is dynamic
MAX_TABLE_ELEMENTS = 1 << 20  # larger index tables (huge dims): the chain formulation instead


def table_elements(dims: list, B: list[int], lo: list[int], hi: list[int]) -> int:
    """An upper bound of the index tables' elements built at convert time: one table per moving
    spatial axis (about its padded or output size) and, for a static batch, a batch range."""
    m = outer_axes(B[1:], lo[1:], hi[1:])
    total = sum(dims[1 + j] * B[1 + j] + lo[1 + j] + hi[1 + j] for j in range(m))
    return total + (dims[0] if isinstance(dims[0], int) else 0)


def outer_axes(Bs: list[int], lo: list[int], hi: list[int]) -> int:
    """How many leading spatial axes move; the trailing ones (block 1, no crop or pad) stay
    together as the contiguous block each index moves."""
    m = len(Bs)
    while m > 0 and Bs[m - 1] == 1 and lo[m - 1] == 0 and hi[m - 1] == 0:
        m -= 1
    return m


def inner_bytes(dims: list[int], Bs: list[int], lo: list[int], hi: list[int], etype: ElementType) -> int:
    """Bytes that each index of the Gather moves (``dims``: the spatial dims)."""
    return math.prod(dims[outer_axes(Bs, lo, hi):]) * etype.bits // 8


def _sum(d: Dims, terms: list, dtype) -> str:
    """Broadcast sum as Add nodes: constant tables first (onnxruntime folds those), then tensors."""
    return folded_sum(d.b, terms, dtype, "b2s_index")


def _batch_range(d: Dims, count: Dim, step: int, shape: list[int]) -> np.ndarray | str:
    """``arange(count) * step`` reshaped to ``shape`` (-1 at the batch axis)."""
    if isinstance(count, int):
        return (np.arange(count, dtype=np.int64) * step).reshape([count if s == -1 else s for s in shape])
    b = d.b
    scalar = b.Squeeze(d.t(count), i64(b, [0]))
    r = b.Range(b.const(0, np.int64), scalar, b.const(1, np.int64))
    return b.Reshape(b.Mul(r, i64(b, [step])), i64(b, shape))


def batch_to_space(d: Dims, name: str, dims: list[Dim], B: list[int], CB: list[int], CE: list[int]) -> str:
    """BatchToSpace-2 -> Reshape, Gather (the batch may be dynamic)."""
    batch, D = dims[0], list(dims[1:])
    Bs, cb, ce = B[1:], CB[1:], CE[1:]
    m = outer_axes(Bs, cb, ce)
    S = math.prod(D[:m])  # rows per batch entry
    bp = d.div(batch, math.prod(Bs))
    static = isinstance(bp, int)
    dtype = np.int32 if static and batch * S < 2**31 else np.int64
    # batch index = (block offsets, most significant first) * bp + n; row = batch index * S + d
    blocks, rows_in = [], []
    for j in range(m):
        z = np.arange(D[j] * Bs[j] - cb[j] - ce[j], dtype=np.int64) + cb[j]
        shape = [1] * (j + 1) + [-1] + [1] * (m - j - 1)
        blocks.append(((z % Bs[j]) * math.prod(Bs[j + 1:])).reshape(shape))
        rows_in.append(((z // Bs[j]) * math.prod(D[j + 1:m])).reshape(shape))
    terms: list = [] if bp == 1 else [_batch_range(d, bp, S, [-1] + [1] * m)]
    if static:
        terms = [blk * (bp * S) + row for blk, row in zip(blocks, rows_in)] + terms
    else:
        block_part = d.b.Mul(_sum(d, blocks, dtype), d.t(d.mul(bp, S)))
        terms = [_sum(d, rows_in, dtype), block_part] + terms
    rows = d.b.Reshape(name, d.target([d.mul(batch, S)] + D[m:]), allowzero=1)
    return d.b.Gather(rows, _sum(d, terms, dtype), axis=0)


def space_to_batch(d: Dims, name: str, dims: list[Dim], B: list[int], PB: list[int], PE: list[int],
                   etype: ElementType) -> str:
    """SpaceToBatch-2 -> Reshape, [Concat of a zero row,] Gather (the batch may be dynamic)."""
    b, batch, D = d.b, dims[0], list(dims[1:])
    Bs, pb, pe = B[1:], PB[1:], PE[1:]
    m = outer_axes(Bs, pb, pe)
    S = math.prod(D[:m])
    padded = any(pb[:m] + pe[:m])
    static = isinstance(batch, int)
    invalid = batch * S if static else _INVALID  # >= the zero row's index
    dtype = np.int32 if static and (m + 1) * (batch * S + 1) < 2**31 else np.int64  # sums before Min fit
    Y = [(D[j] + pb[j] + pe[j]) // Bs[j] for j in range(m)]
    # Index over [B_1..B_m, batch, Y_1..Y_m]; a padded position gets a value >= the zero row's
    # index, which the Min turns into the zero row (appended after the data's rows).
    terms: list = []
    for j in range(m):
        o = np.arange(Bs[j], dtype=np.int64)[:, None]
        src = np.arange(Y[j], dtype=np.int64)[None, :] * Bs[j] + o - pb[j]
        shape = [1] * (2 * m + 1)
        shape[j], shape[m + 1 + j] = Bs[j], Y[j]
        terms.append(np.where((src >= 0) & (src < D[j]), src * math.prod(D[j + 1:m]), invalid).reshape(shape))
    terms.append(_batch_range(d, batch, S, [1] * m + [-1] + [1] * m))
    index = _sum(d, terms, dtype)
    rows_n = d.mul(batch, S)  # also the index of the zero row
    rows = b.Reshape(name, d.target([rows_n] + D[m:]), allowzero=1)
    if padded:
        index = b.Min(index, b.const([rows_n], dtype) if static else d.t(rows_n))
        rows = b.Concat(rows, b.const(np.zeros([1] + D[m:], etype.numpy), etype.numpy, "zero_row"), axis=0)
    index = b.Reshape(index, d.target([d.mul(math.prod(Bs), batch)] + Y), allowzero=1)
    return b.Gather(rows, index, axis=0)
