"""Oracles of GatherND-8 and ScatterNDUpdate-3 from the specs, by index arithmetic: each index
tuple (last dim of indices, negative values count from the end) addresses one element or slice."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _resolve(layer, tup, dims) -> tuple[int, ...]:
    out = []
    for v, d in zip(tup, dims):
        v = int(v)
        if not -d <= v < d:
            raise InvalidLayer(layer, f"index {v} out of range for a dim of size {d}")
        out.append(v % d)
    return tuple(out)


@oracle("GatherND", "opset8")
def gather_nd8(layer, inputs):
    data, idx = inputs
    bd = int(layer.attrs["batch_dims"])
    depth = idx.shape[-1]
    if bd + depth > data.ndim or data.shape[:bd] != idx.shape[:bd]:
        raise InvalidLayer(layer, "indices do not fit the data")
    tail = data.shape[bd + depth:]
    out = np.empty(idx.shape[:-1] + tail, data.dtype)
    for pos in itertools.product(*[range(d) for d in idx.shape[:-1]]):
        where = _resolve(layer, idx[pos], data.shape[bd:bd + depth])
        for rest in itertools.product(*[range(d) for d in tail]):
            out[pos + rest] = data[pos[:bd] + where + rest]
    return [out]


@oracle("ScatterNDUpdate", "opset4")
def scatter_nd_update3(layer, inputs):
    data, idx, updates = inputs
    depth = idx.shape[-1]
    tail = data.shape[depth:]
    if depth > data.ndim or updates.shape != idx.shape[:-1] + tail:
        raise InvalidLayer(layer, f"updates {updates.shape} do not match indices {idx.shape} and data {data.shape}")
    out = data.copy()
    for pos in itertools.product(*[range(d) for d in idx.shape[:-1]]):
        where = _resolve(layer, idx[pos], data.shape[:depth])
        for rest in itertools.product(*[range(d) for d in tail]):
            out[where + rest] = updates[pos + rest]
    return [out]
