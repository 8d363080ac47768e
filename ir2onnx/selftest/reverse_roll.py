"""Selftest cases of Reverse, Roll-7 and ReverseSequence (version 1 unless -N says otherwise). All are compared bit for
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


def _reverse_sequence(shape, batch_axis, seq_axis, dtype=np.float32):
    def make(ops):
        x = param(ops, list(shape), dtype)
        lens = param(ops, [shape[batch_axis]], np.int32, "lens")
        return [(ops.reverse_sequence(x, lens, batch_axis, seq_axis), "y")], [x, lens]
    return make


def _rs_expect(batch_axis, seq_axis):
    def expect(feeds):
        x = np.moveaxis(feeds["x"], (batch_axis, seq_axis), (0, 1)).copy()
        for b, n in enumerate(feeds["lens"]):
            x[b, :max(int(n), 1)] = x[b, :max(int(n), 1)][::-1]
        return np.moveaxis(x, (0, 1), (batch_axis, seq_axis))
    return expect


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
    Case("reverse_sequence/batch0-seq1", ("ReverseSequence", "opset1"), ov_build(_reverse_sequence((4, 5, 2), 0, 1)),
         inputs={"x": iota((4, 5, 2)), "lens": np.array([5, 0, 1, 3], np.int32)}, expect={"y": _rs_expect(0, 1)},
         source="ReverseSequence-1: lengths 5, 0 (reverses nothing), 1, 3"),
    Case("reverse_sequence/batch2-seq0-i8", ("ReverseSequence", "opset1"),
         ov_build(_reverse_sequence((4, 2, 3), 2, 0, np.int8)),
         inputs={"x": iota((4, 2, 3), np.int8), "lens": np.array([2, 4, 3], np.int32)}, expect={"y": _rs_expect(2, 0)}),
]
