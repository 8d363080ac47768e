"""Selftest cases of Parameter, Const and Result (version 1 unless -N says otherwise). All are
compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, ir_build, ov_build, param


def _passthrough(ops):
    x = param(ops, [2, 3], np.float32)
    return [(x, "x")], [x]  # an input that is also an output: the output takes the Result's name


def _one_tensor_two_results(ops):
    x = param(ops, [3], np.int32)
    y = ops.convert(x, "f32")
    return [(y, "y"), (y, "y")], [x]


def _const_only(w):
    c = w.const(np.array([[1.5, -2.0], [0.0, 3.25]], np.float32), name="table")
    w.result(c, name="table_out")


def _two_outputs(ops):
    x = param(ops, [2, 2], np.int32)
    return [(ops.convert(x, "f32"), "b_first"), (ops.convert(x, "i64"), "a_second")], [x]


CASES = [
    Case("core/passthrough", ("Parameter", "opset1"), ov_build(_passthrough)),
    Case("core/const-output", ("Const", "opset1"), ir_build(_const_only),
         expect={"table_out": np.array([[1.5, -2.0], [0.0, 3.25]], np.float32)}),
    Case("core/two-outputs-by-name", ("Result", "opset1"), ov_build(_two_outputs)),
    Case("core/one-tensor-two-results", ("Result", "opset1"), ov_build(_one_tensor_two_results)),
]
