"""BatchToSpace-2 and SpaceToBatch-2 (spec: ../shared/specs/BatchToSpace.md).

One semantics for every input situation: constant block and crops/pads with a static data shape,
the same with dynamic dims, or block/crops/pads computed at run time (the graph then computes the
shapes, and a failed check stops onnxruntime instead of giving a wrong result, see
:func:`~ir2onnx.ops._batch_to_space_chain.guard`). Values known at convert time are checked here.

Formulations (``FORMULATION`` forces one where it applies; tests run both):

- fold: every input constant and small -> the value, computed now;
- gather: static spatial dims (any batch), constant block and crops/pads, and a contiguous
  trailing block of at least ``GATHER_MIN_INNER_BYTES`` -> Reshape, Gather (one pass);
- chain: everything else -> the spec's Reshape/Transpose chain with unit axes dropped and
  co-moving axes merged (:mod:`~ir2onnx.ops._batch_to_space_chain`).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import shape_str
from ..lowering.registry import lowers
from . import _batch_to_space_chain as chain, _batch_to_space_gather as gather
from ._batch_to_space_chain import Dim, Dims

FORMULATION: str | None = None  # None: choose; "chain" or "gather": force where possible
GATHER_MIN_INNER_BYTES = 16  # smaller blocks: the index (4-8 bytes per block) costs too much memory
ZERO_ROW_MAX_ELEMENTS = 1 << 16  # SpaceToBatch's zero row is an initializer of this many elements
FOLD_ELEMENTS = 4096


@lowers("BatchToSpace", "opset2")
def batch_to_space(ctx, layer, inputs):
    """BatchToSpace-2 -> Reshape, Transpose, Reshape, Slice (or [Slice,] Reshape, Transpose, Reshape
    for block-aligned crops; Reshape, Gather for static spatial dims and a large contiguous block)."""
    data, d, dims, (B, CB, CE) = _setup(ctx, layer, inputs, ("block_shape", "crops_begin", "crops_end"))
    conds = _check_vectors(layer, B, CB, CE, "crops")
    pB = d.prod(B[1:])
    if isinstance(dims[0], int) and isinstance(pB, int):
        if dims[0] % pB:
            raise InvalidLayer(layer, f"batch {dims[0]} is not divisible by prod(block_shape) = {pB}")
    elif pB != 1:  # (the chain's Reshape would fail anyway; the Gather would drop the remainder)
        conds.append(("Equal", ("Mod", dims[0], pB), 0))
    for i in range(1, len(dims)):
        if CB[i] == 0 and CE[i] == 0:
            continue
        rest = d.sub(d.sub(d.mul(dims[i], B[i]), CB[i]), CE[i])
        if not isinstance(rest, int):
            conds.append(("GreaterOrEqual", rest, 0))
        elif rest < 0:
            raise InvalidLayer(layer, f"crops_begin[{i}] + crops_end[{i}] = {CB[i] + CE[i]} exceeds "
                                      f"block_shape[{i}] * data dim {i} = {B[i] * dims[i]}")
    known = _ints(B + CB + CE)
    if known and all(v == 1 for v in B) and not any(CB + CE):
        return [data]
    if known and data.is_const and math.prod(dims) <= FOLD_ELEMENTS:
        return [_fold_b2s(np.asarray(data.value()), B, CB, CE)]
    name = chain.guard(d, data.name, conds)
    if _use_gather(data, dims, known, B, CB, CE):
        return [gather.batch_to_space(d, name, dims, B, CB, CE)]
    return [chain.batch_to_space(d, name, dims, B, CB, CE)]


@lowers("SpaceToBatch", "opset2")
def space_to_batch(ctx, layer, inputs):
    """SpaceToBatch-2 -> Pad, Reshape, Transpose, Reshape (Concat of zero slabs instead of Pad for
    f16/bf16/i16/u16; Reshape, [Concat,] Gather for static spatial dims and a large contiguous block)."""
    data, d, dims, (B, PB, PE) = _setup(ctx, layer, inputs, ("block_shape", "pads_begin", "pads_end"))
    conds = _check_vectors(layer, B, PB, PE, "pads")
    for i in range(1, len(dims)):
        padded = d.add(d.add(dims[i], PB[i]), PE[i])
        if isinstance(padded, int) and isinstance(B[i], int):
            if padded % B[i]:
                raise InvalidLayer(layer, f"padded data dim {i} = {padded} is not divisible by "
                                          f"block_shape[{i}] = {B[i]}")
        elif B[i] != 1:
            conds.append(("Equal", ("Mod", padded, B[i]), 0))
    known = _ints(B + PB + PE)
    if known and all(v == 1 for v in B) and not any(PB + PE):
        return [data]
    if known and data.is_const and math.prod(dims) <= FOLD_ELEMENTS:
        return [_fold_s2b(np.asarray(data.value()), B, PB, PE)]
    name = chain.guard(d, data.name, conds)
    if _use_gather(data, dims, known, B, PB, PE, padding=True):
        return [gather.space_to_batch(d, name, dims, B, PB, PE, data.etype)]
    return [chain.space_to_batch(d, name, dims, B, PB, PE, data.etype)]


def _ints(values) -> bool:
    return all(isinstance(v, int) for v in values)


def _setup(ctx, layer, inputs, names):
    """The data Value, a :class:`Dims`, the data dims and the three integer inputs as lists of
    dims (one per axis; ``("at", ...)`` expressions for inputs known only at run time)."""
    data = inputs[0]
    ctx.onnx_type(layer, data.etype)
    rank = len(data.shape) if data.shape is not None else None
    for v in inputs[1:]:
        if rank is None and v.shape is not None and len(v.shape) == 1 and v.shape[0] is not None:
            rank = v.shape[0]
    if rank is None:
        raise UnsupportedLayer(layer, "the rank of data is unknown (dynamic rank and no input of static length)")
    if rank < 2:
        raise InvalidLayer(layer, f"data must have rank >= 2, got rank {rank}")
    dims: list[Dim] = [s if s is not None else ("dim", i) for i, s in enumerate(data.shape or [None] * rank)]
    return data, Dims(ctx.b, data), dims, [_vector(layer, v, n, rank) for v, n in zip(inputs[1:], names)]


def _vector(layer, v, what: str, rank: int) -> list[Dim]:
    if not v.etype.is_integer:
        raise InvalidLayer(layer, f"{what} must have an integer element type, got {v.etype.name}")
    if v.shape is not None and len(v.shape) != 1:
        raise InvalidLayer(layer, f"{what} must be 1-D, got shape {shape_str(v.shape)}")
    if v.shape is not None and v.shape[0] is not None and v.shape[0] != rank:
        raise InvalidLayer(layer, f"inputs of unequal length: data has rank {rank}, {what} has {v.shape[0]} values")
    if v.is_const:
        return [int(x) for x in np.asarray(v.value()).reshape(-1)]
    return [("at", ("vec", v), i) for i in range(rank)]


def _check_vectors(layer, B: list[Dim], lo: list[Dim], hi: list[Dim], what: str) -> list[tuple]:
    """Check the block and crops/pads values known now; return the checks left for run time
    (one pair of vector comparisons per input known only at run time)."""
    conds: list[tuple] = []
    rank = len(B)
    for name, vec, low in (("block_shape", B, 1), (f"{what}_begin", lo, 0), (f"{what}_end", hi, 0)):
        if not _ints(vec):  # a run-time input: low <= values, and the batch axis exactly `low`
            whole = vec[0][1]
            conds.append(("GreaterOrEqual", whole, ("const", (low,) * rank)))
            conds.append(("LessOrEqual", whole, ("const", (low,) + (chain.INT64_MAX,) * (rank - 1))))
            continue
        for i, v in enumerate(vec):
            if v < low:
                raise InvalidLayer(layer, f"{name}[{i}] = {v}: values must be >= {low}")
        if vec[0] != low:
            why = "blocked" if low else "cropped" if what == "crops" else "padded"
            raise InvalidLayer(layer, f"{name}[0] = {vec[0]}: the batch axis cannot be {why} (must be {low})")
    return conds


def _use_gather(data, dims, known: bool, B, lo, hi, padding: bool = False) -> bool:
    """Gather needs constant block and crops/pads and static spatial dims (the batch may be
    dynamic), and pays off from GATHER_MIN_INNER_BYTES per index."""
    if FORMULATION == "chain" or not known or not _ints(dims[1:]) or data.etype.bits < 8:
        return False
    m = gather.outer_axes(B[1:], lo[1:], hi[1:])
    if gather.table_elements(dims, B, lo, hi) > gather.MAX_TABLE_ELEMENTS:
        return False  # the index tables would be large (or not fit in memory): the chain has none
    if padding and any(lo[1:m + 1] + hi[1:m + 1]) and math.prod(dims[1 + m:]) > ZERO_ROW_MAX_ELEMENTS:
        return False
    inner = gather.inner_bytes(dims[1:], B[1:], lo[1:], hi[1:], data.etype)
    return FORMULATION == "gather" or inner >= GATHER_MIN_INNER_BYTES


def _fold_b2s(x: np.ndarray, B: list[int], CB: list[int], CE: list[int]) -> np.ndarray:
    k, Bs, D = x.ndim - 1, B[1:], list(x.shape[1:])
    bp = x.shape[0] // math.prod(Bs)
    y = x.reshape(Bs + [bp] + D).transpose([k] + [a for i in range(k) for a in (k + 1 + i, i)])
    y = y.reshape([bp] + [D[i] * Bs[i] for i in range(k)])
    return np.asarray(y[(slice(None),) + tuple(slice(CB[i], y.shape[i] - CE[i]) for i in range(1, k + 1))], order="C")


def _fold_s2b(x: np.ndarray, B: list[int], PB: list[int], PE: list[int]) -> np.ndarray:
    k, Bs, batch = x.ndim - 1, B[1:], x.shape[0]
    x = np.pad(x, [(0, 0)] + list(zip(PB[1:], PE[1:])))
    Y = [x.shape[i + 1] // Bs[i] for i in range(k)]
    y = x.reshape([batch] + [v for i in range(k) for v in (Y[i], Bs[i])])
    y = y.transpose([2 + 2 * i for i in range(k)] + [0] + [1 + 2 * i for i in range(k)])
    return np.asarray(y.reshape([batch * math.prod(Bs)] + Y), order="C")
