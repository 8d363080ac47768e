"""Equal ... GreaterEqual on OpenVINO-written IR: boolean results bit for bit against the oracle and
the OpenVINO runtime; the invalid-input and folding tests cover the logical ops and Select too."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx

from util import all_outputs_bitexact

COMPARE = {"Equal": ops.equal, "NotEqual": ops.not_equal, "Less": ops.less, "LessEqual": ops.less_equal,
           "Greater": ops.greater, "GreaterEqual": ops.greater_equal}


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
    got = all_outputs_bitexact(xml, {"a": _values(rng, (2, 1, 4), dtype), "b": _values(rng, (3, 1), dtype)})[0]
    assert got.dtype == np.bool_ and got.shape == (2, 3, 4) and 0 < got.sum() < got.size


@pytest.mark.parametrize("op", ["Equal", "NotEqual"])
def test_equality_on_booleans_and_nan(tmp_path, op):
    a, b = ov_parameter([4], np.bool_, "a"), ov_parameter([4], np.bool_, "b")
    xml = ov_save(tmp_path / "b.xml", COMPARE[op](a, b), [a, b])
    all_outputs_bitexact(xml, {"a": np.array([0, 0, 1, 1], bool), "b": np.array([0, 1, 0, 1], bool)})
    a, b = ov_parameter([3], np.float32, "a"), ov_parameter([3], np.float32, "b")
    xml = ov_save(tmp_path / "n.xml", COMPARE[op](a, b), [a, b])
    got = run_onnx(xml, {"a": np.array([np.nan, 1, np.inf], np.float32), "b": np.array([np.nan, 1, np.inf], np.float32)})
    assert got[0].tolist() == ([False, True, True] if op == "Equal" else [True, False, False])


def test_constants_fold(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    mask = ops.logical_and(ops.less(ops.constant(np.array([1, 5, 3])), ops.constant(np.int64(4))),
                           ops.logical_not(ops.equal(ops.constant(np.array([0, 0, 3])), ops.constant(np.int64(3)))))
    xml = ov_save(tmp_path / "f.xml", ops.select(mask, x, ops.constant(np.float32(-1))), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Where", "Identity"]
    data = np.array([7, 8, 9], np.float32)
    assert_bitexact(all_outputs_bitexact(xml, {"x": data})[0], np.array([7, -1, -1], np.float32))


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


def test_scalar_constant_folds_to_a_numpy_scalar(tmp_path):
    """Regression (fuzzing): LogicalNot of a 0-d constant folds to a numpy scalar (np.bool_, not
    an ndarray); the converter crashed with a TypeError at the Result (exit 3). Any fold that
    returns a numpy scalar is now taken as a 0-d constant."""
    x = ov_parameter([2], np.bool_, "x")
    y = ops.logical_and(x, ops.logical_not(ops.constant(np.array(True))))
    z = ops.logical_not(ops.constant(np.array(False)))
    xml = ov_save(tmp_path / "m.xml", [y, z], [x])
    got = all_outputs_bitexact(xml, {"x": np.array([True, False])})
    assert_bitexact(got[0], np.array([False, False]))
    assert_bitexact(got[1], np.array(True))
