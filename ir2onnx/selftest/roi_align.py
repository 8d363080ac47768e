"""Selftest cases of ROIAlign-3/-9 (avg mode) and ROIAlignRotated-15: each aligned mode, the adaptive sampling grid
(sampling_ratio 0), ROIs partly outside the map. Compared with the oracle within the per-type
tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

ROIS = np.array([[0.3, 1.2, 5.5, 6.1], [2, 2, 2.4, 2.2], [-3, -2, 12, 11], [1, 0.5, 7.9, 3.3]], np.float32)
BATCH = np.array([0, 1, 1, 0], np.int32)


def _roi_align(version, ratio, aligned=None, dtype=np.float32, mode="avg"):
    def make(ops):
        import openvino.opset3 as ops3
        import openvino.opset9 as ops9

        x = param(ops, [None, 3, None, None], dtype)
        rois, batch = const(ops, ROIS, dtype), const(ops, BATCH, np.int32)
        if version == 3:
            y = ops3.roi_align(x, rois, batch, 3, 2, ratio, 0.7, mode)
        else:
            y = ops9.roi_align(x, rois, batch, 3, 2, ratio, 0.7, mode, aligned)
        return [(y, "y")], [x]
    return make


_SHAPES = {"x": (2, 3, 8, 9)}

CASES = [
    Case("roi_align3/adaptive-grid", ("ROIAlign", "opset3"), ov_build(_roi_align(3, 0)), exact=False,
         shapes=_SHAPES, expect={"y": (4, 3, 3, 2)}),
    Case("roi_align9/asymmetric-ratio-2", ("ROIAlign", "opset9"), ov_build(_roi_align(9, 2, "asymmetric")),
         exact=False, shapes=_SHAPES),
    Case("roi_align9/half-pixel-for-nn", ("ROIAlign", "opset9"), ov_build(_roi_align(9, 2, "half_pixel_for_nn")),
         exact=False, shapes=_SHAPES, source="ROIAlign-9: torchvision's roi_align(aligned=True)"),
    Case("roi_align9/half-pixel-f16", ("ROIAlign", "opset9"),
         ov_build(_roi_align(9, 0, "half_pixel", np.float16)), exact=False, shapes=_SHAPES),
    Case("roi_align3/max-ratio-2", ("ROIAlign", "opset3"), ov_build(_roi_align(3, 2, mode="max")), exact=False,
         shapes=_SHAPES, source="ROIAlign max: the largest bilinear sample of each bin, and 0 (OpenVINO)"),
    Case("roi_align9/max-half-pixel-ratio-1", ("ROIAlign", "opset9"),
         ov_build(_roi_align(9, 1, "half_pixel", mode="max")), exact=False, shapes=_SHAPES),
]

ROTATED = np.array([[3.1, 4.2, 5.5, 3.1, 0.4], [6, 5, 4, 7, -1.2], [2, 2, 9, 3, 2.5], [4.5, 3.5, 3, 3, 0]],
                   np.float32)


def _rotated(clockwise, dtype=np.float32):
    def make(ops):
        import openvino.opset15 as ops15

        x = param(ops, [None, 3, None, None], dtype)
        rois, batch = const(ops, ROTATED, dtype), const(ops, BATCH, np.int32)
        return [(ops15.roi_align_rotated(x, rois, batch, 3, 2, 2, 0.8, clockwise), "y")], [x]
    return make


CASES += [
    Case("roi_align_rotated15/counter-clockwise", ("ROIAlignRotated", "opset15"), ov_build(_rotated(False)),
         exact=False, shapes=_SHAPES, expect={"y": (4, 3, 3, 2)},
         source="ROIAlignRotated-15: detectron2's ROIAlignRotated (angle in radians)"),
    Case("roi_align_rotated15/clockwise-f16", ("ROIAlignRotated", "opset15"),
         ov_build(_rotated(True, np.float16)), exact=False, shapes=_SHAPES),
]
