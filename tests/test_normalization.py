"""MVN-6 (LayerNorm as OpenVINO writes it) on OpenVINO-written IR, against the float64 oracle and
the OpenVINO runtime. f32: rtol 1e-5, atol 1e-5 (two reductions, a sqrt and a division);
f16: 4e-3 (computed in f32, rounded once); f64 against the oracle: 1e-9."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=4e-3, atol=4e-3)}


def _mvn_ir(tmp_path, axes, normalize=True, eps=1e-5, mode="inside_sqrt", dtype=np.float32, shape=(2, 3, 8)):
    x = ov_parameter(shape, dtype, "x")
    y = ops.mvn(x, ops.constant(np.array(axes, np.int64)), normalize, eps, mode)
    return ov_save(tmp_path / "mvn.xml", y, [x])


def _check(xml, x, dtype=np.float32):
    got = run_onnx(xml, {"x": x})[0]
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), **TOL[dtype])
    np.testing.assert_allclose(got, run_openvino(xml, {"x": x})[0], **TOL[dtype])
    return got


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("axes", [[-1], [1, 2], [0, 2], [2, 0, 1]])
def test_mvn(tmp_path, axes, mode, opset):
    xml = _mvn_ir(tmp_path, axes, mode=mode, eps=0.01)
    x = (np.random.default_rng(7).standard_normal((2, 3, 8)) * 3 + 1).astype(np.float32)
    got = run_onnx(xml, {"x": x}, opset=opset)[0]
    np.testing.assert_allclose(got, _check(xml, x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axes", [[-1], [1, 2]])
def test_layer_norm_forms(tmp_path, axes):
    """LayerNorm's form: LayerNormalization from opset 17, the chain below; both match numpy,
    also with a mean large next to the spread."""
    xml = _mvn_ir(tmp_path, axes, eps=1e-5)
    x = (np.random.default_rng(8).standard_normal((2, 3, 8)) + 50).astype(np.float32)
    v = x.astype(np.float64)
    c = v - v.mean(tuple(axes), keepdims=True)
    want = c / np.sqrt((c ** 2).mean(tuple(axes), keepdims=True) + 1e-5)
    np.testing.assert_allclose(_check(xml, x), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(run_onnx(xml, {"x": x}, opset=14)[0], want, rtol=1e-4, atol=1e-4)
    assert [n.op_type for n in convert(xml).graph.node] == ["LayerNormalization", "Identity"]
    chain = [n.op_type for n in convert(xml, opset=14).graph.node]
    assert chain == ["ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Identity"]


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_layer_norm_types(tmp_path, dtype):
    xml = _mvn_ir(tmp_path, [-1], dtype=dtype)
    x = np.random.default_rng(15).standard_normal((2, 3, 8)).astype(dtype)
    got = run_onnx(xml, {"x": x})[0]
    assert got.dtype == dtype
    tol = TOL.get(dtype, dict(rtol=1e-9, atol=1e-9))
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), **tol)


def test_mean_only(tmp_path):
    xml = _mvn_ir(tmp_path, [1], normalize=False)
    x = np.random.default_rng(9).standard_normal((2, 3, 8)).astype(np.float32)
    np.testing.assert_allclose(_check(xml, x), x - x.mean(1, keepdims=True), rtol=1e-6, atol=1e-6)


def test_f16(tmp_path):
    xml = _mvn_ir(tmp_path, [0, 2], dtype=np.float16)
    x = np.random.default_rng(10).standard_normal((2, 3, 8)).astype(np.float16)
    _check(xml, x, np.float16)


def test_constant_row_gives_zeros(tmp_path):
    """var = 0: (x - mean) / sqrt(eps) = 0 (no NaN)."""
    xml = _mvn_ir(tmp_path, [-1], eps=1e-9)
    x = np.full((2, 3, 8), 4.0, np.float32)
    assert not _check(xml, x).any()


@pytest.mark.parametrize("axes,match", [([3], "out of range"), ([1, -2], "twice")])
def test_invalid_axes(tmp_path, axes, match):
    w = IRWriter()
    x = w.parameter([2, 3, 4], "f32", "x")
    w.result(w.layer("MVN", "opset6", [x, w.const(np.array(axes))],
                     {"normalize_variance": True, "eps": 1e-5, "eps_mode": "inside_sqrt"},
                     [("f32", [2, 3, 4])], name="ln")[0])
    with pytest.raises(InvalidLayer, match=f"ln.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


def test_empty_batch_through_dynamic_dim(tmp_path):
    """Regression (fuzzing): a dynamic batch run at size 0 with the batch among the axes made the
    oracle divide by a zero element count; the same converted model runs at sizes 2 and 0."""
    xml = _mvn_ir(tmp_path, [0, 2], shape=(-1, 3, 4))
    for n in (2, 0):
        x = np.random.default_rng(n).standard_normal((n, 3, 4)).astype(np.float32)
        got = run_onnx(xml, {"x": x})[0]
        assert got.shape == (n, 3, 4)
        want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
        np.testing.assert_allclose(got, want, **TOL[np.float32])
    assert ir2onnx.check(xml, inputs={"x": x}, openvino=False).ok


@pytest.mark.parametrize("axes", [[-1], [0, 1]])
def test_empty_static_dim(tmp_path, axes):
    """Regression (fuzzing): MVN over a static size-0 axis became LayerNormalization with a
    0-element scale initializer, which onnxruntime reports as a missing input at run time."""
    xml = _mvn_ir(tmp_path, axes, shape=(2, 0))
    x = np.zeros((2, 0), np.float32)
    for opset in (14, 17, 18):
        assert run_onnx(xml, {"x": x}, opset=opset)[0].shape == (2, 0)
    assert next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())).shape == (2, 0)
