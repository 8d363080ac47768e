"""IsNaN-10, IsInf-10 and IsFinite-10 on OpenVINO-written IR: bit for bit against the oracle,
numpy and the OpenVINO runtime (except IsFinite on subnormals, where OpenVINO's CPU plugin says
"not finite") and on f64 infinities (README deviation list), for f16, f32, f64 and bf16, dynamic
dims, constants folded."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

FLOATS = [np.float16, np.float32, np.float64]


def _special(dtype):
    info = np.finfo(dtype)
    return np.array([[np.nan, -np.inf, np.inf, -0.0], [0.0, 1.5, info.min, info.max]], dtype)


def _check(xml, feeds, expected, openvino=True, opset=None):
    got = run_onnx(xml, feeds, opset=opset)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds) if openvino else got
    for g, w, o, e in zip(got, want, ov_out, expected):
        assert_bitexact(g, w, "oracle")
        assert_bitexact(g, o, "openvino")
        assert_bitexact(g, e, "numpy")


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_inf_finite(tmp_path, dtype, opset):
    """f16 goes through f32 below opset 20 (IsInf lacks it). OpenVINO 2026.4's CPU plugin calls
    f64 infinities neither infinite nor NaN (IsInf false, IsFinite true): f64 is compared with
    the oracle and numpy only."""
    x = ov_parameter([None, 4], dtype, "x")
    outs = [ops.is_nan(x), ops.is_inf(x), ops.is_finite(x),
            ops.is_inf(x, {"detect_negative": False}), ops.is_inf(x, {"detect_positive": False}),
            ops.is_inf(x, {"detect_negative": False, "detect_positive": False})]
    xml = ov_save(tmp_path / "m.xml", outs, [x])
    v = _special(dtype)
    _check(xml, {"x": v}, [np.isnan(v), np.isinf(v), np.isfinite(v), np.isposinf(v), np.isneginf(v),
                           np.zeros(v.shape, bool)], openvino=dtype != np.float64, opset=opset)


def test_subnormals_are_finite(tmp_path):
    x = ov_parameter([4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", [ops.is_finite(x), ops.is_nan(x)], [x])
    v = np.array([1e-45, -1e-40, 1.1e-38, 1.2e-38], np.float32)
    _check(xml, {"x": v}, [np.ones(4, bool), np.zeros(4, bool)], openvino=False)
    assert run_openvino(xml, {"x": v})[0].tolist() == [False, False, False, True]  # the deviation


def test_constant_folds(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    c = ops.is_inf(ops.constant(np.array([np.inf, -np.inf, 1.0], np.float32)), {"detect_positive": False})
    xml = ov_save(tmp_path / "m.xml", ops.logical_and(ops.is_nan(x), c), [x])
    assert "IsInf" not in [n.op_type for n in convert(xml).graph.node]
    got = run_onnx(xml, {"x": np.array([np.nan, np.nan, 1], np.float32)})[0]
    assert got.tolist() == [False, True, False]


def test_integer_input_is_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([3], "i32", "x")
    w.result(w.layer("IsNaN", "opset10", [x], None, [("boolean", [3])], name="nan")[0])
    with pytest.raises(InvalidLayer, match="nan.*float input, got i32"):
        convert(w.save(tmp_path / "m.xml"))


def test_bf16_through_f32(tmp_path):
    """bf16 (written by IRWriter: OpenVINO's Python API has no bf16 arrays) goes through f32."""
    import ml_dtypes

    w = IRWriter()
    x = w.parameter([4], "bf16", "x")
    for op in ("IsNaN", "IsInf", "IsFinite"):
        w.result(w.layer(op, "opset10", [x], None, [("boolean", [4])], out_names=[op.lower()])[0])
    xml = w.save(tmp_path / "m.xml")
    v = np.array([np.nan, -np.inf, 3.0, np.inf], ml_dtypes.bfloat16)
    for opset in (17, 20):
        got = run_onnx(xml, {"x": v}, opset=opset)
        assert [g.tolist() for g in got] == [[True, False, False, False], [False, True, False, True],
                                             [False, False, True, False]]


def test_openvino_f64_infinities_deviate(tmp_path):
    """The measured deviation: if OpenVINO fixes it, this fails and the f64 comparison can return."""
    x = ov_parameter([2], np.float64, "x")
    xml = ov_save(tmp_path / "m.xml", [ops.is_inf(x), ops.is_finite(x)], [x])
    inf, fin = run_openvino(xml, {"x": np.array([np.inf, -np.inf])})
    assert not inf.any() and fin.all()
