"""Selftest cases of Convolution and GroupConvolution (version 1 unless -N says otherwise). Compared
with the oracle within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _weights(shape, seed=5):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _conv(x_shape, w_shape, strides, pads_begin, pads_end, dilations, auto_pad="explicit", group=False):
    def make(ops):
        x = param(ops, x_shape)
        fn = ops.group_convolution if group else ops.convolution
        return [(fn(x, ops.constant(_weights(w_shape)), strides, pads_begin, pads_end, dilations, auto_pad), "y")], [x]
    return make


CONV, GCONV = ("Convolution", "opset1"), ("GroupConvolution", "opset1")


def _int_conv(ops):
    x = param(ops, [None, 2, 5, 5], np.int32)
    w = ops.constant(np.random.default_rng(6).integers(-255, 256, (3, 2, 3, 3)).astype(np.int32))
    return [(ops.convolution(x, w, [1, 2], [1, 0], [1, 1], [1, 1]), "y")], [x]


CASES = [
    Case("conv/2d-pads-dilation", CONV, ov_build(_conv([1, 3, 7, 6], [4, 3, 3, 2], [2, 1], [1, 0], [0, 2], [1, 2])),
         exact=False, expect={"y": (1, 4, 3, 6)}),
    Case("conv/same-upper-odd", CONV, ov_build(_conv([1, 2, 7], [3, 2, 4], [1], [0], [0], [1], "same_upper")),
         exact=False, expect={"y": (1, 3, 7)}, source="Convolution-1: same_upper puts the odd pad at the end"),
    Case("conv/same-lower-stride2", CONV, ov_build(_conv([1, 2, 7, 6], [3, 2, 2, 4], [2, 3], [0, 0], [0, 0], [1, 1],
                                                        "same_lower")), exact=False, expect={"y": (1, 3, 4, 2)}),
    Case("conv/3d-valid", CONV, ov_build(_conv([1, 2, 4, 5, 4], [2, 2, 2, 3, 2], [1, 2, 1], [3, 3, 3], [3, 3, 3],
                                               [1, 1, 2], "valid")), exact=False, expect={"y": (1, 2, 3, 2, 2)}),
    Case("gconv/depthwise-same-upper", GCONV, ov_build(_conv([1, 6, 5, 7], [6, 1, 1, 3, 3], [2, 2], [0, 0], [0, 0],
                                                             [1, 1], "same_upper", group=True)),
         exact=False, expect={"y": (1, 6, 3, 4)}),
    Case("gconv/groups-2", GCONV, ov_build(_conv([1, 4, 6, 6], [2, 3, 2, 3, 3], [1, 1], [1, 1], [1, 1], [1, 1],
                                                 group=True)), exact=False, expect={"y": (1, 6, 6, 6)}),
    Case("conv/i32-exact", CONV, ov_build(_int_conv), shapes={"x": (2, 2, 5, 5)},
         inputs=lambda rng: {"x": rng.integers(-255, 256, (2, 2, 5, 5)).astype(np.int32)}, expect={"y": (2, 3, 5, 2)},
         source="i32 Convolution, as OpenVINO's ONNX frontend writes ConvInteger: exact through ConvInteger on bytes"),
]
