"""Oracles of ShapeOf-1/-3, Concat-1, Squeeze-1/-15 and Unsqueeze-1, from the specs:
output shapes from the definitions, values copied as blocks (Concat: each input into its range
along the axis; Squeeze, Unsqueeze: the same elements in the same row-major order)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..ir.element_types import element_type
from .elements import normalize_axis
from .registry import oracle


def _copy_flat(data: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Same elements in the same row-major order, new shape (Squeeze/Unsqueeze move nothing)."""
    return np.array(data.ravel(order="C")).reshape(out_shape)  # element k stays element k


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


@oracle("Concat", "opset1")
def concat(layer, inputs):
    rank = inputs[0].ndim
    if rank == 0 or any(x.ndim != rank for x in inputs):
        raise InvalidLayer(layer, "inputs must share one rank >= 1")
    axis = normalize_axis(layer, int(layer.attrs["axis"]), rank)
    for x in inputs:
        if x.shape[:axis] + x.shape[axis + 1:] != inputs[0].shape[:axis] + inputs[0].shape[axis + 1:]:
            raise InvalidLayer(layer, "inputs differ outside the concat axis")
    total = sum(x.shape[axis] for x in inputs)
    out_shape = inputs[0].shape[:axis] + (total,) + inputs[0].shape[axis + 1:]
    out = np.empty(out_shape, dtype=inputs[0].dtype)
    offset = 0
    for x in inputs:  # input i fills [offset, offset + its size) along the axis
        out[(slice(None),) * axis + (slice(offset, offset + x.shape[axis]),)] = x
        offset += x.shape[axis]
    return [out]


def _squeeze(layer, inputs):
    data = inputs[0]
    axes = [int(a) for a in np.asarray(inputs[1]).reshape(-1)] if len(inputs) > 1 else []
    if not axes:
        drop = {i for i, d in enumerate(data.shape) if d == 1}
    else:
        drop = {normalize_axis(layer, a, max(data.ndim, 1)) for a in axes} if data.ndim else set()
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
    ones = {normalize_axis(layer, a, out_rank) for a in axes}
    if len(ones) != len(set(axes)):
        raise InvalidLayer(layer, "two axes name the same output dim")
    rest = iter(data.shape)
    return [_copy_flat(data, tuple(1 if i in ones else next(rest) for i in range(out_rank)))]
