"""Selftest cases of ConvertPromoteTypes-14: the spec's promotion rules (both outputs)."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

CPT = ("ConvertPromoteTypes", "opset14")


def _promote(t0, s0, t1, s1, unsafe=False, pytorch=False, u64="f32"):
    def make(ops):
        import openvino.opset14 as o14

        a, b = param(ops, s0, t0, "a"), param(ops, s1, t1, "b")
        node = o14.convert_promote_types(a, b, unsafe, pytorch, u64)
        return [(node.output(0), "y0"), (node.output(1), "y1")], [a, b]
    return make


CASES = [
    Case("convertpromotetypes14/u8-i8-to-i16", CPT, ov_build(_promote(np.uint8, [3], np.int8, [None, 3], True)),
         inputs={"a": np.array([0, 200, 255], np.uint8), "b": np.array([[-128, 5, 127]], np.int8)},
         expect={"y0": np.array([0, 200, 255], np.int16), "y1": np.array([[-128, 5, 127]], np.int16)},
         source="ConvertPromoteTypes-14: signed with unsigned -> the signed type of twice the unsigned bits (promote_unsafe)"),
    Case("convertpromotetypes14/i32-f64", CPT, ov_build(_promote(np.int32, [2, 2], np.float64, [2])),
         expect={"y0": (2, 2), "y1": (2,)}, source="integer with float -> the float (safe: >= twice the bits)"),
    Case("convertpromotetypes14/pytorch-scalar", CPT, ov_build(_promote(np.float32, [], np.float16, [4], True, True)),
         expect={"y0": (), "y1": (4,)}, exact=False, source="pytorch_scalar_promotion: the tensor's f16 wins"),
    Case("convertpromotetypes14/u64-unsafe-target", CPT, ov_build(_promote(np.uint64, [3], np.int8, [3], True, False, "i64")),
         inputs={"a": np.array([1, 70000, 7], np.uint64), "b": np.array([-1, 0, 1], np.int8)},
         expect={"y0": np.array([1, 70000, 7], np.int64), "y1": np.array([-1, 0, 1], np.int64)}),
]
