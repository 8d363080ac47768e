"""The Gather formulations of the DepthToSpace / SpaceToDepth movements (labels as in
:mod:`~ir2onnx.ops._depth_to_space_move`): whole output rows gathered in one pass on all of
onnxruntime's threads, after at most one matrix transpose that onnxruntime runs well with
threads, or one Gather per block phase and a Concat that interleaves them."""
from __future__ import annotations

import math

import numpy as np

from ..lowering.builder import Builder, Value
from ._depth_to_space_move import (GATHER_BYTES, MAX_PHASES, MAX_TABLE_ELEMENTS, PHASE_BITS, Dim, merge_runs,
                                  reshape, single_axis_move, slow_transpose)


def gather_rows(b: Builder, x: Value, split, groups, out_shape) -> Value | None:
    """The movement as [Transpose ->] Reshape -> Gather of whole rows, or None where it does not
    apply: every dim but the batch static, rows (the last output axis) of >= GATHER_BYTES, and
    rows made contiguous by at most one single-axis move that onnxruntime runs well with threads
    (:func:`slow_transpose`); where the rows end in a block axis that the input holds outside
    them (NCHW: ``.., W, b``) and elements are 1, 2 or 4 bytes, one Gather per block phase and
    a Concat that interleaves them (:func:`_phases`).

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
    if sum(math.prod(static[label] for label in g) for g in groups[1:-1]) > MAX_TABLE_ELEMENTS:
        return None  # the index tables would be large (or not fit in memory): the chain has none
    if len(last) > 1 and x.etype.bits in PHASE_BITS and last[-1] not in inp[-len(last) + 1:] \
            and inp[-len(last) + 1:] == last[:-1] and static[last[-1]] <= MAX_PHASES:
        phased = _phases(b, x, split, groups, static, inp, last)
        if phased is not None:
            return phased
    rows = math.prod(static[label] for label in last)
    if not last or rows * x.etype.bits < 8 * GATHER_BYTES:
        return None
    if [label for label in inp if label not in last] == \
            [label for g in groups[1:-1] for label in g if static[label] != 1]:
        return None  # the rows are in order already: one Transpose (or none) does it
    data, target = x.name, None
    if inp[-len(last):] != last:  # the rows are not contiguous yet: one matrix transpose first
        for target in _row_targets(inp, last):
            runs = merge_runs(inp, target)
            perm = [0] + [runs.index(r) + 1 for r in sorted(runs, key=lambda r: target.index(r[0]))]
            sizes = [static[lead]] + [math.prod(static[label] for label in r) for r in runs]
            if single_axis_move(perm) and not slow_transpose(perm, sizes, x.etype.bits):
                break
        else:
            return None
        data = reshape(b, x, [size[lead]] + [Dim.prod(size[label] for label in r) for r in runs])
        data = b.Transpose(data, perm=perm)
    middle = [label for label in (target or inp) if label not in last]
    count = math.prod(static[label] for label in middle)
    data = reshape(b, x, [size[lead], Dim.const(count), Dim.const(rows)], data)
    index = _index(b, groups, static, middle, count)
    return Value(b, x.etype, out_shape, name=b.Gather(data, index, axis=1))


def _row_targets(inp, last):
    """Input orders that make the rows contiguous: the labels ahead of the rows stay in order,
    and the labels behind them go either just ahead of the rows or to the front (the front is a
    matrix transpose of whole tensors, which onnxruntime runs well on any number of threads)."""
    rest = [label for label in inp if label not in last]
    yield rest + last
    pos = max(inp.index(label) for label in last)
    behind = [label for label in inp[pos + 1:] if label not in last]
    if behind:
        yield behind + [label for label in rest if label not in behind] + last


def _index(b: Builder, groups, static, middle, count, fixed: dict | None = None) -> str:
    """Row numbers in ``middle`` order for each output row (a broadcast sum, one term per output
    axis between the first and the last), plus the offset of the ``fixed`` label values."""
    stride = {label: math.prod(static[m] for m in middle[i + 1:]) for i, label in enumerate(middle)}
    dtype, index = (np.int32 if count < 2**31 else np.int64), None
    offset = sum(v * stride[label] for label, v in (fixed or {}).items())
    for axis, g in enumerate(groups[1:-1]):
        digits = np.arange(math.prod(static[label] for label in g), dtype=np.int64)
        term = np.zeros_like(digits) + (offset if axis == 0 else 0)
        for label in reversed(g):  # the group's labels, least significant last
            if static[label] != 1:
                term += digits % static[label] * stride[label]
            digits //= static[label]
        term = b.const(term.reshape([-1 if j == axis else 1 for j in range(len(groups) - 2)]), dtype, "rows")
        index = term if index is None else b.Add(index, term)
    if index is None:
        index = b.const(np.array(offset, dtype=dtype), dtype, "rows")
    return index


def _phases(b: Builder, x: Value, split, groups, static, inp, last) -> Value | None:
    """Rows that end in a block axis J the input holds outside them (``[.., W, b]`` from
    ``[.., b, .., W]``): for each value of J, one Gather of the input's rows (W) into output
    order, then one Concat along a new last axis that interleaves the phases element by element.

    Both run on all of onnxruntime's threads; the alternative, a Transpose that moves J next to
    W, is an MLAS matrix transpose with J (2..4) rows, which onnxruntime 1.31 runs 2.7x slower
    with two threads than with one (benchmarks/bench_depth_to_space.py)."""
    size = {label: d for axis in split for label, d in axis}
    lead, j = split[0][0][0], last[-1]
    row = last[:-1]
    rows = math.prod(static[label] for label in row)
    if rows * x.etype.bits < 8 * GATHER_BYTES:
        return None
    middle = [label for label in inp if label not in row]
    count = math.prod(static[label] for label in middle)
    outer = [Dim.const(math.prod(static[label] for label in g)) for g in groups[1:-1]]
    data = reshape(b, x, [size[lead], Dim.const(count), Dim.const(rows), Dim.const(1)])
    parts = [b.Gather(data, _index(b, groups, static, middle, count, {j: v}), axis=1) for v in range(static[j])]
    y = b.Concat(*parts, axis=len(groups))
    out_dims = [size[lead]] + outer + [Dim.prod(size[label] for label in groups[-1])]
    out_shape = tuple(d.static(x.shape) for d in out_dims)
    return Value(b, x.etype, out_shape, name=reshape(b, x, out_dims, y))
