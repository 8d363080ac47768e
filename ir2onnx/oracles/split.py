"""Oracles of Split-1 and VariadicSplit-1, from the specs, element by element: every output position
is mapped back to the input position it copies."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import ints, positions
from .registry import oracle


def _axis(layer, axis, rank: int) -> int:
    values = ints(axis)
    if len(values) != 1 or not -rank <= values[0] < rank:
        raise InvalidLayer(layer, f"axis {values} out of range for rank {rank}")
    return values[0] % rank


def _parts(data: np.ndarray, axis: int, sizes: list[int]) -> list[np.ndarray]:
    outs, offset = [], 0
    for n in sizes:
        shape = data.shape[:axis] + (n,) + data.shape[axis + 1:]
        out = np.empty(shape, data.dtype)
        for pos in positions(shape):
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
    sizes = ints(lengths)
    rest = data.shape[axis] - sum(n for n in sizes if n != -1)
    if sizes.count(-1) > 1 or any(n < -1 for n in sizes) or (-1 not in sizes and rest != 0) or rest < 0:
        raise InvalidLayer(layer, f"split_lengths {sizes} do not fit dim {data.shape[axis]}")
    return _parts(data, axis, [rest if n == -1 else n for n in sizes])
