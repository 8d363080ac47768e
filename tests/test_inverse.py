"""Inverse-14 on OpenVINO-written IR: batches (dynamic dims), sizes 1..6, f32/f64/f16, both adjoint
values, pivoting (zeros on the diagonal), compared with the oracle and OpenVINO.

Tolerance: rtol 1e-4, atol 1e-5 (f16: 1e-2) on matrices whose diagonal dominates (condition
numbers below ~10): Gauss-Jordan here, LU in OpenVINO, float64 elimination in the oracle, so
results differ by rounding times the condition number."""
from __future__ import annotations

import numpy as np
import openvino.opset14 as o14
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOLS = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-4, atol=1e-5),
        np.float16: dict(rtol=1e-2, atol=1e-2)}


def _matrices(rng, shape, dtype):
    n = shape[-1]
    signs = rng.choice([-1.0, 1.0], shape[:-1])[..., None]
    return (rng.uniform(-1, 1, shape) + 3 * np.eye(n) * signs).astype(dtype)


# declared shape, run shape, dtype, adjoint
CASES = [
    ([1, 1], (1, 1), np.float32, False),
    ([None, 2, 2], (3, 2, 2), np.float32, True),
    ([None, None, 3, 3], (2, 2, 3, 3), np.float32, False),
    ([4, 4], (4, 4), np.float64, True),
    ([None, 5, 5], (2, 5, 5), np.float32, True),
    ([None, 6, 6], (1, 6, 6), np.float64, False),
    ([None, 3, 3], (2, 3, 3), np.float16, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{np.dtype(c[2]).name}-{'x'.join(map(str, c[1]))}-adj{int(c[3])}")
def test_inverse(tmp_path, case):
    declared, shape, dtype, adjoint = case
    x = ov_parameter(declared, dtype)
    xml = ov_save(tmp_path / "i.xml", o14.inverse(x, adjoint), [x])
    a = _matrices(np.random.default_rng(0), shape, dtype)
    got = run_onnx(xml, {"x": a})[0]
    assert got.dtype == dtype and got.shape == shape
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": a}).values())[0]
    np.testing.assert_allclose(got, want, **TOLS[dtype])
    np.testing.assert_allclose(got, run_openvino(xml, {"x": a})[0], **TOLS[dtype])
    inv = np.linalg.inv(a.astype(np.float64))
    np.testing.assert_allclose(got, np.swapaxes(inv, -1, -2) if adjoint else inv, **TOLS[dtype])


def test_pivoting_needs_row_swaps(tmp_path):
    """Zeros on the diagonal: without the row swap the first step divides by zero."""
    x = ov_parameter([None, 4, 4])
    xml = ov_save(tmp_path / "p.xml", o14.inverse(x, False), [x])
    a = np.array([[[0, 1, 2, 0], [1, 0, 0, 3], [2, 1, 0, 1], [0, 2, 1, 1]],
                  [[0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2]]], np.float32)
    got = run_onnx(xml, {"x": a})[0]
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got @ a, np.broadcast_to(np.eye(4), a.shape), atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": a})[0], rtol=1e-4, atol=1e-5)


def test_adjoint_is_the_inverse_of_the_transpose(tmp_path):
    """OpenVINO's CPU plugin (and TensorFlow's MatrixInverse(adjoint=True), which its frontend
    maps to this attribute) give inverse(A)^T; the spec text says det(A) * inverse(A)."""
    x = ov_parameter([2, 2])
    xml = ov_save(tmp_path / "a.xml", o14.inverse(x, True), [x])
    a = np.array([[4, 7], [2, 6]], np.float32)
    for out in (run_onnx(xml, {"x": a})[0], run_openvino(xml, {"x": a})[0]):
        np.testing.assert_allclose(out, [[0.6, -0.2], [-0.7, 0.4]], rtol=1e-6)


def test_refusals(tmp_path):
    x = ov_parameter([2, None, None])
    with pytest.raises(UnsupportedLayer, match="static matrix size"):
        convert(ov_save(tmp_path / "d.xml", o14.inverse(x, False), [x]))
    x = ov_parameter([17, 17])
    with pytest.raises(UnsupportedLayer, match="limited to 16x16"):
        convert(ov_save(tmp_path / "b.xml", o14.inverse(x, False), [x]))
    w = IRWriter()
    p = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("Inverse", "opset14", [p], {"adjoint": "false"}, [("f32", (2, 3))])[0])
    with pytest.raises(InvalidLayer, match="square"):
        convert(w.save(tmp_path / "s.xml"))
