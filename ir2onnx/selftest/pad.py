"""Selftest cases of Pad-1/-12. All are compared bit for bit with the oracle."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param


def _pad(opset, mode, begins, ends, shape=(3, 4)):
    def make(ops):
        x = param(ops, list(shape))
        o = importlib.import_module(f"openvino.{opset}")
        return [(o.pad(x, const(ops, begins), const(ops, ends), mode), "y")], [x]
    return make


def _pad_run_time(ops):
    import openvino.opset12 as o12

    x, pb, pe = param(ops, [None, 4]), param(ops, [2], np.int64, "pb"), param(ops, [2], np.int64, "pe")
    return [(o12.pad(x, pb, pe, "reflect"), "y")], [x, pb, pe]


PAD_X = {"x": np.arange(1, 13, dtype=np.float32).reshape(3, 4)}


CASES = [
    Case("pad1/reflect", ("Pad", "opset1"), ov_build(_pad("opset1", "reflect", [0, 1], [2, 3])), inputs=PAD_X,
         expect={"y": lambda f: np.pad(f["x"], [(0, 2), (1, 3)], mode="reflect")},
         source="Pad-12: positive pads example (reflect)"),
    Case("pad12/symmetric-mixed", ("Pad", "opset12"), ov_build(_pad("opset15", "symmetric", [2, -1], [-1, 3])),
         inputs=PAD_X, expect={"y": np.array([[6, 7, 8, 8, 7, 6], [2, 3, 4, 4, 3, 2], [2, 3, 4, 4, 3, 2],
                                              [6, 7, 8, 8, 7, 6]], np.float32)},
         source="Pad-12: mixed pads example (symmetric)"),
    Case("pad12/edge-negative", ("Pad", "opset12"), ov_build(_pad("opset15", "edge", [-1, 2], [1, -2])),
         inputs=PAD_X, expect={"y": lambda f: np.pad(f["x"], [(0, 1), (2, 0)], mode="edge")[1:, :-2]}),
    Case("pad12/run-time-pads", ("Pad", "opset12"), ov_build(_pad_run_time),
         inputs={**PAD_X, "pb": np.array([2, -1]), "pe": np.array([-1, 3])},
         expect={"y": lambda f: np.pad(f["x"], [(2, 0), (0, 3)], mode="reflect")[:-1, 1:]},
         source="pads fed at run time (swin's window padding); negative ones crop"),
]
