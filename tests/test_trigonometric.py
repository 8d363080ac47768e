"""HSigmoid, SoftSign, Selu, Sign, Round and the trigonometric family on OpenVINO-written IR,
against the float64 oracle and the OpenVINO runtime.

Tolerances (measured on 2000 values per op in the ranges below, onnxruntime 1.31.1, OpenVINO
2026.4): f32 rtol 1e-6 atol 1e-6 against the oracle and against OpenVINO (worst seen: 3 ulp,
Asin/Acos/Atan on onnxruntime; 2 ulp HSigmoid on OpenVINO); f16 rtol 1e-3 atol 1e-3 (1 ulp);
f64 rtol 1e-12 atol 1e-12. Sign and Round are exact: bit for bit against the oracle.
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

TOL = {np.float32: (1e-6, 1e-6), np.float16: (1e-3, 1e-3), np.float64: (1e-12, 1e-12)}
RANGES = {"sin": (-10, 10), "cos": (-10, 10), "tan": (-1.5, 1.5), "asin": (-1, 1), "acos": (-1, 1),
          "atan": (-10, 10), "sinh": (-10, 10), "cosh": (-10, 10), "asinh": (-10, 10), "acosh": (1, 10),
          "atanh": (-0.99, 0.99), "hsigmoid": (-5, 5), "softsign": (-10, 10), "selu": (-5, 5)}


def _node(name, p, dtype):
    if name == "selu":
        return ops.selu(p, ops.constant(np.array([1.6732632], dtype)), ops.constant(np.array([1.0507], dtype)))
    if name.startswith("round_"):
        return ops.round(p, name[6:])
    return getattr(ops, name)(p)


def _ir(tmp_path, name, dtype, shape=(3, 40)):
    p = ov_parameter(list(shape), dtype, "x")
    return ov_save(tmp_path / f"{name}.xml", [_node(name, p, dtype)], [p])


def _run(xml, x):
    got = run_onnx(xml, {"x": x})[0]
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())[0]
    return got, want, run_openvino(xml, {"x": x})[0]


def _close(a, b, dtype, what):
    rtol, atol = TOL[dtype]
    assert a.dtype == b.dtype == dtype, what
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", sorted(RANGES))
def test_float_ops_match_oracle_and_openvino(tmp_path, name, dtype):
    lo, hi = RANGES[name]
    x = np.random.default_rng(3).uniform(lo, hi, (3, 40)).astype(dtype)
    got, want, ov_out = _run(_ir(tmp_path, name, dtype), x)
    _close(got, want, dtype, "onnxruntime vs oracle")
    _close(got, ov_out, dtype, "onnxruntime vs openvino")


@pytest.mark.parametrize("name", ["sin", "cos", "hsigmoid", "softsign", "selu"])
def test_f64(tmp_path, name):
    x = np.random.default_rng(4).uniform(-5, 5, (3, 40))
    got, want, _ = _run(_ir(tmp_path, name, np.float64), x)
    _close(got, want, np.float64, "onnxruntime vs oracle")


@pytest.mark.parametrize("name", ["tan", "asin", "atanh"])
def test_f64_without_onnxruntime_kernel_is_refused(tmp_path, name):
    with pytest.raises(UnsupportedLayer, match="f64"):
        convert(_ir(tmp_path, name, np.float64))


@pytest.mark.parametrize("name", ["sin", "cos", "hsigmoid", "atan"])
def test_integer_input_is_refused(tmp_path, name):
    with pytest.raises(UnsupportedLayer, match="i32"):
        convert(_ir(tmp_path, name, np.int32))


def test_domain_edges(tmp_path):
    """Outside the domain: NaN; at the poles: infinities, in every backend."""
    for name, x in (("asin", [2.0, -1.5, 1.0]), ("acosh", [0.5, 1.0, np.inf]), ("atanh", [1.0, -1.0, 3.0])):
        x = np.array(x, np.float32)
        got, want, ov_out = _run(_ir(tmp_path, name, np.float32, (3,)), x)
        for other in (want, ov_out):
            np.testing.assert_allclose(got, other, rtol=1e-6, atol=1e-6, err_msg=name)  # NaN == NaN here
    assert np.isnan(got[2]) and got[0] == np.inf and got[1] == -np.inf


# -- Round ---------------------------------------------------------------------------------------
TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.5, 0.49999997, -0.49999997, 2.4999998,
                 8388609, -8388609, 16777215, 1e30, -0.0, 0.0, -0.4, np.inf, -np.inf, np.nan], np.float32)
AWAY = [-3, -2, -1, 1, 2, 3, 4, -4, 0, -0.0, 2, 8388609, -8388609, 16777215, 1e30, -0.0, 0, -0.0,
        np.inf, -np.inf, np.nan]
EVEN = [-2, -2, -0.0, 0, 2, 2, 4, -4, 0, -0.0, 2, 8388609, -8388609, 16777215, 1e30, -0.0, 0, -0.0,
        np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("mode,expected", [("half_away_from_zero", AWAY), ("half_to_even", EVEN)])
def test_round_ties_and_large_values(tmp_path, mode, expected):
    got, want, ov_out = _run(_ir(tmp_path, f"round_{mode}", np.float32, (TIES.size,)), TIES)
    assert_bitexact(got, np.array(expected, np.float32), "spec values")
    assert_bitexact(got, want, "oracle")
    # OpenVINO's CPU plugin computes half_away_from_zero as sign(x) * floor(|x| + 0.5) in f32:
    # 0.49999997 -> 1, odd integers in [2^23, 2^24) -> +-1 off, and -0.0 -> 0.0. Elsewhere it agrees.
    off = np.isin(np.abs(TIES), np.float32([0.49999997, 8388609, 16777215])) if mode == "half_away_from_zero" else np.zeros(TIES.size, bool)
    np.testing.assert_array_equal(got[~off], ov_out[~off])


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_round_other_floats(tmp_path, dtype):
    x = (np.arange(-12, 13) / 4).astype(dtype)  # quarters: ties at every odd multiple of 0.5
    for mode in ("half_away_from_zero", "half_to_even"):
        got, want, ov_out = _run(_ir(tmp_path, f"round_{mode}", dtype, (x.size,)), x)
        assert_bitexact(got, want, mode)
        np.testing.assert_array_equal(got, ov_out)


def test_round_integers_pass_through(tmp_path):
    x = np.array([-7, 0, 5, 2**31 - 1], np.int32)
    got, want, ov_out = _run(_ir(tmp_path, "round_half_to_even", np.int32, (4,)), x)
    assert_bitexact(got, x)
    assert_bitexact(want, x)
    # OpenVINO's CPU plugin rounds i32 through f32: 2^31 - 1 comes back as -2^31; small values agree
    assert_bitexact(ov_out[:3], x[:3])


# -- Sign ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int32, np.int64, np.uint8])
def test_sign_types(tmp_path, dtype):
    if np.dtype(dtype).kind == "f":
        x = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -2.5, 1e-30 if dtype != np.float16 else 1e-7, 7], dtype)
    else:
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, 0, 1, 3, info.min + 1, 2, 0], dtype)
    got, want, ov_out = _run(_ir(tmp_path, "sign", dtype, (8,)), x)
    assert_bitexact(got, want, "oracle")  # NaN stays NaN, -0.0 gives +0.0
    # OpenVINO's CPU plugin narrows i64 to i32 (Sign(INT64_MAX) = -1 there); compare in i32 range
    fits = np.abs(x.astype(np.float64)) < 2**31 if dtype == np.int64 else np.ones(x.size, bool)
    assert_bitexact(got[fits], ov_out[fits].astype(dtype), "openvino")


# -- Selu ----------------------------------------------------------------------------------------
def test_selu_run_time_parameters(tmp_path):
    """alpha and lambda as graph inputs: the Exp/Where chain instead of ONNX Selu."""
    x, a, l_ = ov_parameter([2, 5], np.float32, "x"), ov_parameter([1], np.float32, "a"), ov_parameter([1], np.float32, "l")
    xml = ov_save(tmp_path / "selu.xml", [ops.selu(x, a, l_)], [x, a, l_])
    feeds = {"x": np.linspace(-4, 4, 10, dtype=np.float32).reshape(2, 5), "a": np.float32([1.5]), "l": np.float32([0.7])}
    got = run_onnx(xml, feeds)[0]
    _close(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], np.float32, "oracle")
    # OpenVINO's CPU plugin only runs Selu with constant alpha/lambda: compare with that model
    p = ov_parameter([2, 5], np.float32, "x")
    const_xml = ov_save(tmp_path / "selu_const.xml",
                        [ops.selu(p, ops.constant(np.float32([1.5])), ops.constant(np.float32([0.7])))], [p])
    _close(got, run_openvino(const_xml, {"x": feeds["x"]})[0], np.float32, "openvino")
    assert "Selu" not in {n.op_type for n in convert(xml).graph.node}


def test_selu_alpha_of_two_elements_is_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([3], "f32", "x")
    y = w.layer("Selu", "opset1", [x, w.const(np.float32([1, 2])), w.const(np.float32([1]))], None,
                [("f32", [3])], name="bad_selu")[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="bad_selu.*alpha"):
        convert(w.save(tmp_path / "bad.xml"))


# -- folding -------------------------------------------------------------------------------------
def test_constant_input_is_folded(tmp_path):
    c = np.array([0.25, -1.0, 2.0], np.float32)
    p = ov_parameter([3], np.float32, "x")
    xml = ov_save(tmp_path / "fold.xml", [ops.add(p, ops.cos(ops.constant(c)))], [p])
    model = convert(xml)
    assert "Cos" not in {n.op_type for n in model.graph.node}
    x = np.zeros(3, np.float32)
    _close(run_onnx(xml, {"x": x})[0], run_openvino(xml, {"x": x})[0], np.float32, "openvino")
