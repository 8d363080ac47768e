"""Selftest cases of DeformablePSROIPooling-1 (Deformable R-FCN heads): without offsets (plain
position-sensitive pooling with 2x2 sub-bin samples) and with run-time offsets (two classes,
part_size 2 under group_size 3); pixel ROIs at scale 1/4, partly outside the map. Arithmetic (a
mean of bilinear samples). Static shapes: OpenVINO's CPU plugin runs the op only with them."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

ROIS = np.array([[0, 2, 3, 20, 17], [1, -8, 4, 12, 40], [0, 10, 10, 10, 10], [1, 16, 1, 40, 27]], np.float32)


def _deformable(with_offsets: bool, dtype=np.float32):
    def make(ops):
        import openvino.opset1 as ops1

        x = param(ops, [2, 18, 8, 9], dtype)
        if not with_offsets:
            node = ops1.deformable_psroi_pooling(x, const(ops, ROIS, dtype), 2, 0.25, 3, "bilinear_deformable", 2, 2)
            return [(node, "y")], [x]
        t = param(ops, [4, 4, 2, 2], dtype, "offsets")
        node = ops1.deformable_psroi_pooling(x, const(ops, ROIS, dtype), 2, 0.25, 3, "bilinear_deformable", 2, 3,
                                             0.2, 2, offsets=t)
        return [(node, "y")], [x, t]
    return make


CASES = [
    Case("deformable_psroi_pooling/plain", ("DeformablePSROIPooling", "opset1"), ov_build(_deformable(False)),
         exact=False, shapes={"x": (2, 18, 8, 9)}, expect={"y": (4, 2, 3, 3)},
         source="DeformablePSROIPooling-1 without offsets: R-FCN's head with sub-bin samples"),
    Case("deformable_psroi_pooling/offsets", ("DeformablePSROIPooling", "opset1"), ov_build(_deformable(True)),
         exact=False, shapes={"x": (2, 18, 8, 9), "offsets": (4, 4, 2, 2)}, expect={"y": (4, 2, 3, 3)}),
    Case("deformable_psroi_pooling/offsets-f16", ("DeformablePSROIPooling", "opset1"),
         ov_build(_deformable(True, np.float16)), exact=False, shapes={"x": (2, 18, 8, 9), "offsets": (4, 4, 2, 2)}),
]
