"""Oracles of Split-1, VariadicSplit-1, Broadcast-1/-3, Tile-1 and Pad-1/-12, from the specs,
element by element: every output position is mapped back to the input position it
copies (or to the pad value)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _positions(shape):
    return itertools.product(*[range(d) for d in shape])


def _ints(a) -> list[int]:
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _axis(layer, axis, rank: int) -> int:
    values = _ints(axis)
    if len(values) != 1 or not -rank <= values[0] < rank:
        raise InvalidLayer(layer, f"axis {values} out of range for rank {rank}")
    return values[0] % rank


def _parts(data: np.ndarray, axis: int, sizes: list[int]) -> list[np.ndarray]:
    outs, offset = [], 0
    for n in sizes:
        shape = data.shape[:axis] + (n,) + data.shape[axis + 1:]
        out = np.empty(shape, data.dtype)
        for pos in _positions(shape):
            src = list(pos)
            src[axis] += offset
            out[pos] = data[tuple(src)]
        outs.append(out)
        offset += n
    return outs


@oracle("Split", "opset1")
def split(layer, inputs):
    data, axis = inputs
    axis = _axis(layer, axis, data.ndim)
    n = int(layer.attrs["num_splits"])
    if n < 1 or data.shape[axis] % n:
        raise InvalidLayer(layer, f"dim {data.shape[axis]} is not divisible by num_splits={n}")
    return _parts(data, axis, [data.shape[axis] // n] * n)


@oracle("VariadicSplit", "opset1")
def variadic_split(layer, inputs):
    data, axis, lengths = inputs
    axis = _axis(layer, axis, data.ndim)
    sizes = _ints(lengths)
    rest = data.shape[axis] - sum(n for n in sizes if n != -1)
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes) or (-1 not in sizes and rest != 0) or rest < 0:
        raise InvalidLayer(layer, f"split_lengths {sizes} do not fit dim {data.shape[axis]}")
    return _parts(data, axis, [rest if n == -1 else n for n in sizes])


def _broadcast(layer, inputs, bidirectional_ok: bool):
    data, target = inputs[0], _ints(inputs[1])
    mode = str(layer.attrs.get("mode", "numpy")).lower()
    if mode in ("explicit", "none"):  # Broadcast-1 explicit is written "none"
        axes = _ints(inputs[2])
        if len(axes) != data.ndim or axes != sorted(set(axes)):
            raise InvalidLayer(layer, f"axes_mapping {axes} does not fit data rank {data.ndim}")
        mapped = dict(zip(axes, range(data.ndim)))
        out_shape = tuple(target)
    elif mode == "numpy" or (mode == "bidirectional" and bidirectional_ok):
        rank = max(data.ndim, len(target))
        if mode == "numpy" and data.ndim > len(target):
            raise InvalidLayer(layer, "data rank exceeds the target rank")
        lead = rank - data.ndim
        mapped = {lead + i: i for i in range(data.ndim)}
        tgt = [1] * (rank - len(target)) + target
        out_shape = tuple(t if mode == "numpy" or i not in mapped else max(t, data.shape[mapped[i]])
                          for i, t in enumerate(tgt))
    else:
        raise UnsupportedLayer(layer, f"mode '{mode}'")
    for o, i in mapped.items():
        if data.shape[i] not in (1, out_shape[o]):
            raise InvalidLayer(layer, f"data dim {data.shape[i]} does not broadcast to {out_shape[o]}")
    out = np.empty(out_shape, data.dtype)
    for pos in _positions(out_shape):
        src = [0] * data.ndim
        for o, i in mapped.items():
            src[i] = 0 if data.shape[i] == 1 else pos[o]
        out[pos] = data[tuple(src)]
    return [out]


@oracle("Broadcast", "opset1")
def broadcast_1(layer, inputs):
    return _broadcast(layer, inputs, bidirectional_ok=False)


@oracle("Broadcast", "opset3")
def broadcast_3(layer, inputs):
    return _broadcast(layer, inputs, bidirectional_ok=True)


@oracle("Tile", "opset1")
def tile(layer, inputs):
    data, repeats = inputs[0], _ints(inputs[1])
    if any(r < 0 for r in repeats):
        raise InvalidLayer(layer, "negative repeats")
    rank = max(data.ndim, len(repeats))
    shape = (1,) * (rank - data.ndim) + data.shape
    reps = [1] * (rank - len(repeats)) + repeats
    src_data = data.reshape(shape)
    out_shape = tuple(d * r for d, r in zip(shape, reps))
    out = np.empty(out_shape, data.dtype)
    for pos in _positions(out_shape):
        out[pos] = src_data[tuple(p % d for p, d in zip(pos, shape))]
    return [out]


def _source(p: int, d: int, mode: str) -> int | None:
    """The input index that output index ``p`` (relative to the original start) copies."""
    if 0 <= p < d:
        return p
    if mode == "constant":
        return None
    if mode == "edge":
        return min(max(p, 0), d - 1)
    if mode == "reflect":
        return -p if p < 0 else 2 * (d - 1) - p
    return -p - 1 if p < 0 else 2 * d - 1 - p  # symmetric


def _pad(layer, inputs, allow_negative: bool):
    data, begins, ends = inputs[0], _ints(inputs[1]), _ints(inputs[2])
    mode = str(layer.attrs["pad_mode"]).lower()
    value = inputs[3].reshape(-1)[0] if len(inputs) > 3 else np.zeros((), data.dtype)
    if len(begins) != data.ndim or len(ends) != data.ndim:
        raise InvalidLayer(layer, "pads need one value per data dim")
    if not allow_negative and min(begins + ends, default=0) < 0:
        raise InvalidLayer(layer, "Pad-1 pads must not be negative")
    limit = {"reflect": 1, "symmetric": 0}.get(mode, -math.inf)
    for b, e, d in zip(begins, ends, data.shape):
        if max(b, e) > d - limit or b + d + e < 0:
            raise InvalidLayer(layer, f"pads {b}, {e} do not fit dim {d} in mode {mode}")
    out_shape = tuple(b + d + e for b, d, e in zip(begins, data.shape, ends))
    out = np.empty(out_shape, data.dtype)
    for pos in _positions(out_shape):
        src = [_source(p - b, d, mode) for p, b, d in zip(pos, begins, data.shape)]
        out[pos] = value if any(s is None for s in src) else data[tuple(src)]
    return [out]


@oracle("Pad", "opset1")
def pad_1(layer, inputs):
    return _pad(layer, inputs, allow_negative=False)


@oracle("Pad", "opset12")
def pad_12(layer, inputs):
    return _pad(layer, inputs, allow_negative=True)
