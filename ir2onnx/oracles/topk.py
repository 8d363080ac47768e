"""Oracle of TopK-1, -3 and -11 from the spec: per slice along the axis, order the positions by value
(descending for max, ascending for min; ties by the smaller index, the stable order), keep k,
then order them by index for sort=index. TopK-1/-3 leave the choice and order of equal values
open; the stable order is one valid choice, and it is the lowering's."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("TopK", "opset1")
@oracle("TopK", "opset3")
@oracle("TopK", "opset11")
def topk11(layer, inputs):
    x, k = inputs
    if x.ndim == 0 or np.asarray(k).size != 1:
        raise InvalidLayer(layer, "TopK needs data of rank >= 1 and a scalar k")
    axis = int(layer.attrs["axis"])
    if not -x.ndim <= axis < x.ndim:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    k = int(np.asarray(k).reshape(-1)[0])
    if not 0 <= k <= x.shape[axis]:
        raise InvalidLayer(layer, f"k={k} exceeds the axis size {x.shape[axis]}")
    largest = layer.attrs["mode"] == "max"
    index_type = getattr(layer.attrs["index_element_type"], "name", layer.attrs["index_element_type"])
    out_shape = list(x.shape)
    out_shape[axis] = k
    values = np.empty(out_shape, x.dtype)
    indices = np.empty(out_shape, np.int32 if index_type == "i32" else np.int64)
    others = [range(d) if i != axis else [None] for i, d in enumerate(x.shape)]
    for pos in itertools.product(*others):
        at = [tuple(j if p is None else p for p in pos) for j in range(x.shape[axis])]
        # Python numbers: numpy's -x wraps unsigned integers around
        order = sorted(range(len(at)), key=lambda j: ((-x[at[j]].item() if largest else x[at[j]].item()), j))[:k]
        if layer.attrs["sort"] == "index":
            order = sorted(order)
        for slot, j in enumerate(order):
            dst = tuple(slot if p is None else p for p in pos)
            values[dst] = x[at[j]]
            indices[dst] = j
    return [values, indices]
