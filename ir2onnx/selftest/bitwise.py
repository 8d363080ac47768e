"""Selftest cases of BitwiseAnd/Or/Xor/Not-13 and BitwiseLeftShift/RightShift-15. All are
compared bit for bit with the oracle (and/int32 at ONNX opset 18, which has the Bitwise ops, the
others at the run's opset: bit by bit below 18); the shifts' amounts stay in [0, bits), where the spec
defines them (beyond, OpenVINO's CPU plugin shifts modulo 32: tests/test_bitwise.py)."""
from __future__ import annotations

import numpy as np

from .cases import Case, binary, ov_build, unary


def _ints(dtype, names_shapes, low=-100, high=100):
    low = max(low, np.iinfo(dtype).min)
    return lambda rng: {n: rng.integers(low, high, s).astype(dtype) for n, s in names_shapes}


def _bools(names_shapes):
    return lambda rng: {n: rng.integers(0, 2, s).astype(bool) for n, s in names_shapes}


def _shift_feeds(dtype, bits):
    def feeds(rng):
        low = max(-1000, np.iinfo(dtype).min)
        return {"a": rng.integers(low, 1000, (2, 4)).astype(dtype), "b": rng.integers(0, bits, (4,)).astype(dtype)}
    return feeds


NP = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _logic(op, dtype):
    kind = "bool" if dtype == np.bool_ else np.dtype(dtype).name
    feeds = _bools([("a", (2, 4)), ("b", (4,))]) if dtype == np.bool_ else _ints(dtype, [("a", (2, 4)), ("b", (4,))])
    return Case(f"bitwise_{op}/{kind}", (f"Bitwise{op.capitalize()}", "opset13"),
                ov_build(binary(f"bitwise_{op}", [2, 4], [4], dtype)), inputs=feeds,
                expect={"y": lambda f, op=op: NP[op](f["a"], f["b"])},
                min_opset=18 if dtype == np.int32 else None)


CASES = [
    _logic("and", np.bool_), _logic("and", np.int32), _logic("or", np.bool_), _logic("or", np.uint8),
    _logic("xor", np.bool_), _logic("xor", np.int64),
    Case("bitwise_not/bool", ("BitwiseNot", "opset13"), ov_build(unary("bitwise_not", shape=(2, 4), dtype=np.bool_)),
         inputs=_bools([("x", (2, 4))]), expect={"y": lambda f: ~f["x"]}),
    Case("bitwise_not/i8", ("BitwiseNot", "opset13"), ov_build(unary("bitwise_not", shape=(2, 4), dtype=np.int8)),
         inputs=_ints(np.int8, [("x", (2, 4))]), expect={"y": lambda f: ~f["x"]}),
    Case("bitwise_left_shift/i32", ("BitwiseLeftShift", "opset15"),
         ov_build(binary("bitwise_left_shift", [2, 4], [4], np.int32)), inputs=_shift_feeds(np.int32, 20),
         expect={"y": lambda f: f["a"] << f["b"]}),
    Case("bitwise_left_shift/u8", ("BitwiseLeftShift", "opset15"),
         ov_build(binary("bitwise_left_shift", [2, 4], [4], np.uint8)), inputs=_shift_feeds(np.uint8, 8),
         expect={"y": lambda f: f["a"] << f["b"]}),
    Case("bitwise_right_shift/i32-arithmetic", ("BitwiseRightShift", "opset15"),
         ov_build(binary("bitwise_right_shift", [2, 4], [4], np.int32)), inputs=_shift_feeds(np.int32, 32),
         expect={"y": lambda f: f["a"] >> f["b"]}),
    Case("bitwise_right_shift/u16", ("BitwiseRightShift", "opset15"),
         ov_build(binary("bitwise_right_shift", [2, 4], [4], np.uint16)), inputs=_shift_feeds(np.uint16, 16),
         expect={"y": lambda f: f["a"] >> f["b"]}),
]
