"""Oracles of OneHot-1/-16 from the spec: output[..., k, ...] (k on the new ``axis``) is on_value
where k equals the index at that position and off_value elsewhere; an index outside [0, depth)
matches nothing (OneHot-1, OneHot-16 ``ignore_negative``), except that OneHot-16 ``normalize``
first maps an index in [-depth, -1] to index + depth."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import normalize_axis, positions
from .registry import oracle


def _one_hot(layer, inputs, normalize: bool):
    indices, depth, on, off = inputs
    depth = int(np.asarray(depth).reshape(-1)[0])
    if depth < 0:
        raise InvalidLayer(layer, f"depth must be >= 0, got {depth}")
    on, off = np.asarray(on).reshape(-1)[0], np.asarray(off).reshape(-1)[0]
    axis = normalize_axis(layer, int(layer.attrs["axis"]), indices.ndim + 1)
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    out = np.empty(shape, np.asarray(on).dtype)
    for pos in positions(shape):
        index = int(indices[pos[:axis] + pos[axis + 1:]])
        if normalize and -depth <= index < 0:
            index += depth
        out[pos] = on if index == pos[axis] else off
    return [out]


@oracle("OneHot", "opset1")
def one_hot1(layer, inputs):
    return _one_hot(layer, inputs, False)


@oracle("OneHot", "opset16")
def one_hot16(layer, inputs):
    return _one_hot(layer, inputs, layer.attrs.get("negative_indices_mode", "ignore_negative") == "normalize")
