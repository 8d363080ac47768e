"""Selftest cases of Gather-1/-7/-8, GatherElements-6, GatherND-8 and NonZero-3. All are compared bit
for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, iota, ov_build, param

GATHER8, GATHER7, GATHER1 = ("Gather", "opset8"), ("Gather", "opset7"), ("Gather", "opset1")


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


def _gather_nd(ops):
    import openvino.opset8 as o8

    x = param(ops, [2, 2], np.int32)
    return [(o8.gather_nd(x, const(ops, [[0, 0], [1, 0]])), "y")], [x]


def _gather_nd_batch(ops):
    import openvino.opset8 as o8

    x = param(ops, [2, 3, 4])
    return [(o8.gather_nd(x, const(ops, [[[1], [2]], [[0], [1]]]), 1), "y")], [x]


def _gather_elements(ops):
    import openvino.opset6 as o6

    x, i = param(ops, [None, 3]), param(ops, [None, 2], np.int32, "i")
    return [(o6.gather_elements(x, i, 1), "y")], [x, i]


def _nonzero(dtype, otype):
    def make(ops):
        import openvino.opset3 as o3

        x = param(ops, [3, 4], dtype)
        return [(o3.non_zero(x, otype), "y")], [x]
    return make


def _sparse(dtype):
    return lambda rng: {"x": (rng.integers(-3, 4, (3, 4)) * (rng.random((3, 4)) < 0.4)).astype(dtype)}


CASES = [
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
    Case("gathernd8/spec-example", ("GatherND", "opset8"), ov_build(_gather_nd),
         inputs={"x": np.array([[1, 2], [3, 4]], np.int32)}, expect={"y": np.array([1, 3], np.int32)},
         source="GatherND-8: data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]]"),
    Case("gathernd8/batch-dims-1", ("GatherND", "opset8"), ov_build(_gather_nd_batch),
         expect={"y": lambda f: np.stack([f["x"][0, [1, 2]], f["x"][1, [0, 1]]])}),
    Case("gather_elements/negative-indices-dynamic", ("GatherElements", "opset6"), ov_build(_gather_elements),
         inputs={"x": iota((2, 3)), "i": np.array([[0, -1], [2, -3]], np.int32)}, shapes={"x": (2, 3), "i": (2, 2)},
         expect={"y": np.array([[1, 3], [6, 4]], np.float32)}),
    Case("nonzero/f32-i64", ("NonZero", "opset3"), ov_build(_nonzero(np.float32, "i64")), inputs=_sparse(np.float32),
         expect={"y": lambda f: np.array(np.nonzero(f["x"]), np.int64)}),
    Case("nonzero/i8-i32", ("NonZero", "opset3"), ov_build(_nonzero(np.int8, "i32")), inputs=_sparse(np.int8),
         expect={"y": lambda f: np.array(np.nonzero(f["x"]), np.int32).reshape(2, -1)}),
]
