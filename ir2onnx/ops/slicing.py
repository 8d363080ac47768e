"""StridedSlice-1 and Slice-8.

Both use ONNX Slice, whose clamping of starts/ends equals numpy's (and the specs'): a negative
index counts from the end, out-of-range values are clamped, ``INT64_MAX`` / ``INT64_MIN`` mean
"to the end" in either direction. StridedSlice's masks (constant begin/end/stride, known input
rank) become: begin_mask/end_mask -> those extremes; shrink_axis -> a one-element Slice and a
Squeeze; new_axis -> an Unsqueeze; ellipsis -> full slices for the dims it stands for. With
begin/end/stride known only at run time the masks still decide which entry goes to which axis
(Gather) and a mask's extreme follows the run-time stride's sign (Where).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import as_int64, i64

INT64_MAX, INT64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
FOLD_ELEMENTS = 4096


def _const_ints(layer, v, what: str) -> list[int]:
    if not v.is_const:
        raise UnsupportedLayer(layer, f"{what} known only at run time is not supported")
    if not v.etype.is_integer:
        raise InvalidLayer(layer, f"{what} must be integers, not {v.etype.name}")
    return [int(t) for t in np.asarray(v.value()).reshape(-1)]


def _mask(layer, name: str, n: int) -> list[int]:
    values = list(layer.attrs.get(name) or [])
    if len(values) > n and any(values[n:]):
        raise InvalidLayer(layer, f"{name} {values} has set bits past the {n} begin values")
    return (values + [0] * n)[:n]


def plan_strided_slice(layer, rank: int, begin, end, stride):
    """(starts, ends, steps) for every input axis, the input axes to squeeze and the output axes
    to unsqueeze."""
    n = len(begin)
    if len(end) != n or len(stride) != n:
        raise InvalidLayer(layer, f"begin, end and stride have {n}, {len(end)} and {len(stride)} values")
    if any(s == 0 for s in stride):
        raise InvalidLayer(layer, f"stride {stride} contains 0")
    bm, em = _mask(layer, "begin_mask", n), _mask(layer, "end_mask", n)
    new, shrink, ell = (_mask(layer, m, n) for m in ("new_axis_mask", "shrink_axis_mask", "ellipsis_mask"))
    if sum(ell) > 1:
        raise InvalidLayer(layer, f"ellipsis_mask {ell} sets more than one bit")
    if any(e and (a or s) for e, a, s in zip(ell, new, shrink)) or any(a and s for a, s in zip(new, shrink)):
        raise UnsupportedLayer(layer, "an entry with more than one of new_axis/shrink_axis/ellipsis is not supported")
    consumed = sum(1 for i in range(n) if not new[i] and not ell[i])
    if consumed > rank:
        raise InvalidLayer(layer, f"{consumed} sliced axes but the input has rank {rank}")
    starts, ends, steps = [0] * rank, [INT64_MAX] * rank, [1] * rank
    squeeze, unsqueeze = [], []
    axis = out = 0
    for i in range(n):
        if ell[i]:
            covered = rank - consumed
            axis, out = axis + covered, out + covered
        elif new[i]:
            unsqueeze.append(out)
            out += 1
        elif shrink[i]:
            b = 0 if bm[i] else begin[i]  # begin_mask: "the real beginning" (OpenVINO: index 0)
            starts[axis], ends[axis] = b, (b + 1 if b != -1 else INT64_MAX)
            squeeze.append(axis)
            axis += 1
        else:
            s = stride[i]
            starts[axis] = (0 if s > 0 else INT64_MAX) if bm[i] else begin[i]
            ends[axis] = (INT64_MAX if s > 0 else INT64_MIN) if em[i] else end[i]
            steps[axis] = s
            axis, out = axis + 1, out + 1
    return (starts, ends, steps), squeeze, unsqueeze


def guard_negative_steps(g, x, starts, ends, axes, steps):
    """For a negative step, an end at or past dim selects nothing (Python, the specs, OpenVINO),
    but onnxruntime's Slice reads an end of INT32_MAX or INT64_MAX as "down to index 0" (measured
    with 1.31: ``[1:2**31-1:-1]`` on 4 elements gives [1, 0]). Such axes become
    start = end = 0 (empty in both). A start before -dim is clamped to 0 like ONNX and OpenVINO do
    (so ``[-9:-9:-1]`` on 4 elements is element 0, where Python gives nothing; the IR declares it).
    Takes and returns int lists (decided at convert time when the dims are known) or int64 names."""
    if all(isinstance(v, list) for v in (starts, ends, axes, steps)):
        if all(t > 0 for t in steps):
            return starts, ends
        starts, ends, runtime = list(starts), list(ends), False
        for j, (s, e, a, t) in enumerate(zip(starts, ends, axes, steps)):
            d = None if x.shape is None else x.shape[a]
            if t > 0:
                continue
            if d is None:
                runtime = runtime or e >= 1  # past the end for some dims
            elif e >= d:
                starts[j] = ends[j] = 0
        if not runtime:
            return starts, ends
    s, e, a, t = (i64(g, v) if isinstance(v, list) else v for v in (starts, ends, axes, steps))
    zero = i64(g, 0, "zero")
    dims = g.Gather(g.Shape(x), a, axis=0)
    empty = g.And(g.Less(t, zero), g.GreaterOrEqual(e, dims))
    return g.Where(empty, zero, s), g.Where(empty, zero, e)


def _emit_slice(ctx, x, starts, ends, steps, axes):
    keep = [j for j, a in enumerate(axes) if not (starts[j] == 0 and ends[j] == INT64_MAX and steps[j] == 1)]
    if not keep:
        return x
    g = ctx.b
    starts, ends, steps, axes = ([values[j] for j in keep] for values in (starts, ends, steps, axes))
    starts, ends = guard_negative_steps(g, x, starts, ends, axes, steps)
    name = lambda v: i64(g, v) if isinstance(v, list) else v  # noqa: E731
    return g.Slice(x, name(starts), name(ends), i64(g, axes), i64(g, steps))


def _check_shrink_range(layer, x, squeeze, starts) -> None:
    for a in squeeze:
        d = None if x.shape is None else x.shape[a]
        if d is not None and not -d <= starts[a] < d:
            raise InvalidLayer(layer, f"shrink_axis index {starts[a]} is out of range for axis {a} of size {d}")


@lowers("StridedSlice", "opset1")
def strided_slice(ctx, layer, inputs):
    """StridedSlice-1 -> Slice [-> Squeeze] [-> Unsqueeze] (known rank; begin/end/stride constant,
    or at run time: Gather, Where, Concat; folded for small constant data)."""
    x, begin_v, end_v = inputs[:3]
    if not all(v.is_const for v in inputs[1:4]):
        return [_run_time_strided_slice(ctx, layer, x, inputs[1:4])]
    begin, end = _const_ints(layer, begin_v, "begin"), _const_ints(layer, end_v, "end")
    stride = _const_ints(layer, inputs[3], "stride") if len(inputs) > 3 else [1] * len(begin)
    if x.rank is None:
        raise UnsupportedLayer(layer, "StridedSlice on an input of dynamic rank is not supported")
    (starts, ends, steps), squeeze, unsqueeze = plan_strided_slice(layer, x.rank, begin, end, stride)
    _check_shrink_range(layer, x, squeeze, starts)
    if x.is_const and int(np.prod(x.shape)) <= FOLD_ELEMENTS:
        v = x.value()[tuple(slice(s, e if e not in (INT64_MAX, INT64_MIN) else None, t)
                            for s, e, t in zip(starts, ends, steps))]
        v = np.squeeze(v, axis=tuple(squeeze)) if squeeze else v
        return [np.asarray(np.expand_dims(v, tuple(unsqueeze)) if unsqueeze else v, order="C")]
    g = ctx.b
    y = _emit_slice(ctx, x, starts, ends, steps, list(range(x.rank)))
    if squeeze:
        y = g.Squeeze(y, i64(g, squeeze, "axes"))
    if unsqueeze:
        y = g.Unsqueeze(y, i64(g, unsqueeze, "axes"))
    return [y]


@lowers("Slice", "opset8")
def slice8(ctx, layer, inputs):
    """Slice-8 -> Slice (start/stop/step/axes cast to int64; axes default 0..len(start)-1)."""
    return [ctx.b.Slice(inputs[0], *_slice_inputs(ctx, layer, inputs[0], inputs[1:]))]


@lowers("SliceScatter", "opset15")
def slice_scatter15(ctx, layer, inputs):
    """SliceScatter-15 (data, updates, start, stop, step[, axes]) -> Range, Reshape (the flat
    position of every element), Slice of the positions as Slice-8 slices data, ScatterElements of
    the flattened updates there, Reshape back. Run-time start/stop/step/axes taken as Slice's."""
    x, upd = inputs[:2]
    if upd.etype != x.etype:
        raise InvalidLayer(layer, f"updates are {upd.etype.name} but data is {x.etype.name}")
    if x.rank is not None and x.rank < 1:
        raise InvalidLayer(layer, "data must have rank >= 1")
    ctx.onnx_type(layer, x.etype)
    g = ctx.b
    shape = g.Shape(x)
    flat = g.Range(i64(g, 0), g.ReduceProd(shape, keepdims=0), i64(g, 1))
    where = g.Slice(g.Reshape(flat, shape), *_slice_inputs(ctx, layer, x, inputs[2:]))
    minus_one = i64(g, [-1])
    out = g.ScatterElements(g.Reshape(x, minus_one), g.Reshape(where, minus_one), g.Reshape(upd, minus_one), axis=0)
    return [g.Reshape(out, shape)]


