"""Selftest cases of StridedSlice, Slice-8 and SliceScatter-15 (version 1 unless -N says otherwise). All are compared
bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, iota, param


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


def _slice_scatter(start, stop, step, axes, data_shape, upd_shape):
    def make(ops):
        x, u = param(ops, data_shape), param(ops, upd_shape, name="u")
        args = [const(ops, v, np.int32) for v in (start, stop, step)] + ([const(ops, axes, np.int32)] if axes else [])
        return [(ops.slice_scatter(x, u, *args), "y")], [x, u]
    return make


def _ss_case(name, start, stop, step, axes, data, upd, want, example):
    data, upd = np.array(data, np.float32), np.array(upd, np.float32)
    return Case(f"slicescatter/{name}", ("SliceScatter", "opset15"),
                ov_build(_slice_scatter(start, stop, step, axes, list(data.shape), list(upd.shape))),
                inputs={"x": data, "u": upd}, expect={"y": np.array(want, np.float32)},
                source=f"SliceScatter-15 example {example}")


CASES = [
    _ss_case("axis0", [0], [1], [1], [0], iota((2, 5), start=0), [[10, 20, 30, 40, 50]],
             [[10, 20, 30, 40, 50], [5, 6, 7, 8, 9]], 1),
    _ss_case("clamped-step2", [-25], [25], [2], [1], iota((2, 5), start=0), [[10, 20, 30], [40, 50, 60]],
             [[10, 1, 20, 3, 30], [40, 6, 50, 8, 60]], 2),
    _ss_case("two-axes-default", [0, 1], [3, 5], [2, 2], None, iota((3, 5), start=0), [[50, 60], [70, 80]],
             [[0, 50, 2, 60, 4], [5, 6, 7, 8, 9], [10, 70, 12, 80, 14]], 3),
    Case("stridedslice/ellipsis-shrink", ("StridedSlice", "opset1"), ov_build(_strided),
         expect={"y": lambda f: f["x"][:, ..., -1]}, source="StridedSlice-1: ellipsis and shrink_axis masks"),
    Case("slice8/negative-step-axes", ("Slice", "opset8"), ov_build(_slice),
         expect={"y": lambda f: f["x"][-1:0:-1, :, 1:100:2]}),
]
