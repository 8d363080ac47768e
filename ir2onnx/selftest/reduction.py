"""Selftest cases of ReduceProd, ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1-4 and
ReduceL2-4, ReduceLogicalAnd and ReduceLogicalOr (version 1 unless -N says otherwise). Exact cases (data movement, integer and boolean
results) are compared bit for bit, the others within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _reduce(fn, shape, axes, keep_dims, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(getattr(ops, fn)(x, const(ops, axes), keep_dims), "y")], [x]
    return make


CASES = [
    Case("reducesum/axis1", ("ReduceSum", "opset1"), ov_build(_reduce("reduce_sum", [2, 3, 4], [1], False)),
         exact=False, expect={"y": lambda f: f["x"].sum(1)}),
    Case("reducesum/keep-dims-negative-i32", ("ReduceSum", "opset1"),
         ov_build(_reduce("reduce_sum", [2, 3, 4], [-1, 0], True, np.int32)),
         expect={"y": lambda f: f["x"].sum((0, 2), keepdims=True)}),
    Case("reduceprod/axes", ("ReduceProd", "opset1"), ov_build(_reduce("reduce_prod", [2, 3, 2], [0, 2], False)),
         exact=False, expect={"y": lambda f: f["x"].prod((0, 2))}),
    Case("reducemean/keep-dims", ("ReduceMean", "opset1"), ov_build(_reduce("reduce_mean", [2, 3, 4], [0, -1], True)),
         exact=False, expect={"y": lambda f: f["x"].mean(axis=(0, 2), keepdims=True)}),
    Case("reducemax/axis1", ("ReduceMax", "opset1"), ov_build(_reduce("reduce_max", [2, 3, 4], [1], False)),
         expect={"y": lambda f: f["x"].max(axis=1)}),
    Case("reducemin/axes-0-2", ("ReduceMin", "opset1"), ov_build(_reduce("reduce_min", [2, 3, 4], [0, 2], False)),
         expect={"y": lambda f: f["x"].min(axis=(0, 2))}),
    Case("reducel2/keep-dims", ("ReduceL2", "opset4"), ov_build(_reduce("reduce_l2", [2, 3, 4], [1, 2], True)),
         exact=False, expect={"y": lambda f: np.sqrt((f["x"].astype(np.float64) ** 2).sum((1, 2), keepdims=True))}),
    Case("reducel1/axis0", ("ReduceL1", "opset4"), ov_build(_reduce("reduce_l1", [2, 3, 4], [0], False)), exact=False,
         expect={"y": lambda f: np.abs(f["x"]).sum(0)}),
    Case("reducelogicaland/axis1", ("ReduceLogicalAnd", "opset1"),
         ov_build(_reduce("reduce_logical_and", [2, 3, 4], [1], False, bool)),
         expect={"y": lambda f: f["x"].all(1)}),
    Case("reducelogicaland/empty-slice-is-true", ("ReduceLogicalAnd", "opset1"),
         ov_build(_reduce("reduce_logical_and", [2, 0, 3], [1], True, bool)),
         expect={"y": np.ones((2, 1, 3), bool)}, openvino=False,
         source="ReduceLogicalAnd-1: the and of no values is true (OpenVINO cannot compile a zero-sized input)"),
    Case("reducelogicalor/keep-dims-negative", ("ReduceLogicalOr", "opset1"),
         ov_build(_reduce("reduce_logical_or", [2, 3, 4], [-1, 0], True, bool)),
         expect={"y": lambda f: f["x"].any((0, 2), keepdims=True)}),
]
