"""Selftest cases of the common network ops: Convolution, GroupConvolution, MatMul, Transpose,
StridedSlice, Slice, the activations, SoftMax and pooling. Arithmetic ops are compared within the per-type tolerances
of :mod:`ir2onnx.compare`; Transpose, the slices, ReLU, Clamp and MaxPool bit for bit."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ov_build, param


def _weights(shape, seed=5):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _conv(x_shape, w_shape, strides, pads_begin, pads_end, dilations, auto_pad="explicit", group=False):
    def make(ops):
        x = param(ops, x_shape)
        fn = ops.group_convolution if group else ops.convolution
        return [(fn(x, ops.constant(_weights(w_shape)), strides, pads_begin, pads_end, dilations, auto_pad), "y")], [x]
    return make


def _matmul(a_shape, b_shape, ta, tb):
    def make(ops):
        a, b = param(ops, a_shape, name="a"), param(ops, b_shape, name="b")
        return [(ops.matmul(a, b, ta, tb), "y")], [a, b]
    return make


def _transpose(shape, order, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.transpose(x, const(ops, order)), "y")], [x]
    return make


def _unary(build, opset="opset15", shape=(2, 3, 4)):
    def make(ops):
        import importlib

        x = param(ops, list(shape))
        return [(build(importlib.import_module(f"openvino.{opset}"), x), "y")], [x]
    return make


def _pool(opset, build, shape):
    return _unary(build, opset, shape)


def _strided(ops):
    import openvino.opset1 as ops1

    x = param(ops, [3, 4, 5])
    c = lambda v: const(ops, v)  # noqa: E731
    y = ops1.strided_slice(x, c([0, 0, -1]), c([0, 0, 0]), c([1, 1, 1]), [1, 0, 0], [1, 0, 0], [0, 0, 0],
                           [0, 0, 1], [0, 1, 0])
    return [(y, "y")], [x]


def _slice(ops):
    x = param(ops, [3, 4, 5])
    return [(ops.slice(x, const(ops, [-1, 1]), const(ops, [0, 100]), const(ops, [-1, 2]), const(ops, [0, 2])), "y")], [x]


def _uniform(low, high, shape=(2, 3, 4)):
    return lambda rng: {"x": rng.uniform(low, high, shape).astype(np.float32)}


CONV, GCONV = ("Convolution", "opset1"), ("GroupConvolution", "opset1")
MP1, MP8, MP14 = ("MaxPool", "opset1"), ("MaxPool", "opset8"), ("MaxPool", "opset14")
AP1, AP14 = ("AvgPool", "opset1"), ("AvgPool", "opset14")

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
    Case("matmul/transpose-b", ("MatMul", "opset1"), ov_build(_matmul([2, 1, 2, 3], [3, 5, 3], False, True)),
         exact=False, expect={"y": lambda f: f["a"] @ np.swapaxes(f["b"], -1, -2)}),
    Case("matmul/1d-ignores-transpose", ("MatMul", "opset1"), ov_build(_matmul([3], [3, 4], True, False)),
         exact=False, expect={"y": lambda f: f["a"] @ f["b"]},
         source="MatMul-1: a 1-D operand is unsqueezed whatever transpose_a says (measured)"),
    Case("transpose/perm", ("Transpose", "opset1"), ov_build(_transpose([2, 3, 4], [2, 0, 1])),
         expect={"y": lambda f: np.transpose(f["x"], [2, 0, 1])}),
    Case("transpose/empty-order-reverses", ("Transpose", "opset1"), ov_build(_transpose([2, 3, 4], [], np.int32)),
         expect={"y": lambda f: np.transpose(f["x"])}, source="Transpose-1: empty input_order reverses the axes"),
    Case("stridedslice/ellipsis-shrink", ("StridedSlice", "opset1"), ov_build(_strided),
         expect={"y": lambda f: f["x"][:, ..., -1]}, source="StridedSlice-1: ellipsis and shrink_axis masks"),
    Case("slice8/negative-step-axes", ("Slice", "opset8"), ov_build(_slice),
         expect={"y": lambda f: f["x"][-1:0:-1, :, 1:100:2]}),
    Case("relu/f32", ("ReLU", "opset1"), ov_build(_unary(lambda o, x: o.relu(x))),
         expect={"y": lambda f: np.maximum(f["x"], 0)}),
    Case("sigmoid/f32", ("Sigmoid", "opset1"), ov_build(_unary(lambda o, x: o.sigmoid(x))), exact=False),
    Case("tanh/f32", ("Tanh", "opset1"), ov_build(_unary(lambda o, x: o.tanh(x))), exact=False),
    Case("exp/f32", ("Exp", "opset1"), ov_build(_unary(lambda o, x: o.exp(x))), exact=False, inputs=_uniform(-5, 5)),
    Case("sqrt/f32", ("Sqrt", "opset1"), ov_build(_unary(lambda o, x: o.sqrt(x))), exact=False, inputs=_uniform(0, 9)),
    Case("clamp/f32", ("Clamp", "opset1"), ov_build(_unary(lambda o, x: o.clamp(x, -0.5, 1.25))),
         expect={"y": lambda f: np.clip(f["x"], np.float32(-0.5), np.float32(1.25))}),
    Case("gelu2/erf", ("Gelu", "opset2"), ov_build(_unary(lambda o, x: o.gelu(x), "opset2")), exact=False),
    Case("gelu7/tanh", ("Gelu", "opset7"), ov_build(_unary(lambda o, x: o.gelu(x, "tanh"), "opset7")), exact=False),
    Case("hswish/f32", ("HSwish", "opset4"), ov_build(_unary(lambda o, x: o.hswish(x), "opset4")), exact=False,
         inputs=_uniform(-5, 5)),
    Case("swish/f32", ("Swish", "opset4"), ov_build(_unary(lambda o, x: o.swish(x), "opset4")), exact=False),
    Case("softmax1/axis1", ("SoftMax", "opset1"), ov_build(_unary(lambda o, x: o.softmax(x, 1), "opset1")), exact=False),
    Case("softmax8/axis-1", ("SoftMax", "opset8"), ov_build(_unary(lambda o, x: o.softmax(x, -1), "opset8")),
         exact=False),
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
]
