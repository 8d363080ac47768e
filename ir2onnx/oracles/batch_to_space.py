"""Oracles of BatchToSpace-2 and SpaceToBatch-2, from the spec's element-wise definition
(../shared/specs/BatchToSpace.md): every output element's source index is computed from its own
index; no reshape or transpose of the data."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _vectors(layer, x: np.ndarray, vectors: list[np.ndarray], names: tuple[str, str, str]) -> list[list[int]]:
    """The block and crops/pads as int lists, checked like the spec says."""
    if x.ndim < 2:
        raise InvalidLayer(layer, f"data must have rank >= 2, got rank {x.ndim}")
    out = []
    for v, name in zip(vectors, names):
        v = np.asarray(v)
        if v.dtype.kind not in "iu":
            raise InvalidLayer(layer, f"{name} must be an integer tensor, got {v.dtype}")
        if v.shape != (x.ndim,):
            raise InvalidLayer(layer, f"inputs of unequal length: data has rank {x.ndim}, {name} has shape {v.shape}")
        out.append([int(e) for e in v])
    block, lo, hi = out
    if min(block) < 1 or block[0] != 1:
        raise InvalidLayer(layer, f"block_shape {block}: values must be >= 1 and block_shape[0] must be 1")
    if min(lo + hi) < 0 or lo[0] != 0 or hi[0] != 0:
        raise InvalidLayer(layer, f"{names[1]} {lo} / {names[2]} {hi}: values must be >= 0 and 0 on the batch axis")
    return out


@oracle("BatchToSpace", "opset2")
def batch_to_space(layer, inputs):
    x = np.asarray(inputs[0])
    block, cb, ce = _vectors(layer, x, inputs[1:4], ("block_shape", "crops_begin", "crops_end"))
    k, batch = x.ndim - 1, x.shape[0]
    nblocks = int(np.prod(block, dtype=np.int64))
    if batch % nblocks:
        raise InvalidLayer(layer, f"batch {batch} is not divisible by prod(block_shape) = {nblocks}")
    bp = batch // nblocks
    out_shape = [bp]
    for i in range(1, k + 1):
        size = x.shape[i] * block[i] - cb[i] - ce[i]
        if size < 0:
            raise InvalidLayer(layer, f"crops on axis {i} exceed block_shape[{i}] * {x.shape[i]}")
        out_shape.append(size)
    idx = np.indices(out_shape, dtype=np.int64)  # idx[0] = n, idx[i] = y_i
    b = np.zeros(out_shape, np.int64)
    src = []
    for i in range(1, k + 1):
        z = idx[i] + cb[i]
        b = b * block[i] + z % block[i]  # block offsets: most significant first, in axis order
        src.append(z // block[i])
    b = b * bp + idx[0]
    return [x[(b, *src)] if x.size else np.zeros(out_shape, x.dtype)]


@oracle("SpaceToBatch", "opset2")
def space_to_batch(layer, inputs):
    x = np.asarray(inputs[0])
    block, pb, pe = _vectors(layer, x, inputs[1:4], ("block_shape", "pads_begin", "pads_end"))
    k, batch = x.ndim - 1, x.shape[0]
    out_shape = [batch * int(np.prod(block, dtype=np.int64))]
    for i in range(1, k + 1):
        padded = x.shape[i] + pb[i] + pe[i]
        if padded % block[i]:
            raise InvalidLayer(layer, f"padded axis {i} ({padded}) is not divisible by block_shape[{i}] = {block[i]}")
        out_shape.append(padded // block[i])
    idx = np.indices(out_shape, dtype=np.int64)
    n = idx[0] % batch
    rest = idx[0] // batch  # the block offsets, last axis fastest
    offsets = []
    for i in range(k, 0, -1):
        offsets.insert(0, rest % block[i])
        rest = rest // block[i]
    inside = np.ones(out_shape, bool)
    src = []
    for i in range(1, k + 1):
        d = idx[i] * block[i] + offsets[i - 1] - pb[i]  # index into the unpadded axis
        inside &= (d >= 0) & (d < x.shape[i])
        src.append(np.clip(d, 0, max(x.shape[i] - 1, 0)))
    out = np.zeros(out_shape, x.dtype)
    if x.size:
        out[inside] = x[(n, *src)][inside]
    return [out]
