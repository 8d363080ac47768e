"""Selftest cases of HardSigmoid-1: constant alpha/beta (ONNX HardSigmoid) and run-time alpha/beta
(Mul, Add, Clip), compared with the oracle within the per-type tolerances."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param, uniform


def _constant(ops):
    x = param(ops, [2, None])
    return [(ops.hard_sigmoid(x, const(ops, 0.2, np.float32), const(ops, 0.5, np.float32)), "y")], [x]


def _runtime(ops):
    x, a, b = param(ops, [2, 6]), param(ops, [], name="alpha"), param(ops, [], name="beta")
    return [(ops.hard_sigmoid(x, a, b), "y")], [x, a, b]


def _spec(alpha, beta):
    return lambda f: np.clip(f["x"] * np.float32(alpha) + np.float32(beta), 0, 1)


CASES = [
    Case("hard_sigmoid/constant", ("HardSigmoid", "opset1"), ov_build(_constant), exact=False,
         inputs=uniform(-5, 5, (2, 6)), expect={"y": _spec(0.2, 0.5)}),
    Case("hard_sigmoid/runtime-alpha-beta", ("HardSigmoid", "opset1"), ov_build(_runtime), exact=False,
         inputs=lambda rng: {"x": rng.uniform(-5, 5, (2, 6)).astype(np.float32),
                             "alpha": np.array(0.3, np.float32), "beta": np.array(0.4, np.float32)},
         expect={"y": _spec(0.3, 0.4)}, openvino=False),  # OpenVINO's CPU plugin cannot compile it
]
