"""Oracle of CumSum-3 from the spec: out[..., j, ...] is the sum of x[..., i, ...] over i <= j
(i < j exclusive; i >= j / i > j reversed). Integers wrap; floats summed in float64."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("CumSum", "opset3")
def cumsum(layer, inputs):
    x = inputs[0]
    axis = int(np.asarray(inputs[1]).reshape(-1)[0]) if len(inputs) > 1 else 0
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    exclusive, reverse = bool(layer.attrs["exclusive"]), bool(layer.attrs["reverse"])
    n = x.shape[axis]
    integer = x.dtype.kind in "iu"
    bits = x.dtype.itemsize * 8
    out = np.empty_like(x)
    for pos in itertools.product(*[range(d) for d in x.shape]):
        j = pos[axis]
        picked = [i for i in range(n) if (i > j if reverse else i < j) or (i == j and not exclusive)]
        items = [x[pos[:axis] + (i,) + pos[axis + 1:]] for i in picked]
        if integer:
            total = sum(int(v) for v in items) % (1 << bits)
            out[pos] = total - (1 << bits) if x.dtype.kind == "i" and total >= 1 << (bits - 1) else total
        else:
            out[pos] = sum(float(v) for v in items)
    return [out]
