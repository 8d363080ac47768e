"""ConvertLike-1, Eye-9 and Einsum-7 on OpenVINO-written IR, against the oracle and OpenVINO.

ConvertLike and Eye move/produce data: bit-exact. Einsum f32: rtol = atol = 1e-5 (sums of a few
products in a different order); f16 (computed in f32, rounded once): 2e-3; integers exact.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


def _save_const_model(path, node):
    ov.save_model(ov.Model([ops.result(node)], [], path.stem), str(path))
    return path


# -- ConvertLike ---------------------------------------------------------------------------------
@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.float16), (np.int64, np.float32),
                                     (np.float16, np.float32), (np.int32, np.uint8), (np.float32, np.bool_)])
def test_convert_like(tmp_path, src, dst):
    x = ov_parameter((2, None), src, "x")
    like = ops.constant(np.zeros((3,), dst))
    xml = ov_save(tmp_path / "cl.xml", ops.convert_like(x, like), [x])
    rng = np.random.default_rng(0)
    v = (rng.uniform(0, 100, (2, 5)) * np.where(rng.random((2, 5)) < 0.3, 0, 1)).astype(src)
    got = run_onnx(xml, {"x": v})[0]
    assert_bitexact(got, _oracle(xml, {"x": v})[0])
    assert_bitexact(got, run_openvino(xml, {"x": v})[0])
    assert got.dtype == np.dtype(dst)
    assert not convert(xml).graph.initializer  # the like-input's values are not in the model


def test_convert_like_runtime_like_and_folding(tmp_path):
    x = ov_parameter((4,), np.float32, "x")
    like = ov_parameter((1,), np.int64, "like")
    xml = ov_save(tmp_path / "cl_rt.xml", ops.convert_like(x, like), [x, like])
    v = np.array([1.9, -2.7, 0.0, 300.5], np.float32)
    feeds = {"x": v, "like": np.zeros(1, np.int64)}
    assert_bitexact(run_onnx(xml, feeds)[0], np.array([1, -2, 0, 300], np.int64))
    assert_bitexact(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0])
    c = ops.convert_like(ops.constant(np.array([1.5, 2.5], np.float32)), ops.constant(np.zeros(1, np.int32)))
    path = _save_const_model(tmp_path / "cl_fold.xml", c)
    assert [n.op_type for n in convert(path).graph.node] == ["Identity"]  # folded like Convert-1
    assert_bitexact(run_onnx(path, {})[0], np.array([1, 2], np.int32))


# -- Eye -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("rows,cols,diag,batch,otype", [
    (3, 4, 2, None, "i32"), (3, 4, -1, None, "i32"), (2, 2, 5, [1, 2], "f16"),  # the spec's examples
    (4, 4, 0, None, "f32"), (3, 5, -7, [2], "i64"), (2, 3, 1, [2, 1], "boolean"), (0, 3, 0, None, "f32")])
def test_eye_constant_folds(tmp_path, rows, cols, diag, batch, otype):
    args = [ops.constant(np.int64(rows)), ops.constant(np.array([cols], np.int32)), ops.constant(np.int64(diag)), otype]
    if batch is not None:
        args.append(ops.constant(np.array(batch, np.int64)))
    path = _save_const_model(tmp_path / "eye.xml", ops.eye(*args))
    got = run_onnx(path, {})[0]
    want = np.broadcast_to(np.eye(rows, cols, diag), tuple(batch or ()) + (rows, cols))
    assert_bitexact(got, want.astype(got.dtype))
    assert_bitexact(got, _oracle(path, {})[0])
    assert_bitexact(got, run_openvino(path, {})[0])
    assert [n.op_type for n in convert(path).graph.node] == ["Identity"]


@pytest.mark.parametrize("otype", ["f32", "i32", "f16"])
def test_eye_runtime_sizes(tmp_path, otype):
    n = ov_parameter((), np.int32, "n")
    m = ov_parameter((1,), np.int64, "m")
    k = ov_parameter((), np.int64, "k")
    b = ov_parameter((2,), np.int32, "b")
    xml = ov_save(tmp_path / "eye_rt.xml", ops.eye(n, m, k, otype, b), [n, m, k, b])
    for rows, cols, diag, batch in [(3, 4, 1, [2, 1]), (4, 2, -2, [1, 3]), (2, 2, 9, [1, 1]), (5, 3, -1, [0, 2])]:
        feeds = {"n": np.array(rows, np.int32), "m": np.array([cols], np.int64), "k": np.array(diag, np.int64),
                 "b": np.array(batch, np.int32)}
        got = run_onnx(xml, feeds)[0]
        assert_bitexact(got, _oracle(xml, feeds)[0], f"{rows},{cols},{diag},{batch}")
        assert_bitexact(got, run_openvino(xml, feeds)[0])


def test_eye_negative_rows_is_invalid(tmp_path):
    w = IRWriter("eye_bad")
    r, c, d = w.const(np.int64(-1)), w.const(np.int64(2)), w.const(np.int64(0))
    y = w.layer("Eye", "opset9", [r, c, d], {"output_type": "f32"}, [("f32", (0, 2))])[0]
    w.result(y)
    xml = w.save(tmp_path / "eye_bad.xml")
    with pytest.raises(InvalidLayer, match="num_rows is negative"):
        convert(xml)


# -- Einsum --------------------------------------------------------------------------------------
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
