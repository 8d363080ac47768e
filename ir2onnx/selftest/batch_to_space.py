"""Selftest cases of BatchToSpace-2 and SpaceToBatch-2. All are compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

B2S, S2B = ("BatchToSpace", "opset2"), ("SpaceToBatch", "opset2")


def _b2s(shape, block, begin, end, dtype=np.float32, idx=np.int64):
    def make(ops):
        x = param(ops, shape, dtype)
        y = ops.batch_to_space(x, const(ops, block, idx), const(ops, begin, idx), const(ops, end, idx))
        return [(y, "y")], [x]
    return make


def _s2b(shape, block, begin, end, dtype=np.float32, idx=np.int64):
    def make(ops):
        x = param(ops, shape, dtype)
        y = ops.space_to_batch(x, const(ops, block, idx), const(ops, begin, idx), const(ops, end, idx))
        return [(y, "y")], [x]
    return make


def _b2s_runtime_blocks(ops):
    """block_shape and crops fed at run time: the ONNX graph must compute its shapes."""
    x = param(ops, [8, 2, 3], np.float32)
    block, begin, end = (param(ops, [3], np.int64, n) for n in ("block", "begin", "end"))
    return [(ops.batch_to_space(x, block, begin, end), "y")], [x, block, begin, end]


def _b2s_roundtrip(ops):
    x = param(ops, [2, 4, 6, 3], np.float32)
    block, pb, pe = const(ops, [1, 2, 3, 1]), const(ops, [0, 1, 2, 0]), const(ops, [0, 1, 1, 0])
    s = ops.space_to_batch(x, block, pb, pe)
    return [(ops.batch_to_space(s, block, pb, pe), "y")], [x]


CASES = [
    # BatchToSpace-2: the spec's worked examples first
    Case("b2s/spec-example-1", B2S, ov_build(_b2s([10, 2], [1, 5], [0, 2], [0, 0])),
         expect={"y": (2, 8)}, source="BatchToSpace.md worked example 1"),
    Case("b2s/spec-example-2", B2S, ov_build(_b2s([48, 3, 3, 1, 3], [1, 2, 4, 3, 1], [0, 0, 1, 0, 0],
                                                  [0, 0, 1, 0, 0])),
         expect={"y": (2, 6, 10, 3, 3)}, source="BatchToSpace.md worked example 2"),
    Case("b2s/i8-data-i32-blocks", B2S, ov_build(_b2s([8, 1, 2, 3], [1, 2, 2, 1], [0, 1, 0, 0], [0, 0, 1, 0],
                                                      np.int8, np.int32)), expect={"y": (2, 1, 3, 3)}),
    Case("b2s/boolean", B2S, ov_build(_b2s([4, 2, 2], [1, 2, 2], [0, 0, 0], [0, 0, 0], np.bool_))),
    Case("b2s/f16", B2S, ov_build(_b2s([6, 2, 2], [1, 3, 2], [0, 1, 0], [0, 1, 1], np.float16))),
    Case("b2s/crop-whole-axis", B2S, ov_build(_b2s([4, 2], [1, 2], [0, 2], [0, 2])), expect={"y": (2, 0)},
         source="BatchToSpace.md: a crop may remove a whole axis"),
    Case("b2s/dynamic-batch", B2S, ov_build(_b2s([None, 2, 2, 1], [1, 2, 2, 1], [0, 0, 1, 0], [0, 0, 0, 0])),
         shapes={"x": (8, 2, 2, 1)}, expect={"y": (2, 4, 3, 1)}),
    Case("b2s/runtime-blocks", B2S, ov_build(_b2s_runtime_blocks),
         inputs={"block": np.array([1, 2, 2], np.int64), "begin": np.array([0, 1, 0], np.int64),
                 "end": np.array([0, 0, 2], np.int64)}, expect={"y": (2, 3, 4)}),
    # SpaceToBatch-2
    Case("s2b/pads", S2B, ov_build(_s2b([1, 2, 4, 3], [1, 1, 2, 3], [0, 0, 0, 1], [0, 0, 0, 2])),
         expect={"y": (6, 2, 2, 2)}),
    Case("s2b/i32-blocks-i32-data", S2B, ov_build(_s2b([2, 3, 3], [1, 2, 3], [0, 1, 0], [0, 0, 0], np.int32,
                                                       np.int32)), expect={"y": (12, 2, 1)}),
    Case("s2b/dynamic-batch", S2B, ov_build(_s2b([None, 2, 4], [1, 2, 2], [0, 0, 0], [0, 0, 0])),
         shapes={"x": (3, 2, 4)}, expect={"y": (12, 1, 2)}),
    Case("s2b/roundtrip", S2B, ov_build(_b2s_roundtrip), expect={"y": lambda f: f["x"]},
         source="BatchToSpace.md: BatchToSpace(SpaceToBatch(x)) == x"),
]