def _slice_inputs(ctx, layer, x, inputs):
    """Slice-8's (start, stop, step[, axes]) checked, as ONNX Slice's starts, ends, axes, steps."""
    start, stop, step = inputs[:3]
    axes = inputs[3] if len(inputs) > 3 else None
    g = ctx.b
    lengths = {v.shape[0] for v in (start, stop, step, axes)
               if v is not None and v.shape is not None and len(v.shape) == 1}
    if len(lengths) > 1:
        raise InvalidLayer(layer, "start, stop, step (and axes) must have the same length")
    for v, what in ((start, "start"), (stop, "stop"), (step, "step"), (axes, "axes")):
        if v is not None and not v.etype.is_integer:
            raise InvalidLayer(layer, f"{what} must be integers, not {v.etype.name}")
    if step.is_const and np.any(np.asarray(step.value()) == 0):
        raise InvalidLayer(layer, "step must not contain 0")
    if axes is not None and axes.is_const and x.rank is not None:
        values = [int(a) for a in np.asarray(axes.value()).reshape(-1)]
        if any(not -x.rank <= a < x.rank for a in values) or len({a % x.rank for a in values}) != len(values):
            raise InvalidLayer(layer, f"axes {values} must be unique and within rank {x.rank}")
    if axes is None:
        if start.shape is None or start.shape[0] is None:
            raise UnsupportedLayer(layer, "without axes, start needs a static length")
        axes_v = list(range(start.shape[0]))
    else:
        axes_v = _ints_or_name(g, axes)
        if isinstance(axes_v, list) and x.rank is not None:
            axes_v = [a % x.rank for a in axes_v]
    start_v, stop_v, step_v = (_ints_or_name(g, v) for v in (start, stop, step))
    start_v, stop_v = guard_negative_steps(g, x, start_v, stop_v, axes_v, step_v)
    name = lambda v: i64(g, v) if isinstance(v, list) else v  # noqa: E731
    return name(start_v), name(stop_v), name(axes_v), name(step_v)


