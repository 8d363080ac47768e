"""Erf, Negative, Abs, Log, Floor and Ceiling on OpenVINO-written IR, against the oracle
and the OpenVINO runtime. Floats: f32 rtol 1e-5 / atol 1e-6, f16 2e-3 (one transcendental
function); Floor, Ceiling, Negative, Abs and integers: bit for bit."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}
SHAPE = (2, 3, 4)
UNARY = {"Erf": (ops.erf, (-3, 3)), "Log": (ops.log, (0.01, 50)), "Floor": (ops.floor, (-5, 5)),
         "Ceiling": (ops.ceiling, (-5, 5)), "Negative": (ops.negative, (-5, 5)), "Abs": (ops.abs, (-5, 5))}
EXACT = ("Floor", "Ceiling", "Negative", "Abs")


def _three(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    return got, want, run_openvino(xml, feeds)[0]


def _unary_ir(tmp_path, make, dtype, shape=SHAPE):
    x = ov_parameter(shape, dtype, "x")
    return ov_save(tmp_path / "m.xml", make(x), [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", list(UNARY))
def test_float_unary(tmp_path, name, dtype):
    make, (low, high) = UNARY[name]
    xml = _unary_ir(tmp_path, make, dtype)
    x = np.random.default_rng(0).uniform(low, high, SHAPE).astype(dtype)
    got, want, ov_out = _three(xml, {"x": x})
    assert got.dtype == dtype and got.shape == SHAPE
    if name in EXACT:
        assert_bitexact(got, want)
        assert_bitexact(got, ov_out)
    else:
        np.testing.assert_allclose(got, want, **TOLS[dtype])
        np.testing.assert_allclose(got, ov_out, **TOLS[dtype])


def test_special_values(tmp_path):
    xml = _unary_ir(tmp_path, ops.log, np.float32, [5])
    x = np.array([0, -1, np.inf, np.nan, 1], np.float32)
    got, want, _ = _three(xml, {"x": x})
    assert_bitexact(np.isnan(got), np.array([False, True, False, True, False]))
    assert got[0] == -np.inf and got[2] == np.inf and got[4] == 0
    np.testing.assert_array_equal(got, want)
    xml = _unary_ir(tmp_path, ops.floor, np.float32, [4])
    x = np.array([-0.5, np.inf, -np.inf, 2.0], np.float32)
    assert_bitexact(run_onnx(xml, {"x": x})[0], _three(xml, {"x": x})[1])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("name", EXACT)
def test_integer_unary(tmp_path, name, dtype):
    """Integers: Floor/Ceiling are the identity, Abs/Negative wrap (Abs(INT_MIN) = INT_MIN), as the
    spec and OpenVINO's reference say."""
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, 0, 1, 7, info.min + 1], dtype)
    xml = _unary_ir(tmp_path, UNARY[name][0], dtype, [6])
    got = run_onnx(xml, {"x": x})[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())))
    if name == "Negative" and dtype == np.uint8:
        # the spec's wrap; OpenVINO 2026.4's CPU plugin refuses to compile unsigned Negative
        assert got.tolist() == [0, 1, 0, 255, 249, 255]
        return
    if name == "Negative" and np.dtype(dtype).kind == "u":
        return
    # OpenVINO's CPU plugin runs integer Floor/Abs/... through f32 (2^31 - 1 comes back as
    # INT_MIN): compare with it on the values f32 holds exactly
    assert_bitexact(got[2:5], run_openvino(xml, {"x": x})[0][2:5])


def test_erf_f64_is_refused(tmp_path):
    w = IRWriter()
    x = w.parameter([3], "f64", "x")
    w.result(w.layer("Erf", "opset1", [x], None, [("f64", [3])])[0])
    with pytest.raises(InvalidLayer, match="Erf on f64 is not supported"):
        convert(w.save(tmp_path / "bad.xml"))


def test_constant_unary_folds(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    k = ops.abs(ops.negative(ops.ceiling(ops.constant(np.array([-1.5, 0.2, 2.0], np.float32)))))
    xml = ov_save(tmp_path / "f.xml", ops.multiply(x, ops.erf(k)), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Mul", "Identity"]
    data = np.ones(3, np.float32)
    got, want, ov_out = _three(xml, {"x": data})
    np.testing.assert_allclose(got, [0.8427008, 0.8427008, 0.9953223], rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # OpenVINO 2026.4's CPU plugin drops this Abs (measured: Abs(Negative(Ceiling(c))) gives
    # [1, -1, -2] for c = [-1.5, 0.2, 2]), so its result keeps the signs
    np.testing.assert_allclose(np.abs(ov_out), got, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16])
def test_identity16(tmp_path, dtype):
    """Identity-16 passes any element type through unchanged (no node), alone and in a chain."""
    import openvino.opset16 as o16

    x = ov_parameter([None, 3], dtype, "x")
    xml = ov_save(tmp_path / "i.xml", [o16.identity(x), ops.concat([o16.identity(x), x], 0)], [x])
    data = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    got = run_onnx(xml, {"x": data})
    assert_bitexact(got[0], data)
    assert_bitexact(got[1], np.concatenate([data, data]))
    assert_bitexact(got[0], run_openvino(xml, {"x": data})[0], "openvino")
    assert [n.op_type for n in ir2onnx.convert(xml).graph.node].count("Identity") <= 2  # the outputs only
