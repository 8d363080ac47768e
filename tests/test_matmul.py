"""MatMul-1 (transpose flags, 1-D operands, batch broadcasting, integers) and Einsum-7 on
OpenVINO-written IR, against the oracle and the OpenVINO runtime.

MatMul f32: rtol 1e-5, atol 1e-5 (standard normal operands, K <= 5, the oracle sums in float64);
integer MatMul and every Transpose are compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import first_outputs, save_model

TOL = dict(rtol=1e-5, atol=1e-5)


_param = ov_parameter


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
    xml = save_model(tmp_path, ops.matmul(a, b, ta, tb), [a, b])
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    got, want, ov_out = first_outputs(xml, feeds)
    assert got.shape == want.shape == ov_out.shape
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(got, ov_out, **TOL)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_matmul_integer(tmp_path, dtype):
    rng = np.random.default_rng(1)
    a, b = _param((2, 4), dtype, "a"), _param((3, 4), dtype, "b")
    xml = save_model(tmp_path, ops.matmul(a, b, False, True), [a, b])
    feeds = {"a": rng.integers(-50, 50, (2, 4)).astype(dtype), "b": rng.integers(-50, 50, (3, 4)).astype(dtype)}
    got, want, ov_out = first_outputs(xml, feeds)
    assert_bitexact(got, want)
    assert_bitexact(got, ov_out)


def test_matmul_constant_weights_dynamic_batch(tmp_path):
    """A Linear layer: x[?, 5] @ W[3, 5]^T (the constant's transpose is folded)."""
    w = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    x = _param((None, 5), np.float32, "x")
    xml = save_model(tmp_path, ops.matmul(x, ops.constant(w), False, True), [x])
    assert not [n for n in convert(xml).graph.node if n.op_type == "Transpose"]
    feeds = {"x": np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)}
    got, want, ov_out = first_outputs(xml, feeds)
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(got, ov_out, **TOL)


def test_matmul_inner_dims_must_agree(tmp_path):
    w = IRWriter()
    a, b = w.parameter([2, 3], "f32", "a"), w.parameter([2, 3], "f32", "b")
    w.result(w.layer("MatMul", "opset1", [a, b], {"transpose_a": "false", "transpose_b": "false"}, [("f32", (2, 3))])[0])
    with pytest.raises(InvalidLayer, match="inner dimensions differ"):
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
    xml = save_model(tmp_path, ops.matmul(a, b, True, False), [a] + ([] if b_const else [b]))
    av = rng.standard_normal(a_shape).astype(np.float32)
    feeds = {"a": av} if b_const else {"a": av, "b": bv}
    ref = np.matmul(np.swapaxes(av, -1, -2), bv)
    for got in first_outputs(xml, feeds):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, **TOL)


# -- Einsum-7 --------------------------------------------------------------------------------
# On OpenVINO-written IR against the oracle and OpenVINO. f32: rtol = atol = 1e-5 (sums of a few
# products in a different order); f16 (computed in f32, rounded once): 2e-3; integers exact.
def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


EQUATIONS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("bA,AC", [(2, 3), (3, 4)]),
             ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("...ij,...jk", [(2, 2, 3), (3, 4)]),
             ("...ij,...jk->...ik", [(1, 2, 3), (4, 3, 5)]), ("ii->i", [(3, 3)]), ("iij->ij", [(2, 2, 3)]),
             ("ij->", [(2, 3)]), ("i,j", [(2,), (3,)]), ("nchw,nchw->nc", [(2, 3, 2, 2), (2, 3, 2, 2)]),
             ("a...,a...->...", [(2, 3, 1), (2, 1, 4)]), ("ij->ji", [(2, 3)]), ("ab,bc,cd->ad", [(2, 3), (3, 2), (2, 2)])]


@pytest.mark.parametrize("equation,shapes", EQUATIONS)
def test_einsum(tmp_path, equation, shapes):
    rng = np.random.default_rng(1)
    ps = [ov_parameter(s, np.float32, f"x{i}") for i, s in enumerate(shapes)]
    xml = ov_save(tmp_path / "es.xml", ops.einsum(ps, equation), ps)
    feeds = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    got = run_onnx(xml, feeds)[0]
    want = np.einsum(equation, *feeds.values())
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, _oracle(xml, feeds)[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16, np.float64])
def test_einsum_types(tmp_path, dtype):
    rng = np.random.default_rng(2)
    ps = [ov_parameter((None, 3), dtype, "a"), ov_parameter((3, 4), dtype, "b")]
    xml = ov_save(tmp_path / "es_t.xml", ops.einsum(ps, "ij,jk->ik"), ps)
    feeds = {"a": rng.integers(-5, 5, (2, 3)).astype(dtype), "b": (rng.standard_normal((3, 4)) * 3).astype(dtype)}
    got = run_onnx(xml, feeds)[0]
    assert got.dtype == dtype
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got, _oracle(xml, feeds)[0], **tol)
    if dtype == np.float64:  # OpenVINO's CPU plugin computes f64 in f32
        tol = dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **tol)


def test_einsum_f16_compressed_constant(tmp_path):
    x = ov_parameter((2, 3), np.float32, "x")
    w = ops.constant(np.random.default_rng(3).standard_normal((3, 5)).astype(np.float32))
    xml = ov_save(tmp_path / "es_c.xml", ops.einsum([x, w], "ij,jk->ik"), [x], compress_to_fp16=True)
    v = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    got = run_onnx(xml, {"x": v})[0]
    np.testing.assert_allclose(got, _oracle(xml, {"x": v})[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": v})[0], rtol=1e-5, atol=1e-5)


def test_einsum_unsupported_type_names_why(tmp_path):
    ps = [ov_parameter((2, 3), np.int8, "a"), ov_parameter((3, 2), np.int8, "b")]
    xml = ov_save(tmp_path / "es_i8.xml", ops.einsum(ps, "ij,jk->ik"), ps)
    with pytest.raises(UnsupportedLayer, match="onnxruntime implements Einsum"):
        convert(xml)


@pytest.mark.parametrize("equation,match", [("ij,jk->ik", "2 input subscripts for 1 inputs"),
                                            ("i1->i", "not letters"), ("ij->ii", "repeats a label"),
                                            ("ij->k", "names one no input has")])
def test_einsum_bad_equation_is_invalid(tmp_path, equation, match):
    w = IRWriter("es_bad")
    x = w.parameter((2, 2), "f32", "x")
    y = w.layer("Einsum", "opset7", [x], {"equation": equation}, [("f32", None)])[0]
    w.result(y)
    xml = w.save(tmp_path / "es_bad.xml")
    with pytest.raises(InvalidLayer, match=match):
        convert(xml)
