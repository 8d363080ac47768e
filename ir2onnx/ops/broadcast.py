"""Broadcast-1/-3 and Tile-1.

Broadcast numpy/bidirectional -> Expand (the target shape may be known only at run time);
explicit -> Reshape (data dims moved to their mapped axes), Expand; with the target shape or
axes_mapping known only at run time (or several dynamic data dims) the Reshape's shape is built
in the graph: ScatterElements of the data's Shape into ones at axes_mapping. Tile -> Tile, with the repeats or the data shape padded with leading 1s to one
rank (Unsqueeze). Small constant inputs fold.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common import exact
from ._common.inputs import const_ints, foldable
from ._common.shapes import as_int64, i64


def _numpy_target(layer, shape, target: list[int], bidirectional: bool) -> tuple[int, ...]:
    """The output shape; InvalidLayer where the known dims do not broadcast."""
    if shape is None:
        return tuple(target)
    if not bidirectional and len(shape) > len(target):
        raise InvalidLayer(layer, f"data of rank {len(shape)} cannot broadcast to rank {len(target)} target {target}")
    rank = max(len(shape), len(target))
    padded = (1,) * (rank - len(shape)) + tuple(shape)
    tgt = [1] * (rank - len(target)) + list(target)
    out = []
    for d, t in zip(padded, tgt):
        if d is not None and d != t and d != 1 and (t != 1 or not bidirectional):
            raise InvalidLayer(layer, f"data shape {list(shape)} does not broadcast to {target}"
                                      + (" (bidirectional)" if bidirectional else " (numpy)"))
        out.append(max(t, d or 1) if bidirectional else t)
    return tuple(out)


def _explicit(ctx, layer, data, target: list[int], axes_v):
    if axes_v is None:
        raise InvalidLayer(layer, "mode 'explicit' needs the axes_mapping input")
    axes = const_ints(layer, axes_v, "axes_mapping")
    if data.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    if len(axes) != len(data.shape):
        raise InvalidLayer(layer, f"axes_mapping {axes} must have one entry per data dim ({len(data.shape)})")
    if axes != sorted(axes) or len(set(axes)) != len(axes) or any(not 0 <= a < len(target) for a in axes):
        raise InvalidLayer(layer, f"axes_mapping {axes} must be increasing and within the target rank {len(target)}")
    for a, d in zip(axes, data.shape):
        if d is not None and d not in (1, target[a]):
            raise InvalidLayer(layer, f"data dim {d} cannot broadcast to target dim {target[a]} (axis {a})")
    dims = iter(data.shape)
    placed = [(-1 if (d := next(dims)) is None else d) if i in axes else 1 for i in range(len(target))]
    if placed.count(-1) > 1:
        raise UnsupportedLayer(layer, "more than one dynamic data dim with mode 'explicit' is not supported")
    if foldable(data):
        return [np.broadcast_to(np.asarray(data.value()).reshape(placed), target).copy()]
    g = ctx.b
    return [g.Expand(g.Reshape(data, i64(g, placed, "shape")), i64(g, target, "shape"))]


def _explicit_in_graph(ctx, layer, data, target_v, axes_v):
    """Explicit broadcast whose placement is computed at run time: the data's dims scattered into
    ones (one per target dim) at axes_mapping, Reshape, Expand to the target."""
    if target_v.shape[0] is None:
        raise UnsupportedLayer(layer, "target_shape of unknown length: the output rank must be known")
    if axes_v.is_const and data.rank is not None and int(np.prod(axes_v.shape or (1,))) != data.rank:
        raise InvalidLayer(layer, f"axes_mapping must have one entry per data dim ({data.rank})")
    g = ctx.b
    ones = i64(g, [1] * target_v.shape[0], "ones")
    placed = g.ScatterElements(ones, g.Reshape(as_int64(g, axes_v), i64(g, [-1])), g.Shape(data), axis=0)
    return g.Expand(g.Reshape(data, placed), as_int64(g, target_v))


def _broadcast(ctx, layer, inputs, bidirectional_allowed: bool):
    data, target_v = inputs[0], inputs[1]
    mode = str(layer.attrs.get("mode", "numpy")).lower()
    mode = "explicit" if mode == "none" else mode  # OpenVINO writes Broadcast-1 explicit as "none"
    if mode == "pdpd" or (mode == "bidirectional" and not bidirectional_allowed):
        raise UnsupportedLayer(layer, f"mode '{mode}' is not supported")
    if not (target_v.etype.is_integer and target_v.shape is not None and len(target_v.shape) == 1):
        raise InvalidLayer(layer, "target_shape must be a 1-D integer tensor")
    if mode == "explicit":
        axes_v = inputs[2] if len(inputs) > 2 else None
        dynamic = data.shape is None or sum(d is None for d in data.shape) > 1
        if axes_v is not None and (not target_v.is_const or not axes_v.is_const or dynamic):
            return [_explicit_in_graph(ctx, layer, data, target_v, axes_v)]
        target = const_ints(layer, target_v, "target_shape with mode 'explicit'")
        return _explicit(ctx, layer, data, target, inputs[2] if len(inputs) > 2 else None)
    # (OpenVINO's own Broadcast-1 writes a dummy axes_mapping for numpy mode: it is ignored)
    g = ctx.b
    if not target_v.is_const:
        return [g.Expand(data, as_int64(g, target_v))]
    target = const_ints(layer, target_v, "target_shape")
    if any(t < 0 for t in target):
        raise InvalidLayer(layer, f"target_shape {target} has negative dims")
    out = _numpy_target(layer, data.shape, target, mode == "bidirectional")
    if foldable(data) and int(np.prod(out)) <= 4096:
        return [np.broadcast_to(np.asarray(data.value()), out).copy()]
    if data.shape is not None and tuple(data.shape) == out:
        return [data]
    return [g.Expand(data, i64(g, target, "shape"))]


@lowers("Broadcast", "opset1")
def broadcast_1(ctx, layer, inputs):
    """Broadcast-1 -> Expand (numpy) or Reshape, Expand (explicit axes_mapping)."""
    return _broadcast(ctx, layer, inputs, bidirectional_allowed=False)


@lowers("Broadcast", "opset3")
def broadcast_3(ctx, layer, inputs):
    """Broadcast-3 -> Expand (numpy, bidirectional; the target may be a run-time tensor) or
    Reshape, Expand (explicit axes_mapping with a constant target)."""
    return _broadcast(ctx, layer, inputs, bidirectional_allowed=True)


@lowers("Tile", "opset1")
def tile(ctx, layer, inputs):
    """Tile-1 -> Tile (repeats padded with leading 1s to the data rank; data Unsqueezed when
    repeats are longer; run-time repeats: Concat of 1s, Cast). f16: Reshape, Expand, Reshape
    (onnxruntime's f16 Tile quiets signalling NaNs)."""
    data, reps_v = inputs
    if data.shape is None or reps_v.shape is None or len(reps_v.shape) != 1 or reps_v.shape[0] is None:
        raise UnsupportedLayer(layer, "data of unknown rank or repeats of unknown length are not supported")
    rank, n = len(data.shape), reps_v.shape[0]
    g = ctx.b
    x = data
    if n > rank:
        x = g.Unsqueeze(data, i64(g, list(range(n - rank))))
    if reps_v.is_const:
        reps = const_ints(layer, reps_v, "repeats")
        if any(r < 0 for r in reps):
            raise InvalidLayer(layer, f"repeats {reps} must not be negative")
        reps = [1] * (rank - n) + reps
        if foldable(data) and int(np.prod(reps)) * int(np.prod(data.shape)) <= 4096:
            return [np.tile(np.asarray(data.value()), reps)]
        if all(r == 1 for r in reps) and n <= rank:
            return [data]
        return [_tile(g, x, data, i64(g, reps, "repeats"), max(n, rank))]
    reps = as_int64(g, reps_v)
    if n < rank:
        reps = g.Concat(i64(g, [1] * (rank - n)), reps, axis=0)
    return [_tile(g, x, data, reps, max(n, rank))]


def _tile(g, x, data: Value, reps: str, rank: int) -> str:
    if data.etype.name not in exact.QUIETING:
        return g.Tile(x, reps)
    if not isinstance(x, Value):  # data was Unsqueezed to the repeats' length
        x = Value(g, data.etype, (1,) * (rank - len(data.shape)) + tuple(data.shape), name=x)
    return exact.tile(g, x, reps)
