"""Selftest cases of FakeQuantize (version 1 unless -N says otherwise). Compared with the oracle
within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

FQ = ("FakeQuantize", "opset1")


def _c(ops, v):
    return ops.constant(np.asarray(v, np.float32))


def _per_tensor(ops):
    x = param(ops, [1, 3, 4, 4])
    return [(ops.fake_quantize(x, _c(ops, 0.0), _c(ops, 4.0), _c(ops, 0.0), _c(ops, 40.0), 5), "y")], [x]


def _per_channel(ops):
    x = param(ops, [2, 3, 2, 5])
    il, ih = np.array([-1.0, -0.7, 0.0]).reshape(1, 3, 1, 1), np.array([1.0, 1.3, 2.55]).reshape(1, 3, 1, 1)
    return [(ops.fake_quantize(x, _c(ops, il), _c(ops, ih), _c(ops, il), _c(ops, ih), 16), "y")], [x]


def _nncf_conv(ops):
    x = param(ops, [1, 3, 6, 6])
    fq_x = ops.fake_quantize(x, _c(ops, 0.0), _c(ops, 2.55), _c(ops, 0.0), _c(ops, 2.55), 256)
    w = np.random.default_rng(7).standard_normal((2, 3, 3, 3))
    lim = np.abs(w).max(axis=(1, 2, 3), keepdims=True)
    fq_w = ops.fake_quantize(_c(ops, w), _c(ops, -lim), _c(ops, lim), _c(ops, -lim), _c(ops, lim), 255)
    return [(ops.convolution(fq_x, fq_w, [1, 1], [0, 0], [0, 0], [1, 1]), "y")], [x]


def _reversed_range(ops):
    x = param(ops, [8])
    return [(ops.fake_quantize(x, _c(ops, 1.0), _c(ops, -1.0), _c(ops, -2.0), _c(ops, 2.0), 16), "y")], [x]


def _fake_convert(dst, shift):
    def build(ops):
        x = param(ops, [2, 6])
        scale = _c(ops, np.array([[0.5], [3.7]]))
        return [(ops.fake_convert(x, scale, _c(ops, [[0.25], [-1.5]]) if shift else None, dst), "y")], [x]
    return build


FC = ("FakeConvert", "opset13")
_FC_X = np.array([[0.1, -2.3, 600.0, -1e4, 7.77, 0.0], [1.3, 1e5, -0.011, 123.0, np.nan, -np.inf]], np.float32)


CASES = [
    Case("fakeconvert/f8e4m3-scale", FC, ov_build(_fake_convert("f8e4m3", False)), exact=False, min_opset=19,
         inputs={"x": _FC_X}, source="FakeConvert-13: f8e4m3 saturates (±448; NaN -> -448), per-row scales"),
    Case("fakeconvert/f8e5m2-scale-shift", FC, ov_build(_fake_convert("f8e5m2", True)), exact=False, min_opset=19,
         inputs={"x": _FC_X}),
    Case("fakequantize/per-tensor-ties", FQ, ov_build(_per_tensor), exact=False,
         inputs={"x": (np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4) - 8) / 8},
         expect={"y": lambda f: np.clip(np.rint(f["x"]), 0, 4) * 10}),
    Case("fakequantize/per-channel-16-levels", FQ, ov_build(_per_channel), exact=False,
         inputs=lambda rng: {"x": rng.uniform(-2, 3, (2, 3, 2, 5)).astype(np.float32)}),
    Case("fakequantize/nncf-convolution", FQ, ov_build(_nncf_conv), exact=False,
         inputs=lambda rng: {"x": rng.uniform(-0.5, 3, (1, 3, 6, 6)).astype(np.float32)}, expect={"y": (1, 2, 4, 4)}),
    Case("fakequantize/reversed-range", FQ, ov_build(_reversed_range), exact=False,
         inputs={"x": np.array([-3, -1, -0.5, 0, 0.25, 0.5, 1, 2], np.float32)},
         expect={"y": np.array([2, 2, *(np.array([11, 8, 6, 4]) / 15 * 4 - 2), -2, -2], np.float32)},
         source="ONNX QuantizeLinear with a negative scale, written by OpenVINO's ONNX frontend as "
                "il > ih: ol on il's side, oh on ih's side (onnxruntime on the source model)",
         openvino_deviates="OpenVINO 2026.4's CPU plugin follows the spec text's ends for 1-D data when "
                           "il > ih (ol at or below min(il, ih), oh above max(il, ih): swapped), and "
                           "gives ol everywhere for 4-D data"),
]
