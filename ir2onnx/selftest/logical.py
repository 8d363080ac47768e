"""Selftest cases of LogicalNot, LogicalAnd, LogicalOr, LogicalXor-2 and Select (version 1 unless -N
says otherwise). All are compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, binary, ov_build, param, unary


def _bools(names_shapes):
    return lambda rng: {n: rng.integers(0, 2, s).astype(bool) for n, s in names_shapes}


def _select(ops):
    c, t, e = param(ops, [2, 1, 4], np.bool_, "c"), param(ops, [3, 1], name="t"), param(ops, [4], name="e")
    return [(ops.select(c, t, e), "y")], [c, t, e]


def _logical_case(fn, op, version="opset1"):
    np_fn = getattr(np, fn)
    return Case(f"{fn.replace('_', '')}/broadcast", (op, version),
                ov_build(binary(fn, [2, 4], [4], np.bool_)), inputs=_bools([("a", (2, 4)), ("b", (4,))]),
                expect={"y": lambda f: np_fn(f["a"], f["b"])})


CASES = [
    Case("logicalnot/bool", ("LogicalNot", "opset1"), ov_build(unary("logical_not", shape=(2, 4), dtype=np.bool_)),
         inputs=_bools([("x", (2, 4))]), expect={"y": lambda f: ~f["x"]}),
    _logical_case("logical_and", "LogicalAnd"),
    _logical_case("logical_or", "LogicalOr"),
    _logical_case("logical_xor", "LogicalXor", "opset2"),
    Case("select/three-way-broadcast", ("Select", "opset1"), ov_build(_select),
         inputs=_bools([("c", (2, 1, 4))]), expect={"y": lambda f: np.where(f["c"], f["t"], f["e"])}),
]
