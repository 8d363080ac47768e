"""Selftest cases of LRN-1 and GRN-1. Compared with the oracle within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

_TRUNCATES_BIAS = ("OpenVINO's CPU plugin truncates LRN's bias to an integer (1.5 acts as 1, 0.5 as 0; "
                   "measured, 2026.4)")


def _lrn(shape, axes, size, bias=2.0, dtype=np.float32, alpha=0.5, beta=0.75):
    def make(ops):
        x = param(ops, list(shape), dtype)
        return [(ops.lrn(x, const(ops, axes), alpha, beta, bias, size), "y")], [x]
    return make


def _alexnet_expect(feeds):
    x = feeds["x"].astype(np.float64)
    sq = np.pad(x ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    total = sum(sq[:, k:k + x.shape[1]] for k in range(5))
    return x / (2.0 + 1e-4 / 5 * total) ** 0.75


def _grn(shape, bias, dtype=np.float32):
    def make(ops):
        x = param(ops, list(shape), dtype)
        return [(ops.grn(x, bias), "y")], [x]
    return make


def _grn_expect(bias):
    def expect(feeds):
        x = feeds["x"].astype(np.float64)
        return x / np.sqrt((x * x).sum(1, keepdims=True) + bias)
    return expect


CASES = [
    Case("lrn/alexnet-channels", ("LRN", "opset1"), ov_build(_lrn((1, 8, 5, 5), [1], 5, alpha=1e-4)),
         exact=False, expect={"y": _alexnet_expect}, source="LRN-1: AlexNet's (size 5, alpha 1e-4, beta 0.75, bias 2)"),
    Case("lrn/spatial-2-3", ("LRN", "opset1"), ov_build(_lrn((2, 3, 5, 4), [2, 3], 3)), exact=False),
    Case("lrn/3d-channels", ("LRN", "opset1"), ov_build(_lrn((2, 6, 7), [1], 3)), exact=False,
         openvino=False, source="LRN-1 on 3-D data (OpenVINO's CPU plugin takes 4-D axes [1] / [2, 3] only)"),
    Case("lrn/dynamic-f16", ("LRN", "opset1"), ov_build(_lrn((None, 6, None, None), [1], 5, dtype=np.float16)),
         exact=False, shapes={"x": (1, 6, 3, 4)}),
    Case("lrn/fractional-bias", ("LRN", "opset1"), ov_build(_lrn((1, 6, 3, 3), [1], 3, bias=1.5)), exact=False,
         openvino_deviates=_TRUNCATES_BIAS),
    Case("lrn/even-size", ("LRN", "opset1"), ov_build(_lrn((1, 7, 3, 3), [1], 4)), exact=False,
         source="LRN-1 size 4: ONNX's window, one more channel above than below",
         openvino_deviates="OpenVINO's CPU plugin sums a centred window of size-1 for an even size "
                           "(measured, 2026.4); ONNX, whose LRN writes even sizes, one more above"),
    Case("grn/4d", ("GRN", "opset1"), ov_build(_grn((2, 5, 3, 4), 0.5)), exact=False,
         expect={"y": _grn_expect(0.5)}),
    Case("grn/2d-dynamic-f16", ("GRN", "opset1"), ov_build(_grn((None, 6), 1e-6, np.float16)), exact=False,
         shapes={"x": (3, 6)}),
]
