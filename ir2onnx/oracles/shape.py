"""Oracles of ShapeOf-1/-3, Gather-1/-7/-8, Concat-1, Squeeze-1 and Unsqueeze-1, from the specs:
output shapes from the definitions, values copied one index at a time."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from ..ir.element_types import element_type
from .registry import oracle


def _norm(layer, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _copy_flat(data: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Same elements in the same row-major order, new shape (Squeeze/Unsqueeze move nothing)."""
    out = np.empty(out_shape, dtype=data.dtype)
    src = list(itertools.product(*[range(d) for d in data.shape]))
    dst = list(itertools.product(*[range(d) for d in out_shape]))
    for s, d in zip(src, dst):
        out[d] = data[s]
    return out


@oracle("ShapeOf", "opset1")
def shape_of_1(layer, inputs):
    return [np.array(inputs[0].shape, dtype=np.int64)]


@oracle("ShapeOf", "opset3")
def shape_of_3(layer, inputs):
    etype = layer.attrs.get("output_type", "i64")
    etype = element_type(etype) if isinstance(etype, str) else etype
    if etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, "output_type must be i32 or i64")
    return [np.array(inputs[0].shape, dtype=etype.numpy)]


def _gather(layer, inputs, negative: bool):
    data, indices, axis = inputs
    axis = _norm(layer, int(np.asarray(axis).reshape(-1)[0]), data.ndim)
    b = int(layer.attrs.get("batch_dims", 0))
    b = b + indices.ndim if b < 0 else b
    if not 0 <= b <= min(axis, indices.ndim) or data.shape[:b] != indices.shape[:b]:
        raise InvalidLayer(layer, "batch_dims out of range or batch dims differ")
    size = data.shape[axis]
    out_shape = data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:]
    out = np.zeros(out_shape, dtype=data.dtype)
    free = indices.ndim - b
    for pos in itertools.product(*[range(d) for d in out_shape]):
        outer = pos[:axis]
        which = pos[axis:axis + free]
        inner = pos[axis + free:]
        i = int(indices[outer[:b] + which])
        if negative and -size <= i < 0:
            i += size
        if 0 <= i < size:  # out of range: zeros (Gather-7/-8 spec; OpenVINO does the same for -1)
            out[pos] = data[outer + (i,) + inner]
    return [out]


@oracle("Gather", "opset1")
def gather_1(layer, inputs):
    return _gather(layer, inputs, negative=False)


@oracle("Gather", "opset7")
def gather_7(layer, inputs):
    return _gather(layer, inputs, negative=False)


@oracle("Gather", "opset8")
def gather_8(layer, inputs):
    return _gather(layer, inputs, negative=True)


@oracle("Concat", "opset1")
def concat(layer, inputs):
    rank = inputs[0].ndim
    if rank == 0 or any(x.ndim != rank for x in inputs):
        raise InvalidLayer(layer, "inputs must share one rank >= 1")
    axis = _norm(layer, int(layer.attrs["axis"]), rank)
    for x in inputs:
        if x.shape[:axis] + x.shape[axis + 1:] != inputs[0].shape[:axis] + inputs[0].shape[axis + 1:]:
            raise InvalidLayer(layer, "inputs differ outside the concat axis")
    total = sum(x.shape[axis] for x in inputs)
    out_shape = inputs[0].shape[:axis] + (total,) + inputs[0].shape[axis + 1:]
    out = np.empty(out_shape, dtype=inputs[0].dtype)
    offset = 0
    for x in inputs:
        for pos in itertools.product(*[range(d) for d in x.shape]):
            out[pos[:axis] + (pos[axis] + offset,) + pos[axis + 1:]] = x[pos]
        offset += x.shape[axis]
    return [out]


def _squeeze(layer, inputs):
    data = inputs[0]
    axes = [int(a) for a in np.asarray(inputs[1]).reshape(-1)] if len(inputs) > 1 else []
    if not axes:
        drop = {i for i, d in enumerate(data.shape) if d == 1}
    else:
        drop = {_norm(layer, a, max(data.ndim, 1)) for a in axes} if data.ndim else set()
        drop = {a for a in drop if data.shape[a] == 1}  # a dim that is not 1 is ignored (spec)
    return [_copy_flat(data, tuple(d for i, d in enumerate(data.shape) if i not in drop))]


@oracle("Squeeze", "opset1")
def squeeze_1(layer, inputs):
    return _squeeze(layer, inputs)


@oracle("Squeeze", "opset15")
def squeeze_15(layer, inputs):
    return _squeeze(layer, inputs)


@oracle("Unsqueeze", "opset1")
def unsqueeze(layer, inputs):
    data, axes = inputs
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    out_rank = data.ndim + len(set(axes))
    ones = {_norm(layer, a, out_rank) for a in axes}
    if len(ones) != len(set(axes)):
        raise InvalidLayer(layer, "two axes name the same output dim")
    rest = iter(data.shape)
    return [_copy_flat(data, tuple(1 if i in ones else next(rest) for i in range(out_rank)))]
