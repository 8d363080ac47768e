"""Selftest cases of Split and VariadicSplit (version 1 unless -N says otherwise). All are compared
bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _split(ops):
    x = param(ops, [2, 6, 3])
    node = ops.split(x, const(ops, 1), 3)
    return [(node.output(i), f"y{i}") for i in range(3)], [x]


def _variadic_split(ops):
    x = param(ops, [2, None], np.int32)
    node = ops.variadic_split(x, const(ops, -1), const(ops, [1, -1, 2]))
    return [(node.output(i), f"y{i}") for i in range(3)], [x]


def _variadic_split_run_time(ops):
    x, n = param(ops, [2, None], np.int32), param(ops, [3], np.int64, "n")
    node = ops.variadic_split(x, const(ops, 1), n)
    return [(node.output(i), f"y{i}") for i in range(3)], [x, n]


SPLIT_X = {"x": np.arange(36, dtype=np.float32).reshape(2, 6, 3)}


CASES = [
    Case("split/three-parts", ("Split", "opset1"), ov_build(_split), inputs=SPLIT_X,
         expect={f"y{i}": SPLIT_X["x"][:, 2 * i:2 * i + 2] for i in range(3)}),
    Case("variadicsplit/minus-one-dynamic", ("VariadicSplit", "opset1"), ov_build(_variadic_split),
         inputs={"x": np.arange(14, dtype=np.int32).reshape(2, 7)},
         expect={"y0": lambda f: f["x"][:, :1], "y1": lambda f: f["x"][:, 1:5], "y2": lambda f: f["x"][:, 5:]}),
    Case("variadicsplit/run-time-lengths", ("VariadicSplit", "opset1"), ov_build(_variadic_split_run_time),
         inputs={"x": np.arange(18, dtype=np.int32).reshape(2, 9), "n": np.array([2, -1, 3])},
         expect={"y0": lambda f: f["x"][:, :2], "y1": lambda f: f["x"][:, 2:6], "y2": lambda f: f["x"][:, 6:]},
         source="split_lengths fed at run time (shufflenet's chunk), -1 resolved in the graph"),
]
