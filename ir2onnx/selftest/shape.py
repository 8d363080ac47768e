"""Selftest cases of ShapeOf-1/-3, Concat, Squeeze-1/-15 and Unsqueeze (version 1 unless -N says
otherwise). All are compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

SHAPEOF3, SHAPEOF1 = ("ShapeOf", "opset3"), ("ShapeOf", "opset1")
CONCAT = ("Concat", "opset1")
SQUEEZE1, SQUEEZE15, UNSQUEEZE = ("Squeeze", "opset1"), ("Squeeze", "opset15"), ("Unsqueeze", "opset1")


def _shape_of(shape, out_type="i64", opset=3, dtype=np.float32):
    def make(ops):
        import openvino.opset1 as ops1

        x = param(ops, shape, dtype)
        y = ops.shape_of(x, out_type) if opset == 3 else ops1.shape_of(x)
        return [(y, "y")], [x]
    return make


def _concat(shapes, axis, dtype=np.float32):
    def make(ops):
        xs = [param(ops, s, dtype, f"x{i}") for i, s in enumerate(shapes)]
        return [(ops.concat(xs, axis), "y")], xs
    return make


def _squeeze(shape, axes, opset=1):
    def make(ops):
        import openvino.opset1 as ops1

        x = param(ops, shape, np.float32)
        if opset == 15:
            y = ops.squeeze(x, const(ops, axes)) if axes is not None else ops.squeeze(x)
        else:
            y = ops1.squeeze(x, const(ops, axes))
        return [(y, "y")], [x]
    return make


def _unsqueeze(shape, axes, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.unsqueeze(x, const(ops, axes)), "y")], [x]
    return make


CASES = [
    # ShapeOf
    Case("shapeof/i64", SHAPEOF3, ov_build(_shape_of([2, 3, 4])), expect={"y": np.array([2, 3, 4], np.int64)}),
    Case("shapeof/i32-dynamic", SHAPEOF3, ov_build(_shape_of([None, 3], "i32")), shapes={"x": (5, 3)},
         expect={"y": np.array([5, 3], np.int32)}),
    Case("shapeof/scalar", SHAPEOF3, ov_build(_shape_of([])), expect={"y": np.zeros(0, np.int64)}),
    Case("shapeof/opset1", SHAPEOF1, ov_build(_shape_of([4, 1], opset=1)), expect={"y": np.array([4, 1], np.int64)}),
    # Concat
    Case("concat/axis1", CONCAT, ov_build(_concat([[2, 1, 3], [2, 2, 3], [2, 0, 3]], 1)),
         expect={"y": lambda f: np.concatenate([f["x0"], f["x1"], f["x2"]], 1)}),
    Case("concat/negative-axis-i64", CONCAT, ov_build(_concat([[2], [3]], -1, np.int64)),
         expect={"y": lambda f: np.concatenate([f["x0"], f["x1"]])}),
    # Squeeze / Unsqueeze
    Case("squeeze/axes", SQUEEZE1, ov_build(_squeeze([1, 3, 1, 2], [0, 2])), expect={"y": (3, 2)}),
    Case("squeeze/negative-axis", SQUEEZE1, ov_build(_squeeze([3, 1], [-1])), expect={"y": (3,)}),
    Case("squeeze/opset15", SQUEEZE15, ov_build(_squeeze([1, 3, 1], None, 15)), expect={"y": (3,)}),
    Case("unsqueeze/axes", UNSQUEEZE, ov_build(_unsqueeze([3, 2], [0, 3])), expect={"y": (1, 3, 2, 1)}),
    Case("unsqueeze/negative-axis-i32", UNSQUEEZE, ov_build(_unsqueeze([3], [-1], np.int32)), expect={"y": (3, 1)}),
    Case("unsqueeze/scalar", UNSQUEEZE, ov_build(_unsqueeze([], [0])), expect={"y": (1,)}),
]
