"""Selftest cases of Exp, Sqrt, Erf, Log, Floor, Ceiling, Negative, Abs, Sign, Round-5 and Identity-16 (version 1
unless -N says otherwise). Exact cases (data movement, integer and boolean results) are compared
bit for bit, the others within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, one_input, ov_build, param, unary, uniform

ROUND_TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999998, -0.4, 1e30, 7.0], np.float32)


def _half_away(v):
    return np.where(np.abs(v - np.trunc(v)) == 0.5, np.trunc(v) + np.sign(v), np.round(v))


def _identity(ops):
    import openvino.opset16 as o16

    m, x = param(ops, [2, 3], np.bool_, "m"), param(ops, [None, 4], np.int8, "x")
    return [(o16.identity(m), "y"), (o16.identity(o16.identity(x)), "z")], [m, x]


def _floor_divide(ops):
    a, b = param(ops, [2, 3], np.int32, "a"), param(ops, [2, 3], np.int32, "b")
    return [(ops.floor(ops.divide(a, b)), "y")], [a, b]  # Divide: m_pythondiv=true (the default)


def _signed_pairs(rng):
    b = rng.integers(1, 9, size=(2, 3)) * rng.choice([-1, 1], size=(2, 3))
    return {"a": rng.integers(-20, 21, size=(2, 3)).astype(np.int32), "b": b.astype(np.int32)}


CASES = [
    Case("exp/f32", ("Exp", "opset1"), ov_build(one_input(lambda o, x: o.exp(x))), exact=False, inputs=uniform(-5, 5)),
    Case("sqrt/f32", ("Sqrt", "opset1"), ov_build(one_input(lambda o, x: o.sqrt(x))), exact=False,
         inputs=uniform(0, 9)),
    Case("erf/f32", ("Erf", "opset1"), ov_build(unary("erf")), exact=False, inputs=uniform(-3, 3)),
    Case("log/f32", ("Log", "opset1"), ov_build(unary("log")), exact=False, inputs=uniform(0.01, 20),
         expect={"y": lambda f: np.log(f["x"])}),
    Case("floor/f32", ("Floor", "opset1"), ov_build(unary("floor")), inputs=uniform(-5, 5),
         expect={"y": lambda f: np.floor(f["x"])}),
    Case("floor/i32-of-divide", ("Floor", "opset1"), ov_build(_floor_divide), inputs=_signed_pairs,
         expect={"y": lambda f: f["a"] // f["b"]},
         source="torch's a // b on integers, which OpenVINO's PyTorch frontend writes as "
                "Floor(Divide-1 m_pythondiv=true): toward -inf",
         openvino_deviates="OpenVINO 2026.4's CPU plugin truncates the integer Divide under the Floor "
                           "(measured: 4 // -6 -> 0, torch -1)"),
    Case("ceiling/f32", ("Ceiling", "opset1"), ov_build(unary("ceiling")), inputs=uniform(-5, 5),
         expect={"y": lambda f: np.ceil(f["x"])}),
    Case("negative/i32", ("Negative", "opset1"), ov_build(unary("negative", dtype=np.int32)),
         expect={"y": lambda f: -f["x"]}),
    Case("abs/f32", ("Abs", "opset1"), ov_build(unary("abs")), expect={"y": lambda f: np.abs(f["x"])}),
    Case("sign/f32-zeros-nan", ("Sign", "opset1"), ov_build(unary("sign", shape=(6,))),
         inputs={"x": np.array([-3.5, -0.0, 0.0, 2.0, np.nan, -np.inf], np.float32)},
         expect={"y": np.array([-1, 0, 0, 1, np.nan, -1], np.float32)}),
    Case("sign/i32", ("Sign", "opset1"), ov_build(unary("sign", shape=(2, 3), dtype=np.int32)),
         expect={"y": lambda f: np.sign(f["x"])}),
    Case("round/half-to-even-ties", ("Round", "opset5"), ov_build(unary("round", "half_to_even", shape=(10,))),
         inputs={"x": ROUND_TIES}, expect={"y": lambda f: np.round(f["x"])}),
    Case("round/half-away-from-zero-ties", ("Round", "opset5"),
         ov_build(unary("round", "half_away_from_zero", shape=(10,))),
         inputs={"x": ROUND_TIES}, expect={"y": lambda f: _half_away(f["x"])}),
    Case("round/half-away-from-zero-edges", ("Round", "opset5"),
         ov_build(unary("round", "half_away_from_zero", shape=(3,))),
         inputs={"x": np.array([0.49999997, 8388609, -16777215], np.float32)},
         expect={"y": np.array([0, 8388609, -16777215], np.float32)},
         openvino_deviates="OpenVINO's CPU plugin computes sign(x) * floor(|x| + 0.5) in f32: "
                           "0.49999997 -> 1 and odd integers in [2^23, 2^24) -> one off"),
    Case("identity/bool-and-i8", ("Identity", "opset16"), ov_build(_identity),
         inputs=lambda rng: {"m": rng.integers(0, 2, (2, 3)).astype(bool)},
         expect={"y": lambda f: f["m"], "z": lambda f: f["x"]}),
]

