"""Selftest cases of the shape family: Reshape-1 (specs/Reshape.md) and the layers that compute
shapes in real IR: ShapeOf, Gather, Concat, Squeeze, Unsqueeze. All must be bit-exact."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ir_build, ov_build, param

RESHAPE = ("Reshape", "opset1")
SHAPEOF3, SHAPEOF1 = ("ShapeOf", "opset3"), ("ShapeOf", "opset1")
GATHER8, GATHER7, GATHER1 = ("Gather", "opset8"), ("Gather", "opset7"), ("Gather", "opset1")
CONCAT = ("Concat", "opset1")
SQUEEZE1, SQUEEZE15, UNSQUEEZE = ("Squeeze", "opset1"), ("Squeeze", "opset15"), ("Unsqueeze", "opset1")


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


def _shape_of(shape, out_type="i64", opset=3, dtype=np.float32):
    def make(ops):
        import openvino.opset1 as ops1

        x = param(ops, shape, dtype)
        y = ops.shape_of(x, out_type) if opset == 3 else ops1.shape_of(x)
        return [(y, "y")], [x]
    return make


def _gather(shape, indices, axis, batch_dims=0, opset=8, dtype=np.float32):
    def make(ops):
        import openvino.opset1 as ops1
        import openvino.opset7 as ops7

        x = param(ops, shape, dtype)
        i, a = const(ops, indices, np.int32), const(ops, axis)
        y = {8: lambda: ops.gather(x, i, a, batch_dims), 7: lambda: ops7.gather(x, i, a, batch_dims),
             1: lambda: ops1.gather(x, i, a)}[opset]()
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
    # ShapeOf
    Case("shapeof/i64", SHAPEOF3, ov_build(_shape_of([2, 3, 4])), expect={"y": np.array([2, 3, 4], np.int64)}),
    Case("shapeof/i32-dynamic", SHAPEOF3, ov_build(_shape_of([None, 3], "i32")), shapes={"x": (5, 3)},
         expect={"y": np.array([5, 3], np.int32)}),
    Case("shapeof/scalar", SHAPEOF3, ov_build(_shape_of([])), expect={"y": np.zeros(0, np.int64)}),
    Case("shapeof/opset1", SHAPEOF1, ov_build(_shape_of([4, 1], opset=1)), expect={"y": np.array([4, 1], np.int64)}),
    # Gather
    Case("gather/axis0", GATHER8, ov_build(_gather([3, 4], [2, 0], 0)), expect={"y": lambda f: f["x"][[2, 0]]}),
    Case("gather/negative-indices", GATHER8, ov_build(_gather([3, 4], [-1, 1], 1)),
         expect={"y": lambda f: f["x"][:, [3, 1]]}),
    Case("gather/scalar-index", GATHER8, ov_build(_gather([3, 4, 2], 1, -2, dtype=np.int64)),
         expect={"y": lambda f: f["x"][:, 1]}),
    Case("gather/batch-dims", GATHER8, ov_build(_gather([2, 3, 4], [[0, 2], [1, 1]], 2, batch_dims=1)),
         expect={"y": lambda f: np.stack([f["x"][0][:, [0, 2]], f["x"][1][:, [1, 1]]])}),
    Case("gather/opset7", GATHER7, ov_build(_gather([3, 4], [[1], [2]], 1, opset=7)),
         expect={"y": lambda f: f["x"][:, [[1], [2]]]}),
    Case("gather/opset1", GATHER1, ov_build(_gather([4, 2], [3, 3, 0], 0, opset=1)),
         expect={"y": lambda f: f["x"][[3, 3, 0]]}),
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
