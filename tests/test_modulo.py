"""FloorMod, Mod, SquaredDifference on OpenVINO-written IR against the oracle and the OpenVINO
runtime: integers bit for bit; floats within rtol 1e-5, atol 1e-5 (FloorMod's float formula
a - floor(a/b)*b rounds a few times)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

OPS = {"FloorMod": ops.floor_mod, "Mod": ops.mod, "SquaredDifference": ops.squared_difference}
NP = {"FloorMod": np.mod, "Mod": np.fmod, "SquaredDifference": lambda a, b: (a - b) * (a - b)}


def _ir(tmp_path, op, dtype, a_shape=(2, 3, 4), b_shape=(3, 1)):
    a, b = ov_parameter(list(a_shape), dtype, "a"), ov_parameter(list(b_shape), dtype, "b")
    return ov_save(tmp_path / "m.xml", OPS[op](a, b), [a, b])


def _feeds(dtype, a_shape=(2, 3, 4), b_shape=(3, 1)):
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(-20, 20, a_shape).astype(dtype)
        b = rng.choice([-3.5, -2, -0.75, 1.25, 3], b_shape).astype(dtype)
    else:
        low = 0 if np.dtype(dtype).kind == "u" else -20
        a = rng.integers(low, 20, a_shape).astype(dtype)
        b = rng.choice([1, 3, 7] if low == 0 else [-7, -3, -1, 2, 5], b_shape).astype(dtype)
    return {"a": a, "b": b}


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("op", ["FloorMod", "Mod"])
def test_integers(tmp_path, op, dtype):
    xml = _ir(tmp_path, op, dtype)
    f = _feeds(dtype)
    got = run_onnx(xml, f)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())))
    assert_bitexact(got, run_openvino(xml, f)[0])
    assert_bitexact(got, NP[op](f["a"], f["b"]).astype(dtype))


@pytest.mark.parametrize("op", list(OPS))
def test_floats(tmp_path, op):
    xml = _ir(tmp_path, op, np.float32)
    f = _feeds(np.float32)
    got = run_onnx(xml, f)[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, f)[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, NP[op](f["a"].astype(np.float64), f["b"].astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_signs():
    """The worked signs: FloorMod follows the divisor, Mod the dividend."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        f = {"a": np.array([7, -7, 7, -7], np.int32), "b": np.array([3, 3, -3, -3], np.int32)}
        for op, want in (("FloorMod", [1, 2, -2, -1]), ("Mod", [1, -1, 1, -1])):
            xml = _ir(Path(d), op, np.int32, (4,), (4,))
            assert run_onnx(xml, f)[0].tolist() == want


def test_squared_difference_i32(tmp_path):
    xml = _ir(tmp_path, "SquaredDifference", np.int32)
    f = _feeds(np.int32)
    got = run_onnx(xml, f)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())))
    assert_bitexact(got, run_openvino(xml, f)[0])


def test_constants_fold(tmp_path):
    x = ov_parameter([3], np.int32, "x")
    k = ops.floor_mod(ops.constant(np.array([-7, 7, 5], np.int32)), ops.constant(np.array([3, -3, 5], np.int32)))
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]
    assert run_onnx(xml, {"x": np.zeros(3, np.int32)})[0].tolist() == [2, -2, 0]
