"""Oracles of Transpose-1 and ShuffleChannels-1 by index arithmetic on whole index arrays. ShuffleChannels: with
C = group * m, output channel ``j = a * group + b`` (a < m, b < group) is input channel ``b * m + a``."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("Transpose", "opset1")
def transpose(layer, inputs):
    """out[i_0, ..., i_{r-1}] = x[j] with j[order[a]] = i_a; an empty order reverses the axes."""
    x, order = inputs
    order = [int(v) for v in np.asarray(order).reshape(-1)] or list(range(x.ndim))[::-1]
    if sorted(order) != list(range(x.ndim)):
        raise InvalidLayer(layer, f"input_order {order} is not a permutation of {x.ndim} axes")
    pos = np.indices(tuple(x.shape[a] for a in order), sparse=True)  # every output index i
    src = [None] * x.ndim
    for axis, p in zip(order, pos):
        src[axis] = p
    return [np.array(x[tuple(src)]) if x.ndim else x.copy()]


@oracle("ShuffleChannels", "opset1")
def shuffle_channels(layer, inputs):
    x = inputs[0]
    axis, group = int(layer.attrs["axis"]), int(layer.attrs["group"])
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    c = x.shape[axis]
    if group < 1 or c % group:
        raise InvalidLayer(layer, f"group {group} must be positive and divide {c}")
    m = c // group
    j = np.arange(c)
    return [np.take(x, (j % group) * m + j // group, axis=axis)]
