"""MatMul-1 (transpose flags, 1-D operands, batch broadcasting, integers) and Transpose-1
(constant order, empty order = reversed axes) on OpenVINO-written IR, against the oracle and the
OpenVINO runtime.

MatMul f32: rtol 1e-5, atol 1e-5 (standard normal operands, K <= 5, the oracle sums in float64);
integer MatMul and every Transpose are compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino, ov_parameter, ov_save

TOL = dict(rtol=1e-5, atol=1e-5)


_param = ov_parameter


def _save(tmp_path, out, params):
    return ov_save(tmp_path / "m.xml", out, params)


def _all(xml, feeds):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    return got[0], want[0], run_openvino(xml, feeds)[0]


MATMUL = [  # a shape, b shape, transpose_a, transpose_b
    ((2, 3), (3, 4), False, False),
    ((3, 2), (3, 4), True, False),
    ((2, 3), (4, 3), False, True),
    ((3, 2), (4, 3), True, True),
    ((3,), (3, 4), True, False),  # 1-D: the flags are ignored
    ((2, 3), (3,), False, True),
    ((3,), (3,), True, True),
    ((2, 1, 2, 3), (3, 5, 3), False, True),  # batch broadcasting
    ((4, 2, 3), (3, 2), False, False),
]


@pytest.mark.parametrize("a_shape,b_shape,ta,tb", MATMUL)
def test_matmul_float(tmp_path, a_shape, b_shape, ta, tb):
    rng = np.random.default_rng(0)
    a, b = _param(a_shape, np.float32, "a"), _param(b_shape, np.float32, "b")
    xml = _save(tmp_path, ops.matmul(a, b, ta, tb), [a, b])
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    got, want, ov_out = _all(xml, feeds)
    assert got.shape == want.shape == ov_out.shape
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(got, ov_out, **TOL)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_matmul_integer(tmp_path, dtype):
    rng = np.random.default_rng(1)
    a, b = _param((2, 4), dtype, "a"), _param((3, 4), dtype, "b")
    xml = _save(tmp_path, ops.matmul(a, b, False, True), [a, b])
    feeds = {"a": rng.integers(-50, 50, (2, 4)).astype(dtype), "b": rng.integers(-50, 50, (3, 4)).astype(dtype)}
    got, want, ov_out = _all(xml, feeds)
    assert_bitexact(got, want)
    assert_bitexact(got, ov_out)


def test_matmul_constant_weights_dynamic_batch(tmp_path):
    """A Linear layer: x[?, 5] @ W[3, 5]^T (the constant's transpose is folded)."""
    w = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    x = _param((None, 5), np.float32, "x")
    xml = _save(tmp_path, ops.matmul(x, ops.constant(w), False, True), [x])
    assert not [n for n in convert(xml).graph.node if n.op_type == "Transpose"]
    feeds = {"x": np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)}
    got, want, ov_out = _all(xml, feeds)
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(got, ov_out, **TOL)


def test_matmul_inner_dims_must_agree(tmp_path):
    w = IRWriter()
    a, b = w.parameter([2, 3], "f32", "a"), w.parameter([2, 3], "f32", "b")
    w.result(w.layer("MatMul", "opset1", [a, b], {"transpose_a": "false", "transpose_b": "false"}, [("f32", (2, 3))])[0])
    with pytest.raises(InvalidLayer, match="inner dimensions differ"):
        convert(w.save(tmp_path / "bad.xml"))


TRANSPOSE = [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), []), ((5,), [0]), ((2, 1, 3, 2), [3, 1, 0, 2])]


@pytest.mark.parametrize("shape,order", TRANSPOSE)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_transpose(tmp_path, shape, order, dtype):
    x = _param(shape, dtype, "x")
    xml = _save(tmp_path, ops.transpose(x, ops.constant(np.array(order, np.int64))), [x])
    data = (np.arange(np.prod(shape)) % 7 - 3).astype(dtype).reshape(shape)
    got, want, ov_out = _all(xml, {"x": data})
    expected = np.transpose(data, order or None)
    assert_bitexact(got, expected, "onnxruntime")
    assert_bitexact(want, expected, "oracle")
    assert_bitexact(ov_out, expected, "OpenVINO")


def test_transpose_of_a_constant_is_folded(tmp_path):
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = _param((3, 2), np.float32, "x")
    xml = _save(tmp_path, ops.add(x, ops.transpose(ops.constant(c), ops.constant(np.array([1, 0])))), [x])
    model = convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Add", "Identity"]
    onnx.checker.check_model(model, full_check=True)


@pytest.mark.parametrize("order", [[0, 0, 1], [0, 1], [0, 1, 3]])
def test_transpose_bad_order(tmp_path, order):
    w = IRWriter()
    x = w.parameter([2, 3, 4], "f32", "x")
    o = w.const(np.array(order, np.int64))
    w.result(w.layer("Transpose", "opset1", [x, o], None, [("f32", None)])[0])
    with pytest.raises(InvalidLayer, match="not a permutation"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("a_shape", [(3, 2), (2, 3, 2), (1, 2, 3, 4)])
@pytest.mark.parametrize("b_const", [True, False])
def test_transposed_a_times_vector(tmp_path, a_shape, b_const):
    """Regression (fuzzing): transpose_a with a 1-D B. onnxruntime fuses Transpose -> MatMul with a
    1-D B into a FusedMatMul that computes a wrong product; B now goes in as [K, 1]."""
    rng = np.random.default_rng(3)
    k = a_shape[-2]
    a = _param(a_shape, np.float32, "a")
    bv = rng.standard_normal(k).astype(np.float32)
    b = ops.constant(bv) if b_const else _param([k], np.float32, "b")
    xml = _save(tmp_path, ops.matmul(a, b, True, False), [a] + ([] if b_const else [b]))
    av = rng.standard_normal(a_shape).astype(np.float32)
    feeds = {"a": av} if b_const else {"a": av, "b": bv}
    ref = np.matmul(np.swapaxes(av, -1, -2), bv)
    for got in _all(xml, feeds):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, **TOL)
