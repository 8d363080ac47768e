"""Selftest cases of the data-movement families: BatchToSpace / SpaceToBatch and DepthToSpace /
SpaceToDepth (specs/BatchToSpace.md, specs/DepthToSpace.md). All must be bit-exact."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, iota, ir_build, ov_build, param

B2S, S2B = ("BatchToSpace", "opset2"), ("SpaceToBatch", "opset2")
D2S, S2D = ("DepthToSpace", "opset1"), ("SpaceToDepth", "opset1")


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


def _d2s(shape, mode, bs, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.depth_to_space(x, mode, bs), "y")], [x]
    return make


def _s2d(shape, mode, bs, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.space_to_depth(x, mode, bs), "y")], [x]
    return make


def _d2s_roundtrip(ops):
    x = param(ops, [1, 2, 2, 4, 2], np.float32)
    return [(ops.depth_to_space(ops.space_to_depth(x, "depth_first", 2), "depth_first", 2), "y")], [x]


def _d2s_tf(shape, data_format, bs=2, dtype="f32", mode="blocks_first"):
    """A TensorFlow-layout DepthToSpace, which only IRWriter can write (OpenVINO has no such attribute)."""
    if data_format == "NHWC":
        n, h, w, c = shape
        out = (n, h * bs, w * bs, c // (bs * bs))
    elif data_format == "NCHW":
        n, c, h, w = shape
        out = (n, c // (bs * bs), h * bs, w * bs)
    else:  # NCHW_VECT_C: [n, c/4, h, w, 4]
        n, c4, h, w, four = shape
        out = (n, c4 // (bs * bs), h * bs, w * bs, four)

    def make(wr):
        x = wr.parameter(list(shape), dtype, "x")
        y = wr.layer("DepthToSpace", "opset1", [x], {"block_size": bs, "mode": mode, "data_format": data_format},
                     [(dtype, out)], out_names=["y"])[0]
        wr.result(y)
    return make, out


_TF1, _ = _d2s_tf((1, 1, 1, 4), "NHWC")
_TF2, _ = _d2s_tf((1, 1, 1, 12), "NHWC")
_TF3, _ = _d2s_tf((1, 2, 2, 4), "NHWC")
_TF_INT, _ = _d2s_tf((2, 2, 3, 8), "NHWC", dtype="i32")
_VECT, _VECT_OUT = _d2s_tf((1, 4, 1, 2, 4), "NCHW_VECT_C", dtype="i8")
_NCHW, _ = _d2s_tf((1, 8, 2, 3), "NCHW")

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
    # DepthToSpace-1 (OpenVINO layouts)
    Case("d2s/blocks-first-4d", D2S, ov_build(_d2s([1, 8, 2, 3], "blocks_first", 2)), expect={"y": (1, 2, 4, 6)}),
    Case("d2s/depth-first-4d", D2S, ov_build(_d2s([2, 8, 3, 2], "depth_first", 2)), expect={"y": (2, 2, 6, 4)}),
    Case("d2s/blocks-first-3d", D2S, ov_build(_d2s([1, 6, 4], "blocks_first", 3)), expect={"y": (1, 2, 12)}),
    Case("d2s/depth-first-5d", D2S, ov_build(_d2s([1, 16, 2, 1, 2], "depth_first", 2)),
         expect={"y": (1, 2, 4, 2, 4)}),
    Case("d2s/i32-4d", D2S, ov_build(_d2s([1, 4, 2, 2], "blocks_first", 2, np.int32))),
    Case("d2s/boolean-4d", D2S, ov_build(_d2s([1, 4, 1, 3], "depth_first", 2, np.bool_))),
    Case("d2s/block-size-1", D2S, ov_build(_d2s([1, 3, 2, 2], "blocks_first", 1)), expect={"y": lambda f: f["x"]}),
    # DepthToSpace with TensorFlow's layouts (specs: "How the TensorFlow variant appears in an IR file")
    Case("d2s/tf-nhwc-example-1", D2S, ir_build(_TF1), inputs={"x": iota((1, 1, 1, 4))}, openvino=False,
         expect={"y": np.array([[[[1], [2]], [[3], [4]]]], np.float32)}, source="DepthToSpace.md TF example 1"),
    Case("d2s/tf-nhwc-example-2", D2S, ir_build(_TF2), inputs={"x": iota((1, 1, 1, 12))}, openvino=False,
         expect={"y": np.array([[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]], np.float32)},
         source="DepthToSpace.md TF example 2"),
    Case("d2s/tf-nhwc-example-3", D2S, ir_build(_TF3), inputs={"x": iota((1, 2, 2, 4))}, openvino=False,
         expect={"y": np.array([[1, 2, 5, 6], [3, 4, 7, 8], [9, 10, 13, 14], [11, 12, 15, 16]],
                               np.float32).reshape(1, 4, 4, 1)}, source="DepthToSpace.md TF example 3"),
    Case("d2s/tf-nhwc-i32", D2S, ir_build(_TF_INT), openvino=False, expect={"y": (2, 4, 6, 2)}),
    Case("d2s/tf-nchw-vect-c", D2S, ir_build(_VECT), openvino=False, expect={"y": _VECT_OUT}),
    Case("d2s/explicit-nchw", D2S, ir_build(_NCHW), openvino=False, expect={"y": (1, 2, 4, 6)}),
    # SpaceToDepth-1
    Case("s2d/blocks-first-4d", S2D, ov_build(_s2d([1, 2, 4, 6], "blocks_first", 2)), expect={"y": (1, 8, 2, 3)}),
    Case("s2d/depth-first-4d", S2D, ov_build(_s2d([2, 2, 4, 6], "depth_first", 2)), expect={"y": (2, 8, 2, 3)}),
    Case("s2d/blocks-first-3d", S2D, ov_build(_s2d([1, 2, 6], "blocks_first", 3)), expect={"y": (1, 6, 2)}),
    Case("s2d/i64-4d", S2D, ov_build(_s2d([1, 1, 4, 4], "depth_first", 2, np.int64))),
    Case("s2d/roundtrip-5d", S2D, ov_build(_d2s_roundtrip), expect={"y": lambda f: f["x"]},
         source="DepthToSpace.md: DepthToSpace(SpaceToDepth(x, m, bs), m, bs) == x"),
]
