"""Oracles of Convert-1 and ConvertLike-1: the spec's conversion of every element
(:func:`convert_array`)."""
from __future__ import annotations

import numpy as np

from .registry import oracle


def convert_array(x: np.ndarray, dtype) -> np.ndarray:
    """Convert-1 semantics for in-range values: floats to integers truncate toward zero,
    integers wrap modulo 2^bits, anything non-zero becomes ``True``; floats round to nearest even.

    Out-of-range float -> integer results are implementation-defined in OpenVINO (its CPU
    plugin saturates some pairs and wraps others) and in onnxruntime; they are not compared.
    """
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if dtype.kind in "iu" and x.dtype.kind not in "iub":  # a float type (ml_dtypes ones are kind V)
        x = np.trunc(x.astype(np.float64))
        with np.errstate(invalid="ignore"):
            return x.astype(np.int64).astype(dtype)
    if x.dtype.kind in "iub" and dtype.kind in "iu":
        return x.astype(np.int64).astype(dtype) if x.dtype != np.uint64 else x.astype(dtype)
    with np.errstate(over="ignore"):  # a float too large for a narrower float type becomes inf
        return x.astype(dtype)


@oracle("Convert", "opset1")
def convert(layer, inputs):
    return [convert_array(inputs[0], layer.attrs["destination_type"].numpy)]


@oracle("ConvertLike", "opset1")
def convert_like(layer, inputs):
    data, like = inputs
    return [convert_array(data, like.dtype)]
