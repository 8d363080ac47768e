"""Reverse-1 -> Slice(step -1), Roll-7 -> Slice, Slice, Concat per axis and ReverseSequence-1 ->
ReverseSequence (Transposes around it when the batch and sequence axes are not 0 and 1). All only
move data (Slice, Concat and ReverseSequence keep every bit, f16 signalling NaNs included). Axes
known only at run time: Reverse slices every axis with a step of -1 or 1 chosen in the graph
(Where); Roll rolls every axis by the sum of the shifts whose axis names it (Equal, Where,
ReduceSum), 0 for the others."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import known_rank
from ._common.shapes import INT64_MAX, as_int64, dims_of, i64

INT64_MIN = np.iinfo(np.int64).min
FOLD_ELEMENTS = 4096


def _small_const(x) -> bool:
    return x.is_const and x.shape is not None and all(d is not None for d in x.shape) \
        and int(np.prod(x.shape)) <= FOLD_ELEMENTS


@lowers("Reverse", "opset1")
def reverse1(ctx, layer, inputs):
    """Reverse-1 (data, axis; mode index|mask) -> Slice(starts -1, ends INT64_MIN, steps -1) over
    the reversed axes (negative and repeated indices allowed, as OpenVINO does)."""
    data, axes_v = inputs
    known_rank(layer, data)
    ctx.onnx_type(layer, data.etype)
    if not axes_v.is_const:
        return [_reverse_run_time(ctx, layer, data, axes_v)]
    values = np.asarray(axes_v.value())
    if values.ndim > 1:
        raise InvalidLayer(layer, f"axis must be a 1-D tensor, got shape {values.shape}")
    values = values.reshape(-1)
    if layer.attrs["mode"] == "mask":
        if values.size != data.rank:
            raise InvalidLayer(layer, f"mask mode needs {data.rank} values (the data rank), got {values.size}")
        axes = [i for i, flag in enumerate(values) if flag]
    else:
        if values.dtype.kind not in "iu":
            raise InvalidLayer(layer, f"index mode needs integer axes, got {values.dtype}")
        if values.size > data.rank:
            raise InvalidLayer(layer, f"{values.size} axes given for rank {data.rank}")
        bad = [int(a) for a in values if not -data.rank <= int(a) < data.rank]
        if bad:
            raise InvalidLayer(layer, f"axes {bad} are out of range for rank {data.rank}")
        axes = sorted({int(a) % data.rank for a in values})
    if not axes:
        return [data]
    if _small_const(data):
        return [np.asarray(np.flip(data.value(), tuple(axes)), order="C")]
    g, n = ctx.b, len(axes)
    return [g.Slice(data, i64(g, [-1] * n), i64(g, [INT64_MIN] * n), i64(g, axes), i64(g, [-1] * n))]


def _reverse_run_time(ctx, layer, data, axes_v):
    """One Slice over every axis: step -1 (from -1 to INT64_MIN) where the axis is reversed."""
    g, r = ctx.b, data.rank
    if r == 0:
        return data
    if layer.attrs["mode"] == "mask":
        flags = g.Cast(g.Reshape(axes_v, i64(g, [r])), to=9)
    else:
        flags = _named(g, _normalized(g, axes_v, r), r)
    where = lambda yes, no: g.Where(flags, i64(g, [yes] * r), i64(g, [no] * r))  # noqa: E731
    return g.Slice(data, where(-1, 0), where(INT64_MIN, INT64_MAX), i64(g, list(range(r))), where(-1, 1))


def _normalized(g, axes_v, rank: int) -> str:
    """Run-time axes as an int64 vector, negative ones plus ``rank``."""
    axes = g.Reshape(as_int64(g, axes_v), i64(g, [-1]))
    return g.Where(g.Less(axes, i64(g, 0)), g.Add(axes, i64(g, rank)), axes)


def _named(g, axes: str, rank: int) -> str:
    """bool [rank]: whether each axis is among ``axes``."""
    hits = g.Equal(i64(g, np.arange(rank).reshape(rank, 1)), g.Unsqueeze(axes, i64(g, [0])))
    return g.Greater(g.ReduceSum(g.Cast(hits, to=7), i64(g, [1]), keepdims=0), i64(g, 0))


def _shift_terms(ctx, layer, shift_v, n_axes):
    """One entry per listed axis: an int (constant shift) or an int64 [1] tensor name."""
    if shift_v.rank is None or shift_v.rank > 1:
        raise InvalidLayer(layer, "shift must be a scalar or a 1-D tensor")
    if shift_v.rank == 1 and shift_v.shape[0] is not None and shift_v.shape[0] != n_axes:
        raise InvalidLayer(layer, f"shift has {shift_v.shape[0]} values but axes has {n_axes}")
    if shift_v.is_const:
        flat = np.asarray(shift_v.value()).astype(np.int64).reshape(-1)
        return [int(flat[0])] * n_axes if shift_v.rank == 0 else [int(s) for s in flat]
    g = ctx.b
    s = g.Reshape(as_int64(g, shift_v), i64(g, [-1]))
    if shift_v.rank == 0:
        return [s] * n_axes
    if shift_v.shape[0] is None:
        raise UnsupportedLayer(layer, "a run-time shift of unknown length is not supported")
    return [g.Slice(s, i64(g, [j]), i64(g, [j + 1])) for j in range(n_axes)]


@lowers("Roll", "opset7")
def roll7(ctx, layer, inputs):
    """Roll-7 (data, shift, axes) -> per axis with a non-zero shift s (repeated axes add up,
    s taken modulo the dim d): Concat(Slice(x, d - s, d), Slice(x, 0, d - s)). Constant shifts
    on static dims are folded into the Slice bounds; otherwise Mod/Sub compute them at run time."""
    data, shift_v, axes_v = inputs
    known_rank(layer, data, 1)
    ctx.onnx_type(layer, data.etype)
    for v, what in ((shift_v, "shift"), (axes_v, "axes")):
        if v.etype.numpy is None or np.dtype(v.etype.numpy).kind not in "iu":
            raise InvalidLayer(layer, f"{what} must be i32 or i64, got {v.etype.name}")
    if not axes_v.is_const:
        return [_roll_run_time_axes(ctx, layer, data, shift_v, axes_v)]
    axes_raw = np.asarray(axes_v.value()).astype(np.int64).reshape(-1)
    if np.asarray(axes_v.value()).ndim > 1:
        raise InvalidLayer(layer, "axes must be a scalar or a 1-D tensor")
    r = data.rank
    bad = [int(a) for a in axes_raw if not -r <= a < r]
    if bad:
        raise InvalidLayer(layer, f"axes {bad} are out of range for rank {r}")
    terms = _shift_terms(ctx, layer, shift_v, len(axes_raw))
    g = ctx.b
    per_axis: dict[int, object] = {}
    for a, s in zip(axes_raw, terms):
        a = int(a) % r
        old = per_axis.get(a, 0)
        if isinstance(old, int) and isinstance(s, int):
            per_axis[a] = old + s
        else:
            per_axis[a] = g.Add(i64(g, [old]) if isinstance(old, int) else old, i64(g, [s]) if isinstance(s, int) else s)
    if _small_const(data) and all(isinstance(s, int) for s in per_axis.values()):
        out = data.value()
        for a, s in per_axis.items():
            out = np.roll(out, s, axis=a)
        return [np.asarray(out, order="C")]
    return [_roll_axes(ctx, data, per_axis)]


def _roll_run_time_axes(ctx, layer, data, shift_v, axes_v):
    """Every axis rolled by the sum of the shifts listed for it (a scalar shift applies to each
    listed axis)."""
    g, r = ctx.b, data.rank
    axes = _normalized(g, axes_v, r)
    shifts = g.Expand(g.Reshape(as_int64(g, shift_v), i64(g, [-1])), g.Shape(axes))
    hits = g.Equal(i64(g, np.arange(r).reshape(r, 1)), g.Unsqueeze(axes, i64(g, [0])))
    per = g.ReduceSum(g.Where(hits, g.Unsqueeze(shifts, i64(g, [0])), i64(g, 0)), i64(g, [1]), keepdims=0)
    return _roll_axes(ctx, data, {a: g.Slice(per, i64(g, [a]), i64(g, [a + 1])) for a in range(r)})


def _roll_axes(ctx, data, per_axis: dict):
    """Roll ``data`` along each axis by its shift (an int, or an int64 [1] tensor name)."""
    g = ctx.b
    x = data
    for a, s in sorted(per_axis.items()):
        d = data.shape[a]
        if isinstance(s, int) and d is not None:
            s %= max(d, 1)
            if s == 0:
                continue
            split = i64(g, [d - s])
        else:
            dim = dims_of(g, data, a, a + 1)
            shift = i64(g, [s]) if isinstance(s, int) else s
            split = g.Sub(dim, g.Mod(shift, g.Max(dim, i64(g, [1]))))  # Mod: sign of the divisor
        axis = i64(g, [a])
        tail = g.Slice(x, split, i64(g, [INT64_MAX]), axis)
        head = g.Slice(x, i64(g, [0]), split, axis)
        x = ctx.b.Concat(tail, head, axis=a)
    return x


@lowers("ReverseSequence", "opset1")
def reverse_sequence1(ctx, layer, inputs):
    """ReverseSequence-1 (data, seq_lengths) -> Cast (lengths to i64), ReverseSequence; other batch
    and sequence axes than 0 and 1 -> Transpose (them to 0, 1), ReverseSequence, Transpose back.
    A length of 0 reverses nothing, as in OpenVINO's reference; a length above the sequence dim is
    an error at run time in both."""
    data, lengths = inputs
    rank = known_rank(layer, data, 2)
    ctx.onnx_type(layer, data.etype)
    if data.etype.name == "bf16" or data.etype.bits < 8 or data.etype.name.startswith("f8"):
        raise UnsupportedLayer(layer, f"ReverseSequence on {data.etype.name} is not supported (ONNX's "
                                      "ReverseSequence does not take it)")
    if lengths.rank not in (None, 1):
        raise InvalidLayer(layer, f"seq_lengths must be 1-D, got rank {lengths.rank}")
    if lengths.etype.name not in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64"):
        raise UnsupportedLayer(layer, f"seq_lengths of type {lengths.etype.name} are not supported")
    batch, seq = (int(layer.attrs[k]) for k in ("batch_axis", "seq_axis"))
    for v, what in ((batch, "batch_axis"), (seq, "seq_axis")):
        if not -rank <= v < rank:
            raise InvalidLayer(layer, f"{what} {v} is out of range for rank {rank}")
    batch, seq = batch % rank, seq % rank
    if batch == seq:
        raise InvalidLayer(layer, f"batch_axis and seq_axis are the same axis ({batch})")
    g = ctx.b
    lens = lengths.name if lengths.etype.name == "i64" else g.Cast(lengths, to=7)  # INT64, truncating floats
    if {batch, seq} == {0, 1}:
        return [g.ReverseSequence(data, lens, batch_axis=batch, time_axis=seq)]
    perm = [batch, seq] + [a for a in range(rank) if a not in (batch, seq)]
    back = [perm.index(a) for a in range(rank)]
    moved = g.ReverseSequence(g.Transpose(data, perm=perm), lens, batch_axis=0, time_axis=1)
    return [g.Transpose(moved, perm=back)]
