"""Oracles of Bucketize-3 and SearchSorted-15, value by value: a binary search over the sorted
boundaries (the innermost row of the sorted sequence) for the first index whose element is >= the
value (Bucketize with_right_bound=true, SearchSorted right_mode=false) or > it (the other two); a
NaN value is greater than every element (index n), as torch.bucketize and torch.searchsorted,
whose layers these are. Mixed types compare as numbers (an integer against floats as that float)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _search(row, value, first_greater: bool) -> int:
    """Binary search: the first index i with row[i] > value (or >= value); NaN values are last."""
    if isinstance(value, float) and np.isnan(value):
        return len(row)
    lo, hi = 0, len(row)
    while lo < hi:
        mid = (lo + hi) // 2
        stop = row[mid] > value if first_greater else row[mid] >= value
        if stop:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _as_number(a: np.ndarray, other: np.ndarray):
    """Python numbers to compare (floats when either side is floating, as C++ promotes)."""
    floating = a.dtype.kind == "f" or other.dtype.kind == "f"
    if floating and a.dtype.kind != "f":
        to = np.float64 if other.dtype == np.float64 else np.float32
        return [float(v) for v in a.astype(to).reshape(-1)]
    return [float(v) if floating else int(v) for v in a.reshape(-1)]


def _out_type(layer):
    out = layer.attrs["output_type"]
    if getattr(out, "name", out) not in ("i32", "i64"):
        raise InvalidLayer(layer, f"output_type must be i32 or i64, got {getattr(out, 'name', out)}")
    return np.dtype(out.numpy)


@oracle("Bucketize", "opset3")
def bucketize3(layer, inputs):
    data, buckets = inputs
    if buckets.ndim != 1:
        raise InvalidLayer(layer, f"buckets must be 1-D, got {buckets.shape}")
    row, values = _as_number(buckets, data), _as_number(data, buckets)
    first_greater = not layer.attrs["with_right_bound"]
    out = [_search(row, v, first_greater) for v in values]
    return [np.asarray(out, _out_type(layer)).reshape(data.shape)]


@oracle("SearchSorted", "opset15")
def search_sorted15(layer, inputs):
    seq, values = inputs
    if seq.ndim != 1 and (seq.ndim != values.ndim or seq.shape[:-1] != values.shape[:-1]):
        raise InvalidLayer(layer, f"sorted_sequence {seq.shape} does not fit values {values.shape}")
    out = np.zeros(values.shape, _out_type(layer))
    for pos in itertools.product(*[range(d) for d in values.shape]):
        row = seq if seq.ndim == 1 else seq[pos[:-1]]
        out[pos] = _search(_as_number(row, values), _as_number(np.asarray(values[pos]), seq)[0], layer.attrs["right_mode"])
    return [out]
