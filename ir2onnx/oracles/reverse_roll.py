"""Oracles of Reverse-1, Roll-7 and ReverseSequence-1 from the specs, element by element: each
output index maps to one input index (``d - 1 - i`` on reversed axes, ``(i - shift) mod d`` on
rolled axes, ``len - 1 - i`` for ``i < len`` on the sequence axis, ``len`` of the element's batch
row, 0 acting as 1)."""
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


@oracle("ReverseSequence", "opset1")
def reverse_sequence1(layer, inputs):
    data, lengths = inputs
    rank = data.ndim
    batch, seq = (int(layer.attrs[k]) for k in ("batch_axis", "seq_axis"))
    if not (-rank <= batch < rank and -rank <= seq < rank) or batch % rank == seq % rank:
        raise InvalidLayer(layer, f"batch_axis {batch} / seq_axis {seq} invalid for rank {rank}")
    batch, seq = batch % rank, seq % rank
    lens = [int(v) for v in np.asarray(lengths).reshape(-1)]
    if len(lens) != data.shape[batch] or any(not 0 <= n <= data.shape[seq] for n in lens):
        raise InvalidLayer(layer, f"seq_lengths {lens} do not fit {data.shape[batch]} rows of {data.shape[seq]}")

    def source(pos):
        n = max(lens[pos[batch]], 1)
        i = pos[seq]
        return pos[:seq] + ((n - 1 - i if i < n else i),) + pos[seq + 1:]
    return [_map(data, source)]
