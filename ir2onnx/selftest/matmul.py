"""Selftest cases of MatMul and Einsum-7 (version 1 unless -N says otherwise). Compared with the
oracle within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _matmul(a_shape, b_shape, ta, tb):
    def make(ops):
        a, b = param(ops, a_shape, name="a"), param(ops, b_shape, name="b")
        return [(ops.matmul(a, b, ta, tb), "y")], [a, b]
    return make


def _einsum(equation, shapes):
    def make(ops):
        ps = [param(ops, list(s), np.float32, f"x{i}") for i, s in enumerate(shapes)]
        return [(ops.einsum(ps, equation), "y")], ps
    return make


def _einsum_expect(equation, count):
    return lambda f: np.einsum(equation, *[f[f"x{i}"].astype(np.float64) for i in range(count)])


CASES = [
    Case("matmul/transpose-b", ("MatMul", "opset1"), ov_build(_matmul([2, 1, 2, 3], [3, 5, 3], False, True)),
         exact=False, expect={"y": lambda f: f["a"] @ np.swapaxes(f["b"], -1, -2)}),
    Case("matmul/1d-ignores-transpose", ("MatMul", "opset1"), ov_build(_matmul([3], [3, 4], True, False)),
         exact=False, expect={"y": lambda f: f["a"] @ f["b"]},
         source="MatMul-1: a 1-D operand is unsqueezed whatever transpose_a says (measured)"),
    Case("einsum/matmul", ("Einsum", "opset7"), ov_build(_einsum("ij,jk->ik", [(2, 3), (3, 4)])), exact=False,
         expect={"y": _einsum_expect("ij,jk->ik", 2)}),
    Case("einsum/implicit-ellipsis-broadcast", ("Einsum", "opset7"),
         ov_build(_einsum("...ij,...jk", [(2, 2, 3), (3, 4)])), exact=False,
         expect={"y": _einsum_expect("...ij,...jk", 2)}),
    Case("einsum/diagonal", ("Einsum", "opset7"), ov_build(_einsum("iij->ij", [(2, 2, 3)])), exact=False,
         expect={"y": _einsum_expect("iij->ij", 1)}),
]
