"""Selftest cases of Add, Subtract, Multiply, Divide, Maximum, Minimum, FloorMod, Mod,
SquaredDifference and Power (version 1 unless -N says otherwise). Exact cases (data movement,
integer and boolean results) are compared bit for bit, the others within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, binary, ov_build, ov_compressed, param


def _nonzero_divisor(dtype, shape=(2, 3)):
    def feeds(rng):
        b = rng.integers(1, 9, size=shape) * rng.choice([-1, 1], size=shape)
        return {"a": rng.integers(-20, 21, size=shape).astype(dtype), "b": b.astype(dtype)}
    return feeds


def _compressed_multiply(ops):
    x = param(ops, [1, 5000], np.float32)
    return [(ops.multiply(x, ops.constant(np.linspace(-4, 4, 5000, dtype=np.float32))), "y")], [x]


def _mod_inputs(dtype):
    def feeds(rng):
        a = rng.integers(-20, 20, (2, 3)).astype(dtype)
        return {"a": a, "b": np.array([-3, 2, 5], dtype)}
    return feeds


CASES = [
    # element-wise (numpy broadcasting unless said otherwise)
    Case("add/broadcast", ("Add", "opset1"), ov_build(binary("add", [2, 3, 4], [3, 1])), exact=False,
         expect={"y": lambda f: f["a"] + f["b"]}),
    Case("add/i32-no-broadcast", ("Add", "opset1"), ov_build(binary("add", [2, 3], [2, 3], np.int32,
                                                                      auto_broadcast="none")),
         expect={"y": lambda f: f["a"] + f["b"]}),
    Case("add/f16", ("Add", "opset1"), ov_build(binary("add", [1, 3, 2, 2], [1, 3, 1, 1], np.float16)), exact=False),
    Case("subtract/broadcast-i64", ("Subtract", "opset1"), ov_build(binary("subtract", [3, 1], [4], np.int64)),
         expect={"y": lambda f: f["a"] - f["b"]}),
    Case("multiply/broadcast", ("Multiply", "opset1"), ov_build(binary("multiply", [2, 1, 3], [4, 1])),
         exact=False, expect={"y": lambda f: f["a"] * f["b"]}),
    Case("multiply/f16-compressed-const", ("Multiply", "opset1"), ov_compressed(_compressed_multiply), exact=False),
    Case("divide/f32", ("Divide", "opset1"), ov_build(binary("divide", [2, 3], [2, 3])), exact=False,
         inputs=_nonzero_divisor(np.float32)),
    Case("divide/i32-truncates", ("Divide", "opset1"), ov_build(binary("divide", [2, 3], [2, 3], np.int32)),
         inputs=_nonzero_divisor(np.int32), expect={"y": lambda f: (np.abs(f["a"]) // np.abs(f["b"])) * np.sign(f["a"] * f["b"])},
         source="ONNX Div and torch.div(rounding_mode='trunc') on integers, which OpenVINO's frontends write "
                "as Divide-1 m_pythondiv=true: toward zero"),
    Case("maximum/broadcast", ("Maximum", "opset1"), ov_build(binary("maximum", [2, 3], [3])),
         expect={"y": lambda f: np.maximum(f["a"], f["b"])}),
    Case("minimum/i32", ("Minimum", "opset1"), ov_build(binary("minimum", [2, 3], [2, 1], np.int32)),
         expect={"y": lambda f: np.minimum(f["a"], f["b"])}),
    Case("power/broadcast", ("Power", "opset1"), ov_build(binary("power", [2, 3], [3])), exact=False,
         inputs=lambda rng: {"a": rng.uniform(0.1, 3, (2, 3)).astype(np.float32),
                             "b": rng.uniform(-2, 2, (3,)).astype(np.float32)},
         expect={"y": lambda f: f["a"] ** f["b"]}),
    Case("power/i8-wraps", ("Power", "opset1"), ov_build(binary("power", [2, 4], [4], np.int8)),
         inputs={"a": np.array([[2, 3, 0, -1], [-3, 1, 5, 2]], np.int8), "b": np.array([7, 5, -1, -3], np.int8)},
         expect={"y": np.array([[-128, -13, 0, -1], [117, 1, 0, 0]], np.int8)},
         source="PyTorch's integer pow (wraps; 1 / a**|b| truncated toward zero)",
         openvino_deviates="OpenVINO 2026.4's CPU plugin computes integer Power in f32 and saturates i8 "
                           "(2 ** 7 -> 127) and turns 0 ** -1 into the type's minimum"),
    Case("power/u16-run-time", ("Power", "opset1"), ov_build(binary("power", [3], [3], np.uint16)),
         inputs={"a": np.array([3, 2, 7], np.uint16), "b": np.array([10, 15, 5], np.uint16)},
         expect={"y": np.array([59049, 32768, 16807], np.uint16)}),
    Case("floormod/i32-signs", ("FloorMod", "opset1"), ov_build(binary("floor_mod", [2, 3], [3], np.int32)),
         inputs=_mod_inputs(np.int32), expect={"y": lambda f: np.mod(f["a"], f["b"])}),
    Case("floormod/f32", ("FloorMod", "opset1"), ov_build(binary("floor_mod", [2, 3], [3])), exact=False,
         inputs=lambda rng: {"a": rng.uniform(-9, 9, (2, 3)).astype(np.float32),
                             "b": np.array([-2.5, 1.5, 4], np.float32)}),
    Case("mod/i32-signs", ("Mod", "opset1"), ov_build(binary("mod", [2, 3], [3], np.int32)),
         inputs=_mod_inputs(np.int32), expect={"y": lambda f: np.fmod(f["a"], f["b"])}),
    Case("squareddifference/broadcast", ("SquaredDifference", "opset1"),
         ov_build(binary("squared_difference", [2, 3], [3])), exact=False,
         expect={"y": lambda f: (f["a"] - f["b"]) ** 2}),
]
