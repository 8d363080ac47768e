"""Selftest cases of Convert and ConvertLike (version 1 unless -N says otherwise). All are compared
bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ir_build, ov_build, param


def _convert(src, dst, shape=(2, 3)):
    def make(ops):
        x = param(ops, list(shape), src)
        return [(ops.convert(x, dst), "y")], [x]
    return make


def _const_convert(w):
    c = w.const(np.linspace(-2, 2, 6000).astype(np.float16).reshape(2, 3000), name="weights")
    y = w.layer("Convert", "opset1", [c], {"destination_type": "f32"}, [("f32", (2, 3000))], out_names=["y"])[0]
    w.result(y)


def _in_range(dtype, low=-100, high=100):
    return lambda rng: {"x": rng.uniform(low, high, (2, 3)).astype(dtype)}


def _convert_like(src, dst):
    def make(ops):
        x = param(ops, [2, 3], src)
        return [(ops.convert_like(x, const(ops, [0], dst)), "y")], [x]
    return make


CASES = [
    Case("convert/f32-i32", ("Convert", "opset1"), ov_build(_convert(np.float32, "i32")),
         inputs=_in_range(np.float32)),
    Case("convert/f32-u8", ("Convert", "opset1"), ov_build(_convert(np.float32, "u8")),
         inputs=_in_range(np.float32, 0, 255)),
    Case("convert/f32-f16", ("Convert", "opset1"), ov_build(_convert(np.float32, "f16"))),
    Case("convert/f16-f32", ("Convert", "opset1"), ov_build(_convert(np.float16, "f32"))),
    Case("convert/f64-f32", ("Convert", "opset1"), ov_build(_convert(np.float64, "f32"))),
    Case("convert/i32-f32", ("Convert", "opset1"), ov_build(_convert(np.int32, "f32"))),
    Case("convert/i64-i8", ("Convert", "opset1"), ov_build(_convert(np.int64, "i8"))),
    Case("convert/u8-i32", ("Convert", "opset1"), ov_build(_convert(np.uint8, "i32"))),
    Case("convert/f32-boolean", ("Convert", "opset1"), ov_build(_convert(np.float32, "boolean")),
         inputs=lambda rng: {"x": np.array([[0.0, -0.0, 0.5], [-2.0, 0.0, 1e-30]], np.float32)},
         expect={"y": np.array([[False, False, True], [True, False, True]])}),
    Case("convert/boolean-i32", ("Convert", "opset1"), ov_build(_convert(np.bool_, "i32"))),
    Case("convert/f16-const-weights", ("Convert", "opset1"), ir_build(_const_convert)),
    Case("convertlike/f32-i32", ("ConvertLike", "opset1"), ov_build(_convert_like(np.float32, np.int32)),
         inputs=lambda rng: {"x": rng.uniform(-100, 100, (2, 3)).astype(np.float32)},
         expect={"y": lambda f: np.trunc(f["x"]).astype(np.int32)}),
    Case("convertlike/i64-f16", ("ConvertLike", "opset1"), ov_build(_convert_like(np.int64, np.float16))),
]
