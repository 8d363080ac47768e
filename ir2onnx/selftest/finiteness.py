"""Selftest cases of IsNaN-10, IsInf-10 (every detect_negative/detect_positive pair) and
IsFinite-10, on NaN, both infinities, zeros, subnormals and ordinary values. All are compared bit
for bit."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

SPECIAL = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -3e38, 1e-45], np.float32)
SPECIAL16 = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -65504, 6e-8], np.float16)


def _make(fn, *args, dtype=np.float32):
    def make(ops):
        x = param(ops, [None], dtype)
        return [(getattr(ops, fn)(x, *args), "y")], [x]
    return make


def _inf(negative, positive):
    attrs = {"detect_negative": negative, "detect_positive": positive}
    want = lambda f: (np.isneginf(f["x"]) & negative) | (np.isposinf(f["x"]) & positive)  # noqa: E731
    return Case(f"isinf/neg-{int(negative)}-pos-{int(positive)}", ("IsInf", "opset10"),
                ov_build(_make("is_inf", attrs)), inputs={"x": SPECIAL}, expect={"y": want})


CASES = [
    Case("isnan/f32", ("IsNaN", "opset10"), ov_build(_make("is_nan")), inputs={"x": SPECIAL},
         expect={"y": lambda f: np.isnan(f["x"])}),
    Case("isnan/f16", ("IsNaN", "opset10"), ov_build(_make("is_nan", dtype=np.float16)),
         inputs={"x": SPECIAL16}, expect={"y": lambda f: np.isnan(f["x"])}),
    *[_inf(n, p) for n in (True, False) for p in (True, False)],
    Case("isfinite/f32", ("IsFinite", "opset10"), ov_build(_make("is_finite")), inputs={"x": SPECIAL[:7]},
         expect={"y": lambda f: np.isfinite(f["x"])}),
    Case("isfinite/f32-subnormals", ("IsFinite", "opset10"), ov_build(_make("is_finite")),
         inputs={"x": np.array([1e-45, -1e-40, 1.1e-38, 1.2e-38], np.float32)},
         expect={"y": np.array([True, True, True, True])},
         openvino_deviates="OpenVINO 2026.4's CPU plugin calls subnormal values not finite"),
]
