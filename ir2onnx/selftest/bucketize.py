"""Selftest cases of Bucketize-3 (the spec's example, both bounds) and SearchSorted-15 (left and
right on a 2-D sequence)."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _bucketize(right_bound, out_type="i64"):
    def make(ops):
        x = param(ops, [2, 2])
        return [(ops.bucketize(x, const(ops, [0, 5, 10], np.float32), out_type, right_bound), "y")], [x]
    return make


def _search_sorted(right):
    def make(ops):
        s, v = param(ops, [2, 4], name="s"), param(ops, [2, 3], name="v")
        return [(ops.search_sorted(s, v, right), "y")], [s, v]
    return make


_X = {"x": np.array([[3, 50], [10, -1]], np.float32)}
_SEQ = {"s": np.array([[1, 3, 5, 7], [2, 4, 6, 8]], np.float32), "v": np.array([[3, 6, 9], [1, 4, 8]], np.float32)}

CASES = [
    Case("bucketize/spec-example-right-bound", ("Bucketize", "opset3"), ov_build(_bucketize(True)), inputs=_X,
         expect={"y": np.array([[1, 3], [2, 0]], np.int64)},
         source="Bucketize-3: [[3, 50], [10, -1]] in [0, 5, 10] with the right bound -> [[1, 3], [2, 0]]"),
    Case("bucketize/spec-example-left-bound-i32", ("Bucketize", "opset3"), ov_build(_bucketize(False, "i32")), inputs=_X,
         expect={"y": np.array([[1, 3], [3, 0]], np.int32)}, source="Bucketize-3 example with the left bound"),
    Case("searchsorted/left", ("SearchSorted", "opset15"), ov_build(_search_sorted(False)), inputs=_SEQ,
         expect={"y": np.array([[1, 3, 4], [0, 1, 3]], np.int64)}, source="SearchSorted-15, right_mode=false"),
    Case("searchsorted/right", ("SearchSorted", "opset15"), ov_build(_search_sorted(True)), inputs=_SEQ,
         expect={"y": np.array([[2, 3, 4], [0, 2, 4]], np.int64)}, source="SearchSorted-15, right_mode=true"),
]
