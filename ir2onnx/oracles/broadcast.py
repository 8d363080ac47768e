"""Oracles of Broadcast-1/-3 and Tile-1, from the specs: every output position is mapped back to
the input position it copies (per axis, as open index arrays: all positions at once)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .elements import ints
from .registry import oracle


def _broadcast(layer, inputs, bidirectional_ok: bool):
    data, target = inputs[0], ints(inputs[1])
    mode = str(layer.attrs.get("mode", "numpy")).lower()
    if mode in ("explicit", "none"):  # Broadcast-1 explicit is written "none"
        axes = ints(inputs[2])
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
        # bidirectional: numpy's rule, a 1 on either side takes the other's dim (0 included)
        out_shape = tuple(t if mode == "numpy" or i not in mapped or t != 1 else data.shape[mapped[i]]
                          for i, t in enumerate(tgt))
    else:
        raise UnsupportedLayer(layer, f"mode '{mode}'")
    for o, i in mapped.items():
        if data.shape[i] not in (1, out_shape[o]):
            raise InvalidLayer(layer, f"data dim {data.shape[i]} does not broadcast to {out_shape[o]}")
    if data.ndim == 0 or 0 in out_shape:
        return [np.full(out_shape, data.reshape(-1)[0] if data.size else 0, data.dtype)]
    n = len(out_shape)
    src = [np.zeros((1,) * n, np.int64) for _ in range(data.ndim)]  # open index arrays
    for o, i in mapped.items():
        if data.shape[i] != 1:
            src[i] = np.arange(out_shape[o]).reshape([-1 if j == o else 1 for j in range(n)])
    return [np.array(np.broadcast_to(data[tuple(src)], out_shape))]


@oracle("Broadcast", "opset1")
def broadcast_1(layer, inputs):
    return _broadcast(layer, inputs, bidirectional_ok=False)


@oracle("Broadcast", "opset3")
def broadcast_3(layer, inputs):
    return _broadcast(layer, inputs, bidirectional_ok=True)


@oracle("Tile", "opset1")
def tile(layer, inputs):
    data, repeats = inputs[0], ints(inputs[1])
    if any(r < 0 for r in repeats):
        raise InvalidLayer(layer, "negative repeats")
    rank = max(data.ndim, len(repeats))
    shape = (1,) * (rank - data.ndim) + data.shape
    reps = [1] * (rank - len(repeats)) + repeats
    src_data = data.reshape(shape)
    out_shape = tuple(d * r for d, r in zip(shape, reps))
    if 0 in out_shape or not out_shape:
        return [np.array(src_data).reshape(out_shape) if not out_shape else np.empty(out_shape, data.dtype)]
    return [np.array(src_data[np.ix_(*[np.arange(n) % d for n, d in zip(out_shape, shape)])])]
