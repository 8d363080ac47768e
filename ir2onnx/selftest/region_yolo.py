"""Selftest cases of RegionYolo-1 (YOLO v2 with softmax, v3 with a mask) and ReorgYolo-2 (bit
for bit)."""
from __future__ import annotations

import numpy as np

from .cases import Case, iota, ov_build, param


def _region(coords, classes, num, soft, mask, axis=1, end_axis=3, shape=(1, 14, 2, 3)):
    def make(ops):
        import openvino.opset1 as o1

        x = param(ops, list(shape))
        return [(o1.region_yolo(x, coords, classes, num, soft, mask, axis, end_axis, [1.0] * (2 * num)), "y")], [x]
    return make


def _reorg(stride, shape):
    def make(ops):
        import openvino.opset2 as o2

        x = param(ops, list(shape))
        return [(o2.reorg_yolo(x, [stride]), "y")], [x]
    return make


def _sigmoid_only(feeds):
    """v3 with coords=2: every entry goes through the logistic function."""
    return (1 / (1 + np.exp(-feeds["x"].astype(np.float64)))).astype(np.float32)


def _reorg_expect(feeds):
    x = feeds["x"]
    n, c, h, w = x.shape
    return x.reshape(n, c // 4, h, 2, w, 2).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * 4, h // 2, w // 2)


CASES = [
    Case("region_yolo/v2-softmax", ("RegionYolo", "opset1"), ov_build(_region(4, 2, 2, True, [0, 1])),
         exact=False),
    Case("region_yolo/v2-softmax-axis2", ("RegionYolo", "opset1"),
         ov_build(_region(4, 2, 2, True, [0, 1], axis=2, end_axis=3)), exact=False),
    Case("region_yolo/v3-mask", ("RegionYolo", "opset1"), ov_build(_region(4, 2, 6, False, [0, 2], shape=(1, 14, 3, 2))),
         exact=False),
    Case("region_yolo/v3-all-sigmoid", ("RegionYolo", "opset1"),
         ov_build(_region(2, 2, 3, False, [1], shape=(1, 5, 2, 2))), exact=False, expect={"y": _sigmoid_only}),
    Case("reorg_yolo/stride2", ("ReorgYolo", "opset2"), ov_build(_reorg(2, (1, 8, 4, 6))),
         inputs={"x": iota((1, 8, 4, 6))}, expect={"y": _reorg_expect}),
    Case("reorg_yolo/stride3-batch2", ("ReorgYolo", "opset2"), ov_build(_reorg(3, (2, 9, 3, 6)))),
]
