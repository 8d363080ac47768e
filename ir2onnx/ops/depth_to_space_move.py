"""The block movements of DepthToSpace and SpaceToDepth as Reshape / Transpose / Gather chains.

A movement is described by labels: each input axis is split into labelled sub-axes (sizes are
:class:`Dim` expressions over the input's dims), and the output axes are groups of labels in
output order. :func:`move` then emits:

* with every dim but the batch static and output rows (the last output axis) of at least
  :data:`GATHER_BYTES`: [Transpose ->] Reshape -> Gather of whole rows (:func:`gather_rows`),
  one pass that writes the output, on all of onnxruntime's threads;
* otherwise Reshape -> Transpose -> Reshape. Sub-axes of size 1 are dropped and sub-axes that
  stay neighbours are merged, so the Transpose has the lowest rank (NHWC blocks_first becomes a
  single-axis move, which onnxruntime runs as block copies). When the last output axis is a
  block axis (NCHW: ``..., W, b``; NHWC depth_first: ``.., b, c``), onnxruntime's general
  Transpose copies element by element; :func:`transposes` then splits the permutation into two
  Transposes that it runs as block or matrix copies, with a Reshape between them so that it does
  not fuse them back (2-3x faster on onnxruntime 1.31 with one thread; see
  benchmarks/bench_depth_to_space.py);
* shapes are constants when the dims they need are known, one ``-1`` when a single target dim
  is not, and otherwise computed in the graph (Shape, Mul, Div, Concat);
* a constant input (up to :data:`FOLD_ELEMENTS` elements) is folded at convert time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..lowering.builder import Builder, Value
from ..lowering.shapes import dims_of, i64

FOLD_ELEMENTS = 4096
MIN_ROW = 16  # elements: rows at least this long are moved whole (see transposes)
GATHER_BYTES = 16  # rows of at least this many bytes move as one Gather (see gather_rows)
MAX_TABLE_ELEMENTS = 1 << 20  # index tables past this (huge dims) leave the move to the chain


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


def move(b: Builder, x: Value, split: list[list[tuple[str, Dim]]], groups: list[tuple[str, ...]]) -> Value:
    """Split each axis of ``x`` into its labelled sub-axes, reorder them into ``groups`` order and
    merge each group into one output axis."""
    subs = [(label, d) for axis in split for label, d in axis]
    size = {label: d for label, d in subs}
    order = [label for g in groups for label in g]
    assert sorted(order) == sorted(size), (order, list(size))
    out_dims = [Dim.prod(size[l] for l in g) for g in groups]
    out_shape = tuple(d.static(x.shape) for d in out_dims)
    keep = [l for l, _ in subs if size[l].static(x.shape) != 1]
    src = _merge(keep, [l for l in order if l in keep])
    dst = sorted(src, key=lambda run: order.index(run[0]))
    perm = [src.index(run) for run in dst]
    if x.is_const and math.prod(x.shape) <= FOLD_ELEMENTS:
        return _fold(b, x, src, perm, size, out_shape)
    rows = gather_rows(b, x, split, groups, out_shape)
    if rows is not None:
        return rows
    if perm == sorted(perm):  # no element moves: a reshape (or nothing at all)
        if out_dims == [Dim.of_axis(i) for i in range(len(x.shape))]:
            return x
        return Value(b, x.etype, out_shape, name=reshape(b, x, out_dims))
    src_dims = [Dim.prod(size[l] for l in run) for run in src]
    name = x.name if src_dims == [Dim.of_axis(i) for i in range(len(x.shape))] else reshape(b, x, src_dims)
    dims = src_dims
    for p, merge in transposes(perm, [d.static(x.shape) for d in src_dims]):
        name, dims = b.Transpose(name, perm=p), [dims[i] for i in p]
        if merge:
            dims = [Dim.prod(dims[i] for i in g) for g in merge]
            name = reshape(b, x, dims, name)
    if dims != out_dims:  # (a Reshape into a graph output costs onnxruntime a copy)
        name = reshape(b, x, out_dims, name)
    return Value(b, x.etype, out_shape, name=name)


def gather_rows(b: Builder, x: Value, split, groups, out_shape) -> Value | None:
    """The movement as [Transpose ->] Reshape -> Gather of whole rows, or None where it does not
    apply: every dim but the batch static, rows (the last output axis) of >= GATHER_BYTES, and
    rows made contiguous by at most one single-axis move (a matrix transpose per outer index).

    Gather writes the output in one pass and onnxruntime runs it on all threads, where the chain
    needs up to two Transposes plus, when its last Reshape is a graph output, one more copy. The
    index is a broadcast sum of one small vector per output axis (Add nodes over initializers of
    that axis's size), which onnxruntime folds once when it loads the model.
    """
    size = {label: d for axis in split for label, d in axis}
    lead = split[0][0][0]
    if len(split[0]) != 1 or groups[0] != (lead,) or x.etype.min_opset > 13:
        return None  # (Gather-13 has no float8 / 4-bit types)
    static = {label: d.static(x.shape) for label, d in size.items()}
    if any(v is None for label, v in static.items() if label != lead):
        return None
    inp = [label for axis in split[1:] for label, _ in axis if static[label] != 1]
    last = [label for label in groups[-1] if static[label] != 1]
    rows = math.prod(static[label] for label in last)
    target = [label for label in inp if label not in last] + last
    middle = target[: len(target) - len(last)]
    if not last or rows * x.etype.bits < 8 * GATHER_BYTES:
        return None
    if middle == [label for g in groups[1:-1] for label in g if static[label] != 1]:
        return None  # the rows are in order already: one Transpose (or none) does it
    if sum(math.prod(static[label] for label in g) for g in groups[1:-1]) > MAX_TABLE_ELEMENTS:
        return None  # the index tables would be large (or not fit in memory): the chain has none
    data = x.name
    if target != inp:
        runs = _merge(inp, target)
        perm = [runs.index(r) for r in sorted(runs, key=lambda r: target.index(r[0]))]
        if not single_axis_move(perm):
            return None
        data = reshape(b, x, [size[lead]] + [Dim.prod(size[label] for label in r) for r in runs])
        data = b.Transpose(data, perm=[0] + [p + 1 for p in perm])
    count = math.prod(static[label] for label in middle)
    data = reshape(b, x, [size[lead], Dim.const(count), Dim.const(rows)], data)
    stride = {label: math.prod(static[m] for m in middle[i + 1:]) for i, label in enumerate(middle)}
    dtype, index = (np.int32 if count < 2**31 else np.int64), None
    for axis, g in enumerate(groups[1:-1]):
        digits = np.arange(math.prod(static[label] for label in g), dtype=np.int64)
        term = np.zeros_like(digits)
        for label in reversed(g):  # the group's labels, least significant last
            if static[label] != 1:
                term += digits % static[label] * stride[label]
            digits //= static[label]
        term = b.const(term.reshape([-1 if j == axis else 1 for j in range(len(groups) - 2)]), dtype, "rows")
        index = term if index is None else b.Add(index, term)
    return Value(b, x.etype, out_shape, name=b.Gather(data, index, axis=1))


def _merge(labels: list[str], order: list[str]) -> list[tuple[str, ...]]:
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


def transposes(perm: list[int], sizes: list[int | None]) -> list[tuple[list[int], list[list[int]] | None]]:
    """``perm`` as Transpose steps, each ``(perm, groups)``: after the step, the axes in each group
    are merged by a Reshape (which also keeps onnxruntime from fusing the steps back into one).

    One step when onnxruntime copies blocks anyway: the last axis stays last, or one axis moves.
    Otherwise the last output axis J (a block axis) would be gathered element by element; then
    either, with long rows L (the input's last axis, second last in the output), move whole rows
    with J in front and interleave ``[J, M] -> [M, J]``, or move J to the end first (a matrix
    transpose per outer index) and then the blocks that now end in J.
    """
    n, last, j = len(perm), len(perm) - 1, perm[-1]
    if n < 3 or j == last or single_axis_move(perm):
        return [(perm, None)]
    if perm[-2] == last and (sizes[last] is None or sizes[last] >= MIN_ROW):
        first = [j] + perm[:-1]
    else:
        first = [a for a in range(n) if a != j] + [j]
    runs = _merge(first, perm)
    if len(runs) == n:  # nothing to merge in between: no gain
        return [(perm, None)]
    second = sorted(range(len(runs)), key=lambda r: perm.index(runs[r][0]))
    return [(first, [[first.index(a) for a in run] for run in runs]), (second, None)]


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


def _fold(b: Builder, x: Value, src, perm, size, out_shape) -> Value:
    """The movement of a constant, done at convert time."""
    data = np.asarray(x.value())
    src_shape = [math.prod(size[l].static(x.shape) for l in run) for run in src]
    out = np.ascontiguousarray(data.reshape(src_shape).transpose(perm)).reshape(out_shape)
    return Value(b, x.etype, out.shape, const=out, hint=f"{b.layer_name}_folded")
