"""Oracle of Range-4, from the spec: the count max(ceil((stop - start) / step), 0), then
val[i+1] = val[i] + step in the accumulation type (float64; for integer outputs the inputs are
first cast to output_type toward zero and the arithmetic is exact)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _wrap(value: int, dtype: np.dtype) -> int:
    """``value`` cast to the integer type (modulo 2^bits)."""
    bits = dtype.itemsize * 8
    value %= 1 << bits
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


@oracle("Range", "opset4")
def range4(layer, inputs):
    out_type = layer.attrs["output_type"]
    dtype = np.dtype(out_type.numpy)
    start, stop, step = (np.asarray(v).reshape(-1)[0] for v in inputs)
    if dtype.kind in "iu":  # cast to output_type toward zero; exact integer arithmetic
        start, stop, step = (_wrap(int(math.trunc(float(v))) if np.asarray(v).dtype.kind == "f" else int(v), dtype)
                             for v in (start, stop, step))
    else:  # the accumulation type: float64
        start, stop, step = (float(v) for v in (start, stop, step))
    if step == 0:
        raise InvalidLayer(layer, "step is zero")
    count = max(math.ceil((stop - start) / step), 0) if dtype.kind == "f" else max(-((start - stop) // step), 0)
    values, v = [], start
    for _ in range(count):
        values.append(v)
        v = v + step
    return [np.array(values, dtype=np.float64 if dtype.kind == "f" else object).astype(dtype)]
