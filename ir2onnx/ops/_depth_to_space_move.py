"""The block movements of DepthToSpace and SpaceToDepth as Reshape / Transpose / Gather chains.

A movement is described by labels: each input axis is split into labelled sub-axes (sizes are
:class:`Dim` expressions over the input's dims), and the output axes are groups of labels in
output order. :func:`ir2onnx.ops.depth_to_space.move` then emits:

* with every dim but the batch static and output rows (the last output axis) of at least
  :data:`GATHER_BYTES`: [Transpose ->] Reshape -> Gather of whole rows
  (:func:`~ir2onnx.ops._depth_to_space_rows.gather_rows`),
  one pass that writes the output, on all of onnxruntime's threads. Where the rows end in a
  block axis (NCHW: ``..., W, b``) and elements are 1, 2 or 4 bytes, one Gather of W rows per
  block phase and a Concat that interleaves them;
* otherwise Reshape -> Transpose -> Reshape. Sub-axes of size 1 are dropped and sub-axes that
  stay neighbours are merged, so the Transpose has the lowest rank (NHWC blocks_first becomes a
  single-axis move, which onnxruntime runs as block copies). When the last output axis is a
  block axis (NCHW: ``..., W, b``; NHWC depth_first: ``.., b, c``), onnxruntime's general
  Transpose copies element by element; :func:`transposes` then splits the permutation into two
  Transposes that it runs as block or matrix copies, with a Reshape between them so that it does
  not fuse them back (2-3x faster on onnxruntime 1.31 with one thread; see
  benchmarks/bench_depth_to_space.py);
* no Transpose that onnxruntime runs as many small MLAS matrix transposes, each dispatched to
  its thread pool (:func:`slow_transpose`: up to 20x slower on two threads than on one);
* shapes are constants when the dims they need are known, one ``-1`` when a single target dim
  is not, and otherwise computed in the graph (Shape, Mul, Div, Concat);
* a constant input (up to :data:`FOLD_ELEMENTS` elements) is folded at convert time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..lowering.builder import Builder, Value
from ._common.shapes import dims_of, i64

FOLD_ELEMENTS = 4096
MIN_ROW = 16  # elements: rows at least this long are moved whole (see transposes)
GATHER_BYTES = 16  # rows of at least this many bytes move as one Gather (see gather_rows)
MAX_TABLE_ELEMENTS = 1 << 20  # index tables past this (huge dims) leave the move to the chain
PHASE_BITS = (8, 16, 32)  # element sizes onnxruntime transposes with threaded MLAS (see slow_transpose)
MAX_PHASES = 16  # block axes up to this size interleave as Gathers + Concat (see _phases)
MLAS_MIN_ELEMENTS = 8192  # threaded MLAS transposes of smaller matrices are dominated by dispatch


@dataclass(frozen=True)
class Dim:
    """``coef * prod(input dims at axes) // div`` (the division is exact for valid inputs)."""

    axes: tuple[int, ...] = ()
    coef: int = 1
    div: int = 1

    @staticmethod
    def const(value: int) -> "Dim":
        return Dim((), value, 1)

    @staticmethod
    def of_axis(axis: int, coef: int = 1, div: int = 1) -> "Dim":
        return Dim((axis,), coef, div)

    @staticmethod
    def prod(dims) -> "Dim":
        out = Dim()
        for d in dims:
            out = Dim(out.axes + d.axes, out.coef * d.coef, out.div * d.div)
        g = math.gcd(out.coef, out.div)
        return Dim(out.axes, out.coef // g, out.div // g)

    def static(self, shape) -> int | None:
        """The value, or None when a dim it needs is only known at run time."""
        values = [shape[a] for a in self.axes]
        if any(v is None for v in values):
            return None
        return self.coef * math.prod(values) // self.div


def merge_runs(labels: list[str], order: list[str]) -> list[tuple[str, ...]]:
    """Runs of labels that are neighbours both in input and in output order."""
    runs: list[list[str]] = []
    for label in labels:
        if runs and order.index(label) == order.index(runs[-1][-1]) + 1:
            runs[-1].append(label)
        else:
            runs.append([label])
    return [tuple(r) for r in runs]


def single_axis_move(perm: list[int]) -> bool:
    """True when ``perm`` moves one axis and keeps the others in order (onnxruntime's fast path)."""
    for a in perm:
        rest = [v for v in perm if v != a]
        if rest == sorted(rest):
            return True
    return False


def _ort_single_axis(perm: list[int]) -> tuple[int, int] | None:
    """(from, to) of the axis that onnxruntime 1.31 sees moved (it tries outwards first), or None."""
    n = len(perm)
    i = next((i for i in range(n) if perm[i] != i), None)
    if i is None:
        return None
    a = perm[i]
    if a > i and perm[i + 1:] == [v for v in range(i, n) if v != a]:
        return a, i  # axis a moved out to i
    rest = [v for v in perm[i:] if v != i]
    if rest == list(range(i + 1, n)):
        return i, perm.index(i)  # axis i moved in
    return None


def slow_transpose(perm: list[int], sizes: list[int | None], bits: int) -> bool:
    """True where onnxruntime 1.31 runs the Transpose in a regime measured to be much slower
    with several threads than the alternatives: a single-axis move whose moved pieces are 1, 2 or
    4 bytes becomes one MLAS matrix transpose per outer index, each handed to the thread pool
    (about 1 us of dispatch each on 2 threads: ``[262144, 16, 4] -> [262144, 4, 16]`` f32 takes
    13 ms on one thread and 280 ms on two). Slow: 64 or more matrices of < MLAS_MIN_ELEMENTS
    each. Unknown (dynamic) dims count as 1 in the number of matrices and as large in their size."""
    moved = _ort_single_axis(perm)
    if moved is None:
        return False
    src, dst = moved
    block = 1
    for d in sizes[max(src, dst) + 1:]:
        block = None if block is None or d is None else block * d
    if block is None or block * bits not in PHASE_BITS:
        return False
    loops = math.prod(d or 1 for d in sizes[:min(src, dst)])
    if loops < 64 or any(d is None for d in sizes[min(src, dst):]):
        return False
    return math.prod(sizes) // loops < MLAS_MIN_ELEMENTS


def transposes(perm: list[int], sizes: list[int | None], bits: int = 32) \
        -> list[tuple[list[int], list[list[int]] | None]]:
    """``perm`` as Transpose steps, each ``(perm, groups)``: after the step, the axes in each group
    are merged by a Reshape (which also keeps onnxruntime from fusing the steps back into one).

    One step when onnxruntime copies blocks anyway: the last axis stays last, or one axis moves.
    Otherwise the last output axis J (a block axis) would be gathered element by element; then
    either, with long rows L (the input's last axis, second last in the output), move whole rows
    with J in front and interleave ``[J, M] -> [M, J]``, or move J to the end first (a matrix
    transpose per outer index) and then the blocks that now end in J. Two steps only where
    neither is slow on several threads (:func:`slow_transpose`).
    """
    n, last, j = len(perm), len(perm) - 1, perm[-1]
    if n < 3 or j == last or single_axis_move(perm):
        return [(perm, None)]
    if perm[-2] == last and (sizes[last] is None or sizes[last] >= MIN_ROW):
        first = [j] + perm[:-1]
    else:
        first = [a for a in range(n) if a != j] + [j]
    runs = merge_runs(first, perm)
    if len(runs) == n:  # nothing to merge in between: no gain
        return [(perm, None)]
    second = sorted(range(len(runs)), key=lambda r: perm.index(runs[r][0]))
    mid = [_prod([sizes[a] for a in run]) for run in runs]
    if slow_transpose(first, sizes, bits) or slow_transpose(second, mid, bits):
        return [(perm, None)]
    return [(first, [[first.index(a) for a in run] for run in runs]), (second, None)]


def _prod(values):
    return None if any(v is None for v in values) else math.prod(values)


def reshape(b: Builder, x: Value, dims: list[Dim], data: str | None = None) -> str:
    """Reshape ``data`` (default: x) to ``dims``, which are expressions over x's dims."""
    return b.Reshape(x.name if data is None else data, _shape(b, x, dims), allowzero=1)


def _shape(b: Builder, x: Value, dims: list[Dim]) -> str:
    values = [d.static(x.shape) for d in dims]
    unknown = [i for i, v in enumerate(values) if v is None]
    if not unknown:
        return i64(b, values, "shape")
    if len(unknown) == 1 and all(v != 0 for v in values if v is not None):
        values[unknown[0]] = -1
        return i64(b, values, "shape")
    parts = []
    for d, v in zip(dims, values):
        if v is not None:
            parts.append(i64(b, [v], "dim"))
            continue
        t = None
        for a in d.axes:
            s = dims_of(b, x, a, a + 1)
            t = s if t is None else b.Mul(t, s)
        if d.coef != 1:
            t = b.Mul(t, i64(b, [d.coef], "dim"))
        if d.div != 1:
            t = b.Div(t, i64(b, [d.div], "dim"))
        parts.append(t)
    return b.Concat(*parts, axis=0)


def fold(b: Builder, x: Value, src, perm, size, out_shape) -> Value:
    """The movement of a constant, done at convert time."""
    data = np.asarray(x.value())
    src_shape = [math.prod(size[l].static(x.shape) for l in run) for run in src]
    out = np.asarray(data.reshape(src_shape).transpose(perm), order="C").reshape(out_shape)
    return Value(b, x.etype, out.shape, const=out, hint=f"{b.layer_name}_folded")
