"""Bit-exact data movement where onnxruntime's own kernels are not.

onnxruntime 1.31's f16 kernels of Where, Tile and Pad (and DepthToSpace/SpaceToDepth) go through
float and quiet signalling NaNs (measured; f32/f64 and Expand, Concat, Gather, GatherElements,
Slice, Reshape, Transpose move bits unchanged). A lowering that only moves data uses these
helpers for the element types in :data:`QUIETING` so the output keeps every bit of its input.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...lowering.builder import Builder, Value
from .shapes import dims_of, i64

QUIETING = frozenset({"f16"})  # element types whose Where/Tile/Pad kernels are not bit-exact


def _aligned_dims(g: Builder, v: Value, rank: int) -> str:
    """int64 shape of ``v`` with leading 1s up to ``rank`` (numpy broadcasting's alignment)."""
    own = dims_of(g, v, 0)
    if len(v.shape) == rank:
        return own
    return g.Concat(i64(g, [1] * (rank - len(v.shape))), own, axis=0)


def broadcast_shape(g: Builder, values: list[Value]) -> str:
    """int64 numpy-broadcast shape of ``values`` (ranks known): max of the aligned dims, or 0
    where some operand has 0 (a constant when every shape is static)."""
    if all(v.shape is not None and all(d is not None for d in v.shape) for v in values):
        return i64(g, list(np.broadcast_shapes(*[tuple(v.shape) for v in values])), "bshape")
    rank = max(len(v.shape) for v in values)
    dims = [_aligned_dims(g, v, rank) for v in values]
    high, low = g.Max(*dims), g.Min(*dims)
    return g.Mul(high, g.Cast(g.Greater(low, i64(g, 0)), to=TensorProto.INT64))


def select(g: Builder, cond: Value, then: Value, other: Value) -> str:
    """``Where(cond, then, other)`` without arithmetic on the values: both branches expanded to
    the common shape, stacked, and picked by GatherElements with the condition as index."""
    shape = broadcast_shape(g, [cond, then, other])
    zero = i64(g, [0])
    stacked = g.Concat(g.Unsqueeze(g.Expand(other, shape), zero), g.Unsqueeze(g.Expand(then, shape), zero), axis=0)
    index = g.Unsqueeze(g.Cast(g.Expand(cond, shape), to=TensorProto.INT64), zero)
    return g.Squeeze(g.GatherElements(stacked, index, axis=0), zero)


def tile(g: Builder, x: Value, repeats: str) -> str:
    """``Tile(x, repeats)`` (repeats: int64 of length rank(x)) as Reshape, Expand, Reshape:
    ``[d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0*d0, r1*d1]``."""
    k = len(x.shape)
    if k == 0:
        return x.name
    dims = dims_of(g, x, 0)
    column = i64(g, [1])
    as_column = lambda v: g.Unsqueeze(v, column)  # noqa: E731  [k] -> [k, 1]
    flat = i64(g, [-1])
    spread = g.Reshape(g.Concat(i64(g, np.ones((k, 1), np.int64)), as_column(dims), axis=1), flat)
    target = g.Reshape(g.Concat(as_column(repeats), as_column(dims), axis=1), flat)
    # allowzero=1: a 0-sized dim is a literal 0 here, not "copy the input dim"
    expanded = g.Expand(g.Reshape(x, spread, allowzero=1), target)
    return g.Reshape(expanded, g.Mul(repeats, dims), allowzero=1)
