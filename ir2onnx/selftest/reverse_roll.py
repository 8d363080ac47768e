"""Selftest cases of Reverse and Roll-7 (version 1 unless -N says otherwise). All are compared bit for
bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, iota, ov_build, param


def _reverse(mode, axes):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        x = param(ops, [2, 3, 4], np.float16)
        dtype = np.bool_ if mode == "mask" else np.int64
        node = NodeFactory("opset1").create("Reverse", [x.output(0), const(ops, axes, dtype).output(0)], {"mode": mode})
        return [(node, "y")], [x]
    return make


def _roll(shift, axes, shape=(4, 3)):
    def make(ops):
        import openvino.opset7 as o7

        x = param(ops, [None, shape[1]], np.int32)
        return [(o7.roll(x, const(ops, shift), const(ops, axes)), "y")], [x]
    return make


_ROLL_X = {"x": iota((4, 3), np.int32)}


CASES = [
    Case("reverse/index-f16", ("Reverse", "opset1"), ov_build(_reverse("index", [0, -1]))),
    Case("reverse/mask-f16", ("Reverse", "opset1"), ov_build(_reverse("mask", [False, True, False]))),
    Case("roll/spec-example-2", ("Roll", "opset7"), ov_build(_roll([-1, 2], [0, 1])), inputs=_ROLL_X,
         shapes={"x": (4, 3)}, expect={"y": np.array([[5, 6, 4], [8, 9, 7], [11, 12, 10], [2, 3, 1]], np.int32)},
         source="Roll-7 example 2"),
    Case("roll/spec-example-3-repeated-axis", ("Roll", "opset7"), ov_build(_roll([1, 2, 1], [0, 1, 0])), inputs=_ROLL_X,
         shapes={"x": (4, 3)}, expect={"y": np.array([[8, 9, 7], [11, 12, 10], [2, 3, 1], [5, 6, 4]], np.int32)},
         source="Roll-7 example 3"),
]
