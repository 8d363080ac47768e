"""Selftest cases of Equal, NotEqual, Less, LessEqual, Greater and GreaterEqual (version 1 unless -N
says otherwise). All are compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, binary, ov_build


def _small_ints(names_shapes, dtype=np.float32):
    return lambda rng: {n: rng.integers(-2, 3, s).astype(dtype) for n, s in names_shapes}


CMP = [("equal", "Equal"), ("not_equal", "NotEqual"), ("less", "Less"), ("less_equal", "LessEqual"),
       ("greater", "Greater"), ("greater_equal", "GreaterEqual")]


NP_CMP = {"Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
          "Greater": np.greater, "GreaterEqual": np.greater_equal}


def _cmp_case(fn, op):
    return Case(f"{fn.replace('_', '')}/broadcast", (op, "opset1"), ov_build(binary(fn, [2, 1, 4], [3, 1])),
                inputs=_small_ints([("a", (2, 1, 4)), ("b", (3, 1))]),
                expect={"y": lambda f, op=op: NP_CMP[op](f["a"], f["b"])})


CASES = [
    *[_cmp_case(fn, op) for fn, op in CMP],
]
