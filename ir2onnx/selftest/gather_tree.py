"""Selftest cases of GatherTree-1: the spec's pseudocode worked by hand on two batches (the second
of max_seq_len 2), beams that meet end_token and one that does not."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

_STEPS = np.array([[[2, 2, 3], [5, 6, 7]], [[1, 4, 5], [3, 1, 1]], [[3, 1, 8], [9, 10, 11]]], np.int32)  # [T=3, B=2, W=3]
_PARENTS = np.array([[[0, 0, 0], [0, 1, 2]], [[1, 2, 0], [2, 1, 1]], [[2, 0, 1], [1, 0, 2]]], np.int32)


def _gather_tree(ops):
    import openvino.opset1 as o1

    x, p = param(ops, [None, 2, 3], np.int32), param(ops, [None, 2, 3], np.int32, name="p")
    return [(o1.gather_tree(x, p, const(ops, [3, 2], np.int32), const(ops, 1, np.int32)), "y")], [x, p]


CASES = [
    Case("gathertree/two-batches", ("GatherTree", "opset1"), ov_build(_gather_tree),
         inputs={"x": _STEPS, "p": _PARENTS},
         expect={"y": np.array([[[2, 2, 3], [7, 6, 6]], [[5, 1, 4], [3, 1, 1]], [[3, 1, 8], [1, 1, 1]]], np.int32)},
         source="GatherTree-1 pseudocode (end_token 1; batch 1 of length 2)"),
]
