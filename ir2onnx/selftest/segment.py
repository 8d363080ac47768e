"""Selftest cases of SegmentMax-16: the spec's segments [0, 0, 0, 1, 1, 3, 5, 5] with both fill
modes, and a 2-D i32 case without num_segments."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

_DATA = np.array([3, 1, 2, 7, -4, 5, -1, 6], np.float32)
_LOWEST = float(np.finfo(np.float32).min)


def _segment_max(fill, num=None, dtype=np.float32, shape=(8,), ids=(0, 0, 0, 1, 1, 3, 5, 5)):
    def make(ops):
        import openvino.opset16 as o16

        x = param(ops, list(shape), dtype)
        node = o16.segment_max(x, const(ops, list(ids), np.int32), None if num is None else const(ops, num), fill)
        return [(node, "y")], [x]
    return make


CASES = [
    Case("segmentmax/spec-segments-zero", ("SegmentMax", "opset16"), ov_build(_segment_max("zero", 6)),
         min_opset=18, inputs={"x": _DATA}, expect={"y": np.array([3, 7, 0, 5, 0, 6], np.float32)},
         source="SegmentMax-16: segment_ids [0, 0, 0, 1, 1, 3, 5, 5], empty segments 2 and 4"),
    Case("segmentmax/spec-segments-lowest", ("SegmentMax", "opset16"), ov_build(_segment_max("lowest", 7)),
         min_opset=18, inputs={"x": _DATA}, expect={"y": np.array([3, 7, _LOWEST, 5, _LOWEST, 6, _LOWEST], np.float32)},
         source="SegmentMax-16: fill_mode LOWEST, num_segments past the last id"),
    Case("segmentmax/2d-i32-no-num-segments", ("SegmentMax", "opset16"),
         ov_build(_segment_max("lowest", None, np.int32, (3, 4), (0, 1, 1))),
         min_opset=18, inputs={"x": np.array([[1, 2, 3, 4], [-5, 6, -7, 8], [9, -10, 11, -12]], np.int32)},
         expect={"y": np.array([[1, 2, 3, 4], [9, 6, 11, 8]], np.int32)},
         source="SegmentMax-16 example 2 (2-D data, segment ids [0, 1, 1])"),
]
