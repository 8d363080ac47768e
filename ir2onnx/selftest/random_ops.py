"""Selftest cases of RandomUniform-8 and Multinomial-13. Random values cannot match across
generators, so the cases use distributions with one possible value (integers in [min, min + 1),
all the probability on one class); tests/test_random_ops.py checks shape, type and range of
real draws."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _uniform(ops):
    import openvino.opset8 as o8

    shape = param(ops, [2], np.int64, "shape")
    low = param(ops, [], np.int32, "low")
    node = o8.random_uniform(shape, low, ops.add(low, const(ops, 1, np.int32)), "i32", 0, 0)
    return [(node, "y")], [shape, low]


def _multinomial(ops):
    import openvino.opset13 as o13

    probs = param(ops, [None, 4], np.float32, "probs")
    return [(o13.multinomial(probs, const(ops, [5]), "i64", True, False, 3, 7), "y")], [probs]


CASES = [
    Case("randomuniform8/one-value-i32", ("RandomUniform", "opset8"), ov_build(_uniform),
         inputs={"shape": np.array([3, 4], np.int64), "low": np.array(-7, np.int32)},
         expect={"y": np.full((3, 4), -7, np.int32)},
         source="RandomUniform-8: integers in [min, max); max = min + 1 leaves one value"),
    Case("multinomial13/one-class", ("Multinomial", "opset13"), ov_build(_multinomial), shapes={"probs": (2, 4)},
         inputs={"probs": np.array([[0, 0, 2, 0], [0, 0, 0, 1]], np.float32)},
         expect={"y": np.array([[2] * 5, [3] * 5], np.int64)},
         source="Multinomial-13: a class with all the probability is drawn every time"),
]
