"""Selftest cases of DepthToSpace and SpaceToDepth (version 1 unless -N says otherwise). All are
compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, iota, ir_build, ov_build, param

D2S, S2D = ("DepthToSpace", "opset1"), ("SpaceToDepth", "opset1")


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
