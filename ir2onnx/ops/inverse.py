"""Inverse-14: the inverse of each [n, n] matrix of the last two dims (batch dims may be dynamic;
n must be static and at most :data:`MAX_N`); ``adjoint=true`` gives the inverse of the
conjugate transpose, i.e. the inverse transposed (real types): TensorFlow's
``MatrixInverse(adjoint=True)``, which OpenVINO's TensorFlow frontend writes as this attribute and
OpenVINO's CPU plugin computes. The spec text and OpenVINO's reference give the adjugate
(inverse times determinant) instead; ir2onnx follows the framework (docs/deviations.md).

Unrolled Gauss-Jordan elimination on ``[A | I]`` with partial pivoting, as OpenVINO's reference
picks pivots (the first row of largest magnitude in the column, at or below the diagonal):
per column ``k``: ``ArgMax(|A[k:, k]|)`` (first occurrence), the row swap as a ``GatherElements``
of the permuted row numbers, the pivot row divided by the pivot, ``Sub(Mul)`` to clear the column
in every other row, ``Where`` to write the pivot row back. f16 is computed in f32.

Arithmetic, not data movement: OpenVINO solves with an LU decomposition, so results differ by
rounding, scaled by the matrix's condition number (tests: rtol 1e-4 on well-conditioned
matrices). A singular matrix divides by zero (inf/NaN) here as in OpenVINO's reference, not
necessarily in the same elements.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import is_static
from ..lowering.registry import lowers
from ._common.inputs import known_rank
from ._common.shapes import i64

MAX_N = 16
FLOATS = ("f16", "f32", "f64")


@lowers("Inverse", "opset14")
def inverse14(ctx, layer, inputs):
    """Inverse-14 -> per column: Slice, Abs, ArgMax, Where (row numbers), GatherElements (swap),
    Div (pivot row), Mul, Sub, Where; Slice of the right half; adjoint: Transpose."""
    x = inputs[0]
    if x.etype is None or x.etype.name not in FLOATS:
        raise UnsupportedLayer(layer, f"Inverse on {x.etype.name if x.etype else '?'} is not supported (floats only)")
    rank = known_rank(layer, x, 2)
    n, m = x.shape[-2], x.shape[-1]
    if n is None or m is None:
        raise UnsupportedLayer(layer, "Inverse needs a static matrix size (the elimination is unrolled per column)")
    if n != m:
        raise InvalidLayer(layer, f"Inverse needs square matrices, not {n}x{m}")
    if n > MAX_N:
        raise UnsupportedLayer(layer, f"Inverse of {n}x{n} matrices: the unrolled elimination is limited to "
                                      f"{MAX_N}x{MAX_N}")
    g = ctx.b
    dtype = np.float64 if x.etype.name == "f64" else np.float32
    data = x.name if x.etype.name != "f16" else g.Cast(x, to=1)
    batch = rank - 2
    eye = g.const(np.eye(n, dtype=dtype).reshape([1] * batch + [n, n]), dtype, "eye")
    static = is_static(x.shape)
    a = g.Concat(data, g.Expand(eye, i64(g, list(x.shape)) if static else g.Shape(data)), axis=-1)  # [..., n, 2n]
    full = i64(g, [*x.shape[:-1], 2 * n]) if static else g.Shape(a)
    rows = g.const(np.arange(n, dtype=np.int64).reshape(n, 1), np.int64, "rows")
    for k in range(n):
        column = g.Slice(a, i64(g, [k, k]), i64(g, [n, k + 1]), i64(g, [-2, -1]))  # [..., n-k, 1]
        arg = g.ArgMax(g.Abs(column), axis=-2, keepdims=1, select_last_index=0)  # [..., 1, 1]
        p = g.Add(arg, i64(g, k))
        kk = i64(g, k)
        order = g.Where(g.Equal(rows, kk), p, g.Where(g.Equal(rows, p), kk, rows))  # [..., n, 1]
        a = g.GatherElements(a, g.Expand(order, full), axis=-2)
        row = g.Slice(a, i64(g, [k]), i64(g, [k + 1]), i64(g, [-2]))  # [..., 1, 2n]
        pivot = g.Slice(row, i64(g, [k]), i64(g, [k + 1]), i64(g, [-1]))  # [..., 1, 1]
        row = g.Div(row, pivot)
        factor = g.Slice(a, i64(g, [k]), i64(g, [k + 1]), i64(g, [-1]))  # [..., n, 1]
        a = g.Where(g.Equal(rows, kk), row, g.Sub(a, g.Mul(factor, row)))
    out = g.Slice(a, i64(g, [n]), i64(g, [2 * n]), i64(g, [-1]))
    if layer.attrs.get("adjoint"):
        out = g.Transpose(out, perm=[*range(batch), batch + 1, batch])
    return [out if x.etype.name != "f16" else g.Cast(out, to=x.etype.onnx)]

