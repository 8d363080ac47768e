"""Selftest cases of MaxPool-1/-8/-14 and AvgPool-1/-14/-16. Exact cases (data movement, integer and
boolean results) are compared bit for bit, the others within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, one_input, ov_build, param


def _pool(opset, build, shape):
    return one_input(build, opset, shape)


MP1, MP8, MP14 = ("MaxPool", "opset1"), ("MaxPool", "opset8"), ("MaxPool", "opset14")
AP1, AP14, AP16 = ("AvgPool", "opset1"), ("AvgPool", "opset14"), ("AvgPool", "opset16")


def _max_pool_indices(ops):
    import openvino.opset14 as ops14

    x = param(ops, [2, 2, 5, 6])
    node = ops14.max_pool(x, [2, 2], [1, 1], [0, 0], [1, 1], [3, 3], "ceil", None, "i32", 1)
    return [(node.output(0), "y"), (node.output(1), "indices")], [x]


CASES = [
    Case("maxpool1/ceil-window-past-input", MP1, ov_build(_pool("opset1", lambda o, x: o.max_pool(
        x, [3], [0], [1], [2], "ceil"), [1, 2, 5])), expect={"y": (1, 2, 3)},
         source="MaxPool-1: a window of padding only gives the lowest finite value (OpenVINO CPU)"),
    Case("maxpool8/dilated-same-upper", MP8, ov_build(_pool("opset8", lambda o, x: o.max_pool(
        x, [2, 2], [1, 2], [0, 0], [0, 0], [3, 2], "floor", "same_upper"), [1, 2, 7, 6])), expect={"y": (1, 2, 4, 3)}),
    Case("maxpool14/ceil-torch", MP14, ov_build(_pool("opset14", lambda o, x: o.max_pool(
        x, [3, 3], [1, 1], [0, 0], [1, 1], [2, 2], "ceil_torch"), [1, 2, 5, 5])), expect={"y": (1, 2, 2, 2)},
         source="MaxPool-14: ceil_torch drops a last window that starts in the padding"),
    Case("avgpool1/include-pad-ceil", AP1, ov_build(_pool("opset1", lambda o, x: o.avg_pool(
        x, [2], [1], [1], [3], False, "ceil"), [1, 1, 6])), exact=False,
         inputs={"x": (np.arange(1, 7, dtype=np.float32) * 10).reshape(1, 1, 6)},
         expect={"y": np.array([[[10, 30, 50, 20]]], np.float32)},
         source="AvgPool-1: with pads, include-pad divides by the whole kernel (OpenVINO reference)"),
    Case("avgpool14/exclude-pad-ceil-torch", AP14, ov_build(_pool("opset14", lambda o, x: o.avg_pool(
        x, [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil_torch"), [1, 2, 6, 6])), exact=False, expect={"y": (1, 2, 4, 4)}),
    Case("avgpool16/include-pad-ceil-torch", AP16, ov_build(_pool("opset16", lambda o, x: o.avg_pool(
        x, [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil_torch", None, [1, 1]), [1, 2, 6, 6])), exact=False,
         expect={"y": (1, 2, 4, 4)}, source="AvgPool-16 (dilations > 1 need ONNX opset 19, chosen by the converter: tests/test_pooling_dilations.py)"),
    Case("maxpool14/indices-axis1-ceil", MP14, ov_build(_max_pool_indices),
         expect={"y": (2, 2, 3, 3), "indices": (2, 2, 3, 3)},
         source="MaxPool-14: indices flattened over the dims from axis 1 (channel, spatial)"),
    Case("maxpool14/ceil-torch-dynamic", MP14, ov_build(_pool("opset14", lambda o, x: o.max_pool(
        x, [3, 3], [1, 1], [1, 1], [1, 1], [2, 2], "ceil_torch"), [1, 2, None, None])), shapes={"x": (1, 2, 7, 7)},
         expect={"y": (1, 2, 3, 3)},
         source="MaxPool-14: ceil_torch drops the window starting in the end padding; the size comes from "
                "the run-time dims (computed in the graph)"),
    Case("avgpool14/ceil-dynamic", AP14, ov_build(_pool("opset14", lambda o, x: o.avg_pool(
        x, [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil"), [1, 2, None, None])), shapes={"x": (1, 2, 6, 7)},
         exact=False, expect={"y": (1, 2, 4, 4)}),
]
