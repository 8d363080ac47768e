"""Selftest cases of ReLU, Sigmoid, Tanh, Clamp, Gelu-2/-7, HSwish-4, Swish-4, PReLU, Elu, SoftPlus-4,
Mish-4, HSigmoid-5, SoftSign-9 and Selu (version 1 unless -N says otherwise). Exact cases (data
movement, integer and boolean results) are compared bit for bit, the others within the per-type
tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, normal, one_input, ov_build, param, unary, uniform


def _prelu(ops):
    x = param(ops, [1, 3, 2, 2])
    return [(ops.prelu(x, const(ops, [0.1, -0.5, 2.0], np.float32)), "y")], [x]


def _selu(ops):
    x = param(ops, [2, 3, 4])
    return [(ops.selu(x, const(ops, [1.6732632], np.float32), const(ops, [1.0507010], np.float32)), "y")], [x]


CASES = [
    Case("relu/f32", ("ReLU", "opset1"), ov_build(one_input(lambda o, x: o.relu(x))),
         expect={"y": lambda f: np.maximum(f["x"], 0)}),
    Case("sigmoid/f32", ("Sigmoid", "opset1"), ov_build(one_input(lambda o, x: o.sigmoid(x))), exact=False),
    Case("tanh/f32", ("Tanh", "opset1"), ov_build(one_input(lambda o, x: o.tanh(x))), exact=False),
    Case("clamp/f32", ("Clamp", "opset1"), ov_build(one_input(lambda o, x: o.clamp(x, -0.5, 1.25))),
         expect={"y": lambda f: np.clip(f["x"], np.float32(-0.5), np.float32(1.25))}),
    Case("gelu2/erf", ("Gelu", "opset2"), ov_build(one_input(lambda o, x: o.gelu(x), "opset2")), exact=False),
    Case("gelu7/tanh", ("Gelu", "opset7"), ov_build(one_input(lambda o, x: o.gelu(x, "tanh"), "opset7")), exact=False),
    Case("hswish/f32", ("HSwish", "opset4"), ov_build(one_input(lambda o, x: o.hswish(x), "opset4")), exact=False,
         inputs=uniform(-5, 5)),
    Case("swish/f32", ("Swish", "opset4"), ov_build(one_input(lambda o, x: o.swish(x), "opset4")), exact=False),
    Case("prelu/per-channel", ("PReLU", "opset1"), ov_build(_prelu), exact=False, inputs=normal(shape=(1, 3, 2, 2))),
    Case("elu/alpha", ("Elu", "opset1"), ov_build(unary("elu", 0.7)), exact=False, inputs=normal(),
         expect={"y": lambda f: np.where(f["x"] > 0, f["x"], 0.7 * np.expm1(f["x"].astype(np.float64)))}),
    Case("softplus/f32", ("SoftPlus", "opset4"), ov_build(unary("softplus")), exact=False, inputs=normal(),
         expect={"y": lambda f: np.logaddexp(0, f["x"].astype(np.float64))}),
    Case("mish/f32", ("Mish", "opset4"), ov_build(unary("mish")), exact=False, inputs=normal()),
    Case("hsigmoid/f32", ("HSigmoid", "opset5"), ov_build(unary("hsigmoid")), exact=False, inputs=uniform(-5, 5),
         expect={"y": lambda f: np.clip(f["x"].astype(np.float64) + 3, 0, 6) / 6}),
    Case("softsign/f32", ("SoftSign", "opset9"), ov_build(unary("softsign")), exact=False, inputs=uniform(-9, 9),
         expect={"y": lambda f: f["x"] / (1 + np.abs(f["x"].astype(np.float64)))}),
    Case("selu/constant-alpha-lambda", ("Selu", "opset1"), ov_build(_selu), exact=False, inputs=uniform(-4, 4)),
]
