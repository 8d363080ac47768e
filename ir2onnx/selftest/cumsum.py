"""Selftest cases of CumSum-3. All are compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _cumsum(exclusive, reverse):
    def make(ops):
        x = param(ops, [2, 4], np.int32)
        return [(ops.cumsum(x, const(ops, 1), exclusive, reverse), "y")], [x]
    return make


CASES = [
    Case("cumsum/exclusive-reverse", ("CumSum", "opset3"), ov_build(_cumsum(True, True)),
         inputs={"x": np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int32)},
         expect={"y": np.array([[9, 7, 4, 0], [21, 15, 8, 0]], np.int32)}),
    Case("cumsum/inclusive", ("CumSum", "opset3"), ov_build(_cumsum(False, False)),
         expect={"y": lambda f: np.cumsum(f["x"], 1, dtype=np.int32)}),
]
