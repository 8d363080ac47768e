"""Selftest cases of StridedSlice and Slice-8 (version 1 unless -N says otherwise). All are compared
bit for bit with the oracle."""
from __future__ import annotations

from .cases import Case, const, ov_build, param


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


CASES = [
    Case("stridedslice/ellipsis-shrink", ("StridedSlice", "opset1"), ov_build(_strided),
         expect={"y": lambda f: f["x"][:, ..., -1]}, source="StridedSlice-1: ellipsis and shrink_axis masks"),
    Case("slice8/negative-step-axes", ("Slice", "opset8"), ov_build(_slice),
         expect={"y": lambda f: f["x"][-1:0:-1, :, 1:100:2]}),
]
