"""PReLU, Elu, SoftPlus, Mish, LogSoftmax on OpenVINO-written IR against the float64 oracle and
the OpenVINO runtime: f32 rtol 1e-5, atol 1e-6; f16 rtol 2e-3, atol 2e-3 (as test_activations)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _check(xml, feeds, dtype=np.float32, opsets=(17,), ov_atol=None):
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    ov_out = run_openvino(xml, feeds)[0]
    for opset in opsets:
        got = run_onnx(xml, feeds, opset=opset)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **TOLS[dtype])
        np.testing.assert_allclose(got, ov_out, **dict(TOLS[dtype], **({"atol": ov_atol} if ov_atol else {})))
    return want


def _x(shape, dtype=np.float32, scale=4.0):
    return (np.random.default_rng(5).standard_normal(shape) * scale).astype(dtype)


UNARY = {
    "Elu": (lambda x: ops.elu(x, 0.7), lambda v: np.where(v > 0, v, 0.7 * np.expm1(v))),
    "SoftPlus": (ops.softplus, lambda v: np.logaddexp(0, v)),
    "Mish": (ops.mish, lambda v: v * np.tanh(np.logaddexp(0, v))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(tmp_path, op, dtype):
    make, ref = UNARY[op]
    x = ov_parameter([2, 3, 4], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", make(x), [x])
    data = _x((2, 3, 4), dtype)
    got = _check(xml, {"x": data}, dtype, opsets=(17, 18))
    np.testing.assert_allclose(got, ref(data.astype(np.float64)), **TOLS[dtype])


def test_softplus_large_inputs(tmp_path):
    x = ov_parameter([6], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.softplus(x), [x])
    data = np.array([-100, -20, 0, 15, 30, 80], np.float32)
    got = _check(xml, {"x": data}, ov_atol=5e-6)  # OpenVINO's CPU softplus(-20) is -1.9e-6
    assert np.isfinite(got).all() and got[-1] == np.float32(80)


@pytest.mark.parametrize("shape,slope", [
    ((2, 3, 4), [0.1, -0.5, 2.0]),          # per channel (dim 1)
    ((2, 3, 4), [0.1, 0.2, 0.3, 0.4]),     # numpy broadcast along the last dim
    ((3, 3), [0.5, 1.5, -1.0]),            # rank 2: dim 1 is both
    ((2, 3, 4), [[0.25]]),                 # scalar-like
])
def test_prelu(tmp_path, shape, slope):
    x = ov_parameter(list(shape), np.float32, "x")
    s = np.array(slope, np.float32)
    xml = ov_save(tmp_path / "m.xml", ops.prelu(x, ops.constant(s)), [x])
    data = _x(shape)
    got = _check(xml, {"x": data})
    k = s.reshape(-1, *([1] * (len(shape) - 2))) if s.ndim == 1 and s.size == shape[1] else s
    np.testing.assert_allclose(got, np.where(data < 0, data * k, data), rtol=1e-6)


def test_prelu_runtime_slope(tmp_path):
    x, s = ov_parameter([1, 3, 2, 2], np.float32, "x"), ov_parameter([3], np.float32, "s")
    xml = ov_save(tmp_path / "m.xml", ops.prelu(x, s), [x, s])
    _check(xml, {"x": _x((1, 3, 2, 2)), "s": np.array([0.1, 0.2, 0.3], np.float32)})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_log_softmax(tmp_path, axis):
    x = ov_parameter([2, 3, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.log_softmax(x, axis), [x])
    data = _x((2, 3, 4))
    got = _check(xml, {"x": data})
    d = data.astype(np.float64)
    ref = d - d.max(axis, keepdims=True) - np.log(np.exp(d - d.max(axis, keepdims=True)).sum(axis, keepdims=True))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_log_softmax_bad_axis(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("LogSoftmax", "opset5", [x], {"axis": 2}, [("f32", [2, 3])], name="lsm")[0])
    with pytest.raises(InvalidLayer, match="lsm.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))


def test_constant_folds(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    k = ops.elu(ops.constant(np.array([-1, 0, 2], np.float32)), 1.0)
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]


@pytest.mark.parametrize("op", list(UNARY))
def test_f64_refused_below_opset18(tmp_path, op):
    """onnxruntime has no f64 Elu/Softplus kernel; Mish-18 has one."""
    x = ov_parameter([2, 3], np.float64, "x")
    xml = ov_save(tmp_path / "m.xml", UNARY[op][0](x), [x])
    with pytest.raises(UnsupportedLayer, match="on f64 is not supported"):
        convert(xml, opset=17)
    if op == "Mish":
        data = _x((2, 3), np.float64)
        got = run_onnx(xml, {"x": data}, opset=18)[0]
        np.testing.assert_allclose(got, UNARY[op][1](data), rtol=1e-12)
