"""HardSigmoid-1 on OpenVINO-written IR against the oracle and OpenVINO: constant alpha/beta (ONNX
HardSigmoid; f16-compressed by save_model), f64 and run-time alpha/beta (Mul, Add, Clip; OpenVINO
cannot compile the run-time form, so it is compared with the oracle and numpy only)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = {np.float16: dict(rtol=2e-3, atol=2e-3), np.float32: dict(rtol=1e-6, atol=1e-7),
       np.float64: dict(rtol=1e-14, atol=1e-15)}


def _data(dtype, shape=(3, 8)):
    return np.random.default_rng(2).uniform(-6, 6, shape).astype(dtype)


def _numpy(x, alpha, beta):
    return np.clip(x.astype(np.float64) * alpha + beta, 0, 1)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_constant_alpha_beta(tmp_path, dtype):
    x = ov_parameter([None, 8], dtype, "x")
    node = ops.hard_sigmoid(x, ops.constant(np.array(0.25, dtype)), ops.constant(np.array(0.5, dtype)))
    xml = ov_save(tmp_path / "m.xml", node, [x], compress_to_fp16=True)
    v = _data(dtype)
    got = run_onnx(xml, {"x": v})[0]
    assert got.dtype == dtype
    ops_used = [n.op_type for n in convert(xml).graph.node]
    assert ("HardSigmoid" in ops_used) == (dtype != np.float64)
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": v}).values()))
    for other in (want, _numpy(v, 0.25, 0.5)):
        np.testing.assert_allclose(got, other, **TOL[dtype])
    ov_tol = TOL[np.float32 if dtype == np.float64 else dtype]  # OpenVINO runs f64 in f32
    np.testing.assert_allclose(got, run_openvino(xml, {"x": v})[0], **ov_tol)
    assert (got == 0).any() and (got == 1).any()  # both bounds reached


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_runtime_alpha_beta(tmp_path, dtype):
    x, a, b = ov_parameter([None, 8], dtype, "x"), ov_parameter([], dtype, "a"), ov_parameter([], dtype, "b")
    xml = ov_save(tmp_path / "m.xml", ops.hard_sigmoid(x, a, b), [x, a, b])
    assert "Clip" in [n.op_type for n in convert(xml).graph.node]
    for alpha, beta in ((0.2, 0.5), (-1.5, 0.1)):
        feeds = {"x": _data(dtype), "a": np.array(alpha, dtype), "b": np.array(beta, dtype)}
        got = run_onnx(xml, feeds)[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        np.testing.assert_allclose(got, want, **TOL[dtype])
        np.testing.assert_allclose(got, _numpy(feeds["x"], dtype(alpha), dtype(beta)), **TOL[dtype])


def test_alpha_of_another_type_is_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([3], "f32", "x")
    out = w.layer("HardSigmoid", "opset1", [x, w.const(np.array(0.2, np.float64)), w.const(np.array(0.5, np.float32))],
                  None, [("f32", [3])], name="hs")[0]
    w.result(out)
    with pytest.raises(InvalidLayer, match="hs.*alpha is f64 but data is f32"):
        convert(w.save(tmp_path / "m.xml"))
