"""Equal ... GreaterEqual, LogicalNot/And/Or/Xor and Select on OpenVINO-written IR: boolean and
selected values bit for bit against the oracle and the OpenVINO runtime."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

COMPARE = {"Equal": ops.equal, "NotEqual": ops.not_equal, "Less": ops.less, "LessEqual": ops.less_equal,
           "Greater": ops.greater, "GreaterEqual": ops.greater_equal}
LOGICAL = {"LogicalAnd": ops.logical_and, "LogicalOr": ops.logical_or, "LogicalXor": ops.logical_xor}


def _all_three(xml, feeds):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    for g, w, o in zip(got, want, ov_out):
        assert_bitexact(g, w, "onnxruntime vs oracle")
        assert_bitexact(g, o, "onnxruntime vs OpenVINO")
    return got


def _values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.integers(-3, 4, shape).astype(dtype)  # small integers: many ties
    low = 0 if np.dtype(dtype).kind == "u" else -3
    return rng.integers(low, low + 6, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("op", list(COMPARE))
def test_compare_broadcast(tmp_path, op, dtype):
    a, b = ov_parameter([2, 1, 4], dtype, "a"), ov_parameter([3, 1], dtype, "b")
    xml = ov_save(tmp_path / "c.xml", COMPARE[op](a, b), [a, b])
    rng = np.random.default_rng(4)
    got = _all_three(xml, {"a": _values(rng, (2, 1, 4), dtype), "b": _values(rng, (3, 1), dtype)})[0]
    assert got.dtype == np.bool_ and got.shape == (2, 3, 4) and 0 < got.sum() < got.size


@pytest.mark.parametrize("op", ["Equal", "NotEqual"])
def test_equality_on_booleans_and_nan(tmp_path, op):
    a, b = ov_parameter([4], np.bool_, "a"), ov_parameter([4], np.bool_, "b")
    xml = ov_save(tmp_path / "b.xml", COMPARE[op](a, b), [a, b])
    _all_three(xml, {"a": np.array([0, 0, 1, 1], bool), "b": np.array([0, 1, 0, 1], bool)})
    a, b = ov_parameter([3], np.float32, "a"), ov_parameter([3], np.float32, "b")
    xml = ov_save(tmp_path / "n.xml", COMPARE[op](a, b), [a, b])
    got = run_onnx(xml, {"a": np.array([np.nan, 1, np.inf], np.float32), "b": np.array([np.nan, 1, np.inf], np.float32)})
    assert got[0].tolist() == ([False, True, True] if op == "Equal" else [True, False, False])


@pytest.mark.parametrize("op", list(LOGICAL))
def test_logical(tmp_path, op):
    a, b = ov_parameter([2, 4], np.bool_, "a"), ov_parameter([4], np.bool_, "b")
    xml = ov_save(tmp_path / "l.xml", [LOGICAL[op](a, b), ops.logical_not(a)], [a, b])
    feeds = {"a": np.array([[0, 0, 1, 1], [1, 0, 1, 0]], bool), "b": np.array([0, 1, 0, 1], bool)}
    got = _all_three(xml, feeds)
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
    got = _all_three(xml, feeds)[0]
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


def test_constants_fold(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    mask = ops.logical_and(ops.less(ops.constant(np.array([1, 5, 3])), ops.constant(np.int64(4))),
                           ops.logical_not(ops.equal(ops.constant(np.array([0, 0, 3])), ops.constant(np.int64(3)))))
    xml = ov_save(tmp_path / "f.xml", ops.select(mask, x, ops.constant(np.float32(-1))), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Where", "Identity"]
    data = np.array([7, 8, 9], np.float32)
    assert_bitexact(_all_three(xml, {"x": data})[0], np.array([7, -1, -1], np.float32))


@pytest.mark.parametrize("op,inputs,match", [
    ("Less", [("f32", [3]), ("i32", [3])], "different element types"),
    ("Equal", [("f32", [2, 3]), ("f32", [4])], "do not broadcast"),
    ("LogicalAnd", [("f32", [3]), ("f32", [3])], "needs boolean inputs"),
    ("Select", [("f32", [3]), ("f32", [3]), ("f32", [3])], "needs boolean inputs"),
])
def test_invalid(tmp_path, op, inputs, match):
    w = IRWriter()
    refs = [w.parameter(shape, et, f"p{i}") for i, (et, shape) in enumerate(inputs)]
    out_et = "f32" if op == "Select" else "boolean"
    w.result(w.layer(op, "opset1", refs, {"auto_broadcast": "numpy"}, [(out_et, [3])], name="bad")[0])
    with pytest.raises(InvalidLayer, match=f"bad.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


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


def test_scalar_constant_folds_to_a_numpy_scalar(tmp_path):
    """Regression (fuzzing): LogicalNot of a 0-d constant folds to a numpy scalar (np.bool_, not
    an ndarray); the converter crashed with a TypeError at the Result (exit 3). Any fold that
    returns a numpy scalar is now taken as a 0-d constant."""
    x = ov_parameter([2], np.bool_, "x")
    y = ops.logical_and(x, ops.logical_not(ops.constant(np.array(True))))
    z = ops.logical_not(ops.constant(np.array(False)))
    xml = ov_save(tmp_path / "m.xml", [y, z], [x])
    got = _all_three(xml, {"x": np.array([True, False])})
    assert_bitexact(got[0], np.array([False, False]))
    assert_bitexact(got[1], np.array(True))
