"""Oracles of Reverse-1 and Roll-7 from the specs, element by element: each output index maps to
one input index (``d - 1 - i`` on reversed axes, ``(i - shift) mod d`` on rolled axes)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _map(data, source):
    out = np.empty_like(data)
    for pos in itertools.product(*[range(d) for d in data.shape]):
        out[pos] = data[source(pos)]
    return out


@oracle("Reverse", "opset1")
def reverse1(layer, inputs):
    data, axis = inputs
    rank = data.ndim
    values = np.asarray(axis).reshape(-1)
    if layer.attrs["mode"] == "mask":
        if values.size != rank:
            raise InvalidLayer(layer, f"mask needs {rank} values, got {values.size}")
        flipped = {i for i in range(rank) if values[i]}
    else:
        if any(not -rank <= int(a) < rank for a in values):
            raise InvalidLayer(layer, "an axis is out of range")
        flipped = {int(a) % rank for a in values}
    return [_map(data, lambda pos: tuple(data.shape[i] - 1 - p if i in flipped else p
                                         for i, p in enumerate(pos)))]


@oracle("Roll", "opset7")
def roll7(layer, inputs):
    data, shift, axes = inputs
    rank = data.ndim
    axes = np.asarray(axes).reshape(-1).astype(np.int64)
    shift = np.asarray(shift).astype(np.int64)
    if shift.ndim == 0:
        shift = np.full(axes.shape, int(shift))
    if shift.ndim > 1 or shift.size != axes.size:
        raise InvalidLayer(layer, f"shift {shift.shape} does not match axes {axes.shape}")
    total = [0] * rank
    for a, s in zip(axes, shift.reshape(-1)):
        if not -rank <= a < rank:
            raise InvalidLayer(layer, f"axis {a} is out of range for rank {rank}")
        total[int(a) % rank] += int(s)
    return [_map(data, lambda pos: tuple((p - total[i]) % data.shape[i] for i, p in enumerate(pos)))]