def _run_time_strided_slice(ctx, layer, x, vectors):
    """StridedSlice with begin/end/stride known at run time: the masks (attributes) decide, per
    entry, which value of which vector goes to which axis (Gather), and the mask extremes follow
    the run-time stride's sign (Where); then as with constants."""
    if x.rank is None:
        raise UnsupportedLayer(layer, "StridedSlice on an input of dynamic rank is not supported")
    for v, what in zip(vectors, ("begin", "end", "stride")):
        if not v.etype.is_integer:
            raise InvalidLayer(layer, f"{what} must be integers, not {v.etype.name}")
    n = vectors[0].shape[0] if vectors[0].shape and len(vectors[0].shape) == 1 else None
    if n is None:
        raise UnsupportedLayer(layer, "begin of unknown length: the sliced axes must be known")
    g = ctx.b
    begin, end = (as_int64(g, v) for v in vectors[:2])
    stride = as_int64(g, vectors[2]) if len(vectors) > 2 else i64(g, [1] * n)
    # the masks' checks and the axes to squeeze / unsqueeze do not depend on the values
    _, squeeze, unsqueeze = plan_strided_slice(layer, x.rank, [0] * n, [0] * n, [1] * n)
    bm, em, new, shrink, ell = (_mask(layer, m, n) for m in
                                ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"))
    pick = lambda vec, i: g.Gather(vec, i64(g, [i]), axis=0)  # noqa: E731
    s_parts, e_parts, t_parts = [], [], []
    axis = 0
    consumed = sum(1 for i in range(n) if not new[i] and not ell[i])
    entry_of = {}
    for i in range(n):
        if ell[i]:
            axis += x.rank - consumed
        elif not new[i]:
            entry_of[axis] = i
            axis += 1
    for a in range(x.rank):
        i = entry_of.get(a)
        if i is None:
            s_parts.append(i64(g, [0])), e_parts.append(i64(g, [INT64_MAX])), t_parts.append(i64(g, [1]))
        elif shrink[i]:
            b = i64(g, [0]) if bm[i] else pick(begin, i)
            s_parts.append(b)
            e_parts.append(g.Where(g.Equal(b, i64(g, [-1])), i64(g, [INT64_MAX]), g.Add(b, i64(g, [1]))))
            t_parts.append(i64(g, [1]))
        else:
            t = pick(stride, i)
            up = g.Greater(t, i64(g, [0]))
            s_parts.append(g.Where(up, i64(g, [0]), i64(g, [INT64_MAX])) if bm[i] else pick(begin, i))
            e_parts.append(g.Where(up, i64(g, [INT64_MAX]), i64(g, [INT64_MIN])) if em[i] else pick(end, i))
            t_parts.append(t)
    vec = lambda parts: g.Concat(*parts, axis=0) if len(parts) > 1 else parts[0]  # noqa: E731
    axes = list(range(x.rank))
    s, e = guard_negative_steps(g, x, vec(s_parts), vec(e_parts), axes, vec(t_parts))
    y = g.Slice(x, s, e, i64(g, axes), vec(t_parts))
    if squeeze:
        y = g.Squeeze(y, i64(g, squeeze, "axes"))
    if unsqueeze:
        y = g.Unsqueeze(y, i64(g, unsqueeze, "axes"))
    return y


def _ints_or_name(g, v):
    """A constant 1-D integer input as a list, else its int64 tensor name."""
    if v.is_const and np.ndim(v.value()) == 1:
        return [int(t) for t in np.asarray(v.value())]
    return as_int64(g, v)
