"""Oracles of Pad-1/-12, from the specs: every output position is mapped back to the input
position it copies, or to the pad value (axis by axis, then all positions at once)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .elements import ints
from .registry import oracle


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
    data, begins, ends = inputs[0], ints(inputs[1]), ints(inputs[2])
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
    if data.size == 0 or 0 in out_shape:
        return [np.full(out_shape, value, data.dtype)]
    # per axis: the input index each output index copies (None: the pad value), all positions at once
    sources = [[_source(p - b, d, mode) for p in range(b + d + e)]
               for b, d, e in zip(begins, data.shape, ends)]
    index = np.ix_(*[np.array([0 if s is None else s for s in src], np.int64) for src in sources])
    inside = np.ones(out_shape, bool)
    for axis, src in enumerate(sources):
        inside &= np.array([s is not None for s in src]).reshape([-1 if j == axis else 1 for j in range(len(out_shape))])
    return [np.where(inside, data[index] if data.ndim else data, np.asarray(value, data.dtype)).astype(data.dtype)]


@oracle("Pad", "opset1")
def pad_1(layer, inputs):
    return _pad(layer, inputs, allow_negative=False)


@oracle("Pad", "opset12")
def pad_12(layer, inputs):
    return _pad(layer, inputs, allow_negative=True)
