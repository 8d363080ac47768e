"""Selftest cases of ROIPooling-2. max, compared bit for bit (each output is one input value or
0): ROIs with half-cell corners (rounded half away from zero), one past the map, one malformed
(end before start: forced to 1x1); Proposal's end row (batch id -1: it and the later ROIs give 0).
bilinear: normalised ROIs, within the per-type tolerances."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

ROIS = np.array([[0, 0.3, 1.2, 5.5, 6.1], [1, 2, 2, 2.4, 2.2], [1, -3, -2, 12, 11], [0, 1, 0.5, 7.9, 3.3],
                 [1, 2.5, 1.5, 6.5, 4.5], [0, 5, 5, 1, 1]], np.float32)


BILINEAR = np.array([[0, 0.1, 0.2, 0.7, 0.9], [1, 0.5, 0.5, 0.5, 0.5], [1, -0.2, 0.1, 1.3, 0.8]], np.float32)


# Proposal's output: image 0's rois, its end row -1, zeros, image 1's rois (OpenVINO's CPU plugin:
# the ROIs from the -1 on give 0)
ENDED = np.array([[0, 0.3, 1.2, 5.5, 6.1], [0, 1, 0.5, 7.9, 3.3], [-1, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                  [1, 2.5, 1.5, 6.5, 4.5]], np.float32)


def _roi_pooling(scale, dtype=np.float32, method="max", boxes=None):
    def make(ops):
        import openvino.opset2 as ops2

        x = param(ops, [None, 3, None, None], dtype)
        rois = const(ops, boxes if boxes is not None else ROIS if method == "max" else BILINEAR, dtype)
        return [(ops2.roi_pooling(x, rois, [3, 2], scale, method), "y")], [x]
    return make


CASES = [
    Case("roi_pooling/max-scale-1", ("ROIPooling", "opset2"), ov_build(_roi_pooling(1.0)), shapes={"x": (2, 3, 8, 9)},
         expect={"y": (6, 3, 3, 2)}, source="ROIPooling-2 max: Caffe's ROI pooling (Fast R-CNN)"),
    Case("roi_pooling/max-scale-half-f16", ("ROIPooling", "opset2"), ov_build(_roi_pooling(0.5, np.float16)),
         shapes={"x": (2, 3, 8, 9)}),
    Case("roi_pooling/max-proposal-end-row", ("ROIPooling", "opset2"), ov_build(_roi_pooling(1.0, boxes=ENDED)),
         shapes={"x": (2, 3, 8, 9)}, expect={"y": (5, 3, 3, 2)}),
    Case("roi_pooling/bilinear", ("ROIPooling", "opset2"), ov_build(_roi_pooling(1.0, method="bilinear")),
         exact=False, shapes={"x": (2, 3, 8, 9)}, expect={"y": (3, 3, 3, 2)}),
]
