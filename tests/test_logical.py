"""LogicalNot/And/Or/Xor and Select on OpenVINO-written IR: boolean and selected values bit for bit
against the oracle and the OpenVINO runtime (their invalid inputs and folding: test_comparison.py)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx

from util import all_outputs_bitexact

LOGICAL = {"LogicalAnd": ops.logical_and, "LogicalOr": ops.logical_or, "LogicalXor": ops.logical_xor}


@pytest.mark.parametrize("op", list(LOGICAL))
def test_logical(tmp_path, op):
    a, b = ov_parameter([2, 4], np.bool_, "a"), ov_parameter([4], np.bool_, "b")
    xml = ov_save(tmp_path / "l.xml", [LOGICAL[op](a, b), ops.logical_not(a)], [a, b])
    feeds = {"a": np.array([[0, 0, 1, 1], [1, 0, 1, 0]], bool), "b": np.array([0, 1, 0, 1], bool)}
    got = all_outputs_bitexact(xml, feeds)
    want = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalXor": np.logical_xor}[op]
    assert_bitexact(got[0], want(feeds["a"], feeds["b"]))
    assert_bitexact(got[1], ~feeds["a"])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.int16, np.uint16, np.uint8,
                                   np.int8, np.bool_])
def test_select_broadcast(tmp_path, dtype):
    c, t, e = ov_parameter([2, 1, 4], np.bool_, "c"), ov_parameter([3, 1], dtype, "t"), ov_parameter([4], dtype, "e")
    xml = ov_save(tmp_path / "s.xml", ops.select(c, t, e), [c, t, e])
    rng = np.random.default_rng(5)
    feeds = {"c": rng.integers(0, 2, (2, 1, 4)).astype(bool), "t": rng.integers(0, 2, (3, 1)).astype(dtype),
             "e": (rng.integers(0, 2, (4,)) + (dtype != np.bool_) * 5).astype(dtype)}
    got = all_outputs_bitexact(xml, feeds)[0]
    assert_bitexact(got, np.where(feeds["c"], feeds["t"], feeds["e"]).astype(dtype))


def test_select_u64_round_trips_large_values(tmp_path):
    w = IRWriter()
    c, t, e = w.parameter([3], "boolean", "c"), w.parameter([3], "u64", "t"), w.parameter([3], "u64", "e")
    w.result(w.layer("Select", "opset1", [c, t, e], {"auto_broadcast": "numpy"}, [("u64", [3])], out_names=["y"])[0])
    xml = w.save(tmp_path / "u.xml")
    big = np.array([2**64 - 1, 2**63, 5], np.uint64)
    feeds = {"c": np.array([1, 1, 0], bool), "t": big, "e": np.array([1, 2, 3], np.uint64)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, np.array([2**64 - 1, 2**63, 3], np.uint64))
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())))


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3,), (2, 1), (1, 3)), ((None, 3), (None, 1), (3,))])
def test_select_f16_keeps_signalling_nans(tmp_path, shapes):
    """onnxruntime's f16 Where quiets signalling NaNs: f16 Select picks with GatherElements."""
    rng = np.random.default_rng(0)
    static = [tuple(2 if d is None else d for d in s) for s in shapes]
    snan = np.array([0x7C01, 0x7D00, 0xFC05, 0x7C10, 0xFD55, 0x7E01], np.uint16)
    c = rng.random(static[0]) < 0.5
    a = np.resize(snan, static[1]).view(np.float16)
    b = np.resize(snan[::-1].copy(), static[2]).view(np.float16)
    params = [ov_parameter(shapes[0], np.bool_, "c"), ov_parameter(shapes[1], np.float16, "a"),
              ov_parameter(shapes[2], np.float16, "b")]
    xml = ov_save(tmp_path / "s.xml", ops.select(*params), params)
    (y,) = run_onnx(xml, [c, a, b])
    assert_bitexact(y, np.where(c, a, b))
    assert "Where" not in [n.op_type for n in convert(xml).graph.node]
