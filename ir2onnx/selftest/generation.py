"""Selftest cases of Range-4 and Eye-9. Exact cases (data movement, integer and boolean results) are
compared bit for bit, the others within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _range(ops):
    start, stop, step = (param(ops, [], np.int32, n) for n in ("start", "stop", "step"))
    return [(ops.range(start, stop, step, "i32"), "y")], [start, stop, step]


def _range_f32(ops):
    start, stop, step = (param(ops, [], np.float32, n) for n in ("start", "stop", "step"))
    return [(ops.range(start, stop, step, "f32"), "y")], [start, stop, step]


def _eye(rows, cols, diag, otype, batch=None):
    def make(ops):
        n = param(ops, [], np.int64, "n")
        args = [n, const(ops, [cols]), const(ops, diag), otype] + ([const(ops, batch)] if batch else [])
        return [(ops.eye(*args), "y")], [n]
    return make


CASES = [
    Case("range4/spec-example-2", ("Range", "opset4"), ov_build(_range),
         inputs={"start": np.array(23, np.int32), "stop": np.array(2, np.int32), "step": np.array(-3, np.int32)},
         expect={"y": np.array([23, 20, 17, 14, 11, 8, 5], np.int32)}, source="Range-4: worked example 2"),
    Case("range4/spec-example-3", ("Range", "opset4"), ov_build(_range_f32), exact=False,
         inputs={"start": np.array(1, np.float32), "stop": np.array(2.5, np.float32), "step": np.array(0.5, np.float32)},
         expect={"y": np.array([1, 1.5, 2], np.float32)}, source="Range-4: worked example 3"),
    Case("eye/spec-example-1", ("Eye", "opset9"), ov_build(_eye(3, 4, 2, "i32")), inputs={"n": np.array(3, np.int64)},
         expect={"y": np.array([[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], np.int32)}, source="Eye-9 example 1"),
    Case("eye/spec-example-2", ("Eye", "opset9"), ov_build(_eye(3, 4, -1, "i32")), inputs={"n": np.array(3, np.int64)},
         expect={"y": np.array([[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]], np.int32)}, source="Eye-9 example 2"),
    Case("eye/batched-f16", ("Eye", "opset9"), ov_build(_eye(2, 2, 5, "f16", [1, 2])), inputs={"n": np.array(2, np.int64)},
         expect={"y": np.zeros((1, 2, 2, 2), np.float16)}, source="Eye-9 example 3"),
]
