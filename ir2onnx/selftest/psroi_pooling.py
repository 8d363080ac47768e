"""Selftest cases of PSROIPooling-1 (R-FCN heads): average with group_size 3 on pixel ROIs at
scale 1/2, bilinear with 2x2 spatial bins on normalised ROIs; both arithmetic (a mean). Static
shapes: OpenVINO's CPU plugin runs PSROIPooling only with static shapes."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

AVERAGE = np.array([[0, 0, 0, 15, 13], [1, 2.5, 3.4, 9.6, 7.5], [0, 4, 2, 4, 2], [1, 6, 1, 30, 30]], np.float32)
BILINEAR = np.array([[0, 0.1, 0.2, 0.7, 0.9], [1, 0.5, 0.5, 0.5, 0.5], [1, 0.0, 0.1, 1.3, 0.8]], np.float32)


def _psroi(mode, dtype=np.float32):
    def make(ops):
        import openvino.opset1 as ops1

        if mode == "average":
            x = param(ops, [2, 18, 8, 9], dtype)
            node = ops1.psroi_pooling(x, const(ops, AVERAGE, dtype), 2, 3, 0.5, 1, 1, "average")
        else:
            x = param(ops, [2, 12, 7, 6], dtype)
            node = ops1.psroi_pooling(x, const(ops, BILINEAR, dtype), 3, 2, 1.0, 2, 2, "bilinear")
        return [(node, "y")], [x]
    return make


CASES = [
    Case("psroi_pooling/average", ("PSROIPooling", "opset1"), ov_build(_psroi("average")), exact=False,
         shapes={"x": (2, 18, 8, 9)}, expect={"y": (4, 2, 3, 3)}, source="PSROIPooling-1 average: R-FCN's head"),
    Case("psroi_pooling/average-f16", ("PSROIPooling", "opset1"), ov_build(_psroi("average", np.float16)),
         exact=False, shapes={"x": (2, 18, 8, 9)}),
    Case("psroi_pooling/bilinear", ("PSROIPooling", "opset1"), ov_build(_psroi("bilinear")), exact=False,
         shapes={"x": (2, 12, 7, 6)}, expect={"y": (3, 3, 2, 2)}),
]
