"""Selftest cases of NV12toRGB/BGR-8 and I420toRGB/BGR-8 (single and separate planes, u8 and f32)."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _make(fn, shapes, dtype):
    def make(ops):
        import openvino.opset8 as o8

        params = [param(ops, s, dtype, n) for s, n in zip(shapes, ("y", "u", "v") if len(shapes) == 3 else ("y", "uv"))]
        return [(getattr(o8, fn)(*params), "rgb")], params
    return make


def _pixels(shapes, dtype):
    def feeds(rng):
        names = ("y", "u", "v") if len(shapes) == 3 else ("y", "uv")
        return {n: rng.integers(0, 256, [2 if d is None else d for d in s]).astype(dtype)
                for n, s in zip(names, shapes)}
    return feeds


CASES = [
    Case("nv12torgb8/single-plane-u8", ("NV12toRGB", "opset8"), ov_build(_make("nv12_to_rgb", [[None, 6, 4, 1]], np.uint8)),
         inputs=_pixels([[None, 6, 4, 1]], np.uint8), shapes={"y": (2, 6, 4, 1)}, expect={"rgb": (2, 4, 4, 3)},
         source="NV12toRGB-8: Y rows, then interleaved UV rows; u8 rounds half away from zero"),
    Case("nv12tobgr8/two-planes-f32", ("NV12toBGR", "opset8"),
         ov_build(_make("nv12_to_bgr", [[1, 4, 6, 1], [1, 2, 3, 2]], np.float32)), exact=False,
         inputs=_pixels([[1, 4, 6, 1], [1, 2, 3, 2]], np.float32), expect={"rgb": (1, 4, 6, 3)}),
    Case("i420torgb8/three-planes-u8", ("I420toRGB", "opset8"),
         ov_build(_make("i420_to_rgb", [[None, 4, 6, 1], [None, 2, 3, 1], [None, 2, 3, 1]], np.uint8)),
         inputs=_pixels([[None, 4, 6, 1], [None, 2, 3, 1], [None, 2, 3, 1]], np.uint8),
         shapes={"y": (2, 4, 6, 1), "u": (2, 2, 3, 1), "v": (2, 2, 3, 1)}, expect={"rgb": (2, 4, 6, 3)}),
    Case("i420tobgr8/single-plane-u8", ("I420toBGR", "opset8"), ov_build(_make("i420_to_bgr", [[1, 6, 6, 1]], np.uint8)),
         inputs=_pixels([[1, 6, 6, 1]], np.uint8), expect={"rgb": (1, 4, 6, 3)},
         source="I420toBGR-8: the U plane of H*W/4 elements spans partial rows (H = 4, W = 6)"),
]
