"""Oracle of Unique-10 from the spec: walk the elements (no axis: the flattened data) or the slices
along ``axis`` in order, keep each value not seen before (equality by value: -0.0 equals 0.0),
recording its first index; the inverse index of every element/slice is the position of its value
among the kept ones; counts count them. sorted=true orders the kept values ascending (slices
lexicographically, element by element) and renumbers the inverse indices."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _etype(layer, attr):
    name = getattr(layer.attrs[attr], "name", layer.attrs[attr])
    return np.int32 if name == "i32" else np.int64


@oracle("Unique", "opset10")
def unique10(layer, inputs):
    x = np.asarray(inputs[0])
    if len(inputs) > 1:
        axis = int(np.asarray(inputs[1]).reshape(-1)[0])
        if not -x.ndim <= axis < x.ndim:
            raise InvalidLayer(layer, f"axis {axis} out of range for rank {x.ndim}")
        axis %= x.ndim
        items = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
    else:
        axis = None
        items = list(x.reshape(-1))
    keys = [tuple(np.asarray(v).reshape(-1).tolist()) for v in items]
    kept, first, inverse = [], [], []
    for i, key in enumerate(keys):
        for slot, other in enumerate(kept):
            if other == key:
                inverse.append(slot)
                break
        else:
            inverse.append(len(kept))
            kept.append(key)
            first.append(i)
    order = list(range(len(kept)))
    if layer.attrs["sorted"]:
        order = sorted(order, key=lambda s: kept[s])
    rank_of = {slot: pos for pos, slot in enumerate(order)}
    inverse = [rank_of[s] for s in inverse]
    first = [first[s] for s in order]
    counts = [sum(1 for v in inverse if v == pos) for pos in range(len(order))]
    picked = [items[first_i] for first_i in first]
    if axis is None:
        values = np.array(picked, dtype=x.dtype).reshape(-1)
    else:
        shape = list(x.shape)
        shape[axis] = len(picked)
        values = np.stack(picked, axis=axis) if picked else np.zeros(shape, x.dtype)
    itype, ctype = _etype(layer, "index_element_type"), _etype(layer, "count_element_type")
    return [values.astype(x.dtype), np.array(first, itype), np.array(inverse, itype), np.array(counts, ctype)]
