"""Oracles of Range-4 and Eye-9, from the specs. Range: the count max(ceil((stop - start) / step), 0), then
val[i+1] = val[i] + step in the accumulation type (float64; for integer outputs the inputs are
first cast to output_type toward zero and the arithmetic is exact)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .elements import wrap
from .registry import oracle


@oracle("Range", "opset4")
def range4(layer, inputs):
    out_type = layer.attrs["output_type"]
    dtype = np.dtype(out_type.numpy)
    start, stop, step = (np.asarray(v).reshape(-1)[0] for v in inputs)
    if dtype.kind in "iu":  # cast to output_type toward zero; exact integer arithmetic
        start, stop, step = (wrap(int(math.trunc(float(v))) if np.asarray(v).dtype.kind == "f" else int(v), dtype)
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


# -- Eye-9 -----------------------------------------------------------------------------------
def _one(layer, x, what: str) -> int:
    flat = np.asarray(x).reshape(-1)
    if flat.size != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {flat.size}")
    return int(flat[0])


@oracle("Eye", "opset9")
def eye9(layer, inputs):
    rows, cols = _one(layer, inputs[0], "num_rows"), _one(layer, inputs[1], "num_columns")
    diag = _one(layer, inputs[2], "diagonal_index")
    lead = [int(d) for d in np.asarray(inputs[3]).reshape(-1)] if len(inputs) > 3 else []
    if rows < 0 or cols < 0 or any(d < 0 for d in lead):
        raise InvalidLayer(layer, "num_rows, num_columns and batch_shape must be non-negative")
    out = np.zeros(tuple(lead) + (rows, cols), layer.attrs["output_type"].numpy)
    for b in np.ndindex(*lead):
        for i in range(rows):
            j = i + diag
            if 0 <= j < cols:
                out[b + (i, j)] = 1
    return [out]
