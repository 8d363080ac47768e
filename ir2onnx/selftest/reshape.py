"""Selftest cases of Reshape (version 1 unless -N says otherwise). All are compared bit for bit with
the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ir_build, ov_build, param

RESHAPE = ("Reshape", "opset1")


def _reshape(shape, target, special_zero, dtype=np.float32, idx=np.int64):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.reshape(x, const(ops, target, idx), special_zero), "y")], [x]
    return make


def _reshape_runtime_shape(special_zero):
    def make(ops):
        x = param(ops, [2, 3, 4], np.float32)
        s = param(ops, [2], np.int64, "shape")
        return [(ops.reshape(x, s, special_zero), "y")], [x, s]
    return make


def _flatten_keep_batch(ops):
    """OpenVINO's usual dynamic flatten: ShapeOf -> Gather -> Concat -> Reshape."""
    x = param(ops, [None, 3, 4], np.float32)
    batch = ops.gather(ops.shape_of(x), const(ops, [0]), const(ops, 0))
    target = ops.concat([batch, const(ops, [-1])], 0)
    return [(ops.reshape(x, target, False), "y")], [x]


def _bad_reshape(shape, target, special_zero):
    """An IR the spec calls invalid (OpenVINO refuses to build it, so IRWriter writes it)."""
    def make(w):
        x = w.parameter(list(shape), "f32", "x")
        s = w.const(np.array(target, np.int64))
        out = [max(int(d), 1) for d in target]
        y = w.layer("Reshape", "opset1", [x, s], {"special_zero": special_zero}, [("f32", out)], out_names=["y"])[0]
        w.result(y)
    return make


CASES = [
    # Reshape-1: the spec's five worked examples, then what real IR adds
    Case("reshape/spec-example-1", RESHAPE, ov_build(_reshape([2, 5, 5, 0], [0, 4], False)),
         expect={"y": (0, 4)}, source="Reshape.md worked example 1"),
    Case("reshape/spec-example-2", RESHAPE, ov_build(_reshape([2, 5, 5, 24], [0, -1, 4], True)),
         expect={"y": (2, 150, 4)}, source="Reshape.md worked example 2"),
    Case("reshape/spec-example-3", RESHAPE, ov_build(_reshape([2, 2, 3], [0, 0, 1, -1], True)),
         expect={"y": (2, 2, 1, 3)}, source="Reshape.md worked example 3"),
    Case("reshape/spec-example-4", RESHAPE, ov_build(_reshape([3, 1, 1], [-1, 0], True)),
         expect={"y": (3, 1)}, source="Reshape.md worked example 4"),
    Case("reshape/spec-example-5", RESHAPE, ov_build(_reshape([3, 1, 1], [0, -1], True)),
         expect={"y": (3, 1)}, source="Reshape.md worked example 5"),
    Case("reshape/i32-shape-boolean", RESHAPE, ov_build(_reshape([2, 6], [3, 2, 2], False, np.bool_, np.int32)),
         expect={"y": lambda f: f["x"].reshape(3, 2, 2)}),
    Case("reshape/to-scalar", RESHAPE, ov_build(_reshape([1, 1], [], False)),
         expect={"y": lambda f: f["x"].reshape(())}),
    Case("reshape/dynamic-copy", RESHAPE, ov_build(_reshape([None, 4, 6], [0, -1], True)),
         shapes={"x": (3, 4, 6)}, expect={"y": (3, 24)}),
    Case("reshape/runtime-shape", RESHAPE, ov_build(_reshape_runtime_shape(False)),
         inputs={"shape": np.array([4, 6], np.int64)}, expect={"y": lambda f: f["x"].reshape(4, 6)}),
    Case("reshape/runtime-shape-special-zero", RESHAPE, ov_build(_reshape_runtime_shape(True)),
         inputs={"shape": np.array([0, -1], np.int64)}, expect={"y": lambda f: f["x"].reshape(2, 12)}),
    Case("reshape/flatten-keep-batch", RESHAPE, ov_build(_flatten_keep_batch), shapes={"x": (5, 3, 4)},
         expect={"y": lambda f: f["x"].reshape(5, 12)}),
    Case("reshape/error-two-minus-one", RESHAPE, ir_build(_bad_reshape([2, 5, 4], [-1, -1], True)),
         invalid=True, openvino=False, source="Reshape.md errors: more than one -1"),
    Case("reshape/error-below-minus-one", RESHAPE, ir_build(_bad_reshape([2, 5, 4], [-2, 20], True)),
         invalid=True, openvino=False, source="Reshape.md errors: a value < -1"),
    Case("reshape/error-count", RESHAPE, ir_build(_bad_reshape([2, 5, 4], [10, -1, 3], True)),
         invalid=True, openvino=False, source="Reshape.md errors: counts cannot match"),
    Case("reshape/error-zero-beyond-rank", RESHAPE, ir_build(_bad_reshape([6], [6, 0], True)),
         invalid=True, openvino=False, source="Reshape.md errors: special_zero 0 beyond the rank"),
    Case("reshape/error-literal-zero", RESHAPE, ir_build(_bad_reshape([2, 3], [0, 6], False)),
         invalid=True, openvino=False, source="Reshape.md errors: literal 0, non-empty input"),
]
