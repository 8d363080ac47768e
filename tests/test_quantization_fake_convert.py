"""FakeConvert-13 (NNCF's FP8 emulation) on OpenVINO-written IR: onnxruntime, the oracle and
OpenVINO's CPU plugin equal (NaN where NaN; every value's bits but a zero's sign) on values over 19 binades, both f8 types, scalar
and per-row scales, with and without shift, f16 data, run-time scales; f8 overflow saturates."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino


def _data(dtype=np.float32, n=4000):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(2 * n) * np.exp(rng.uniform(-10, 9, 2 * n))).astype(np.float32)
    x[:8] = [np.nan, np.inf, -np.inf, 1e6, 464, 480, 61440, -0.0]
    with np.errstate(over="ignore"):
        return x.reshape(2, n).astype(dtype)


def _same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    nan = np.isnan(b.astype(np.float32))
    assert np.array_equal(np.isnan(a.astype(np.float32)), nan), f"{what}: NaNs differ"
    assert np.array_equal(a[~nan], b[~nan]), f"{what}: values differ"  # (-0.0 == 0.0: OpenVINO's
    # zero's sign depends on the scale: 1 keeps -0.0, 3.7 gives +0.0)


def _check(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    _same(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")
    _same(got, run_openvino(xml, feeds)[0], "OpenVINO")
    return got


@pytest.mark.parametrize("dst", ["f8e4m3", "f8e5m2"])
@pytest.mark.parametrize("scale, shift", [(1.0, None), (3.7, None), (0.37, 1.25),
                                          ([[0.5], [2.0]], [[0.1], [-0.3]])])
def test_matches_openvino(tmp_path, dst, scale, shift):
    x = ov_parameter([2, None], np.float32, "x")
    sh = None if shift is None else ops.constant(np.asarray(shift, np.float32))
    y = ops.fake_convert(x, ops.constant(np.asarray(scale, np.float32)), sh, dst)
    xml = ov_save(tmp_path / "fc.xml", y, [x])
    got = _check(xml, {"x": _data()})
    top = 448.0 if dst == "f8e4m3" else 57344.0
    s = np.asarray(scale, np.float32) * np.ones((2, 1), np.float32)
    sh = np.zeros((2, 1), np.float32) if shift is None else np.asarray(shift, np.float32)
    assert np.all(np.abs(got * s - sh) <= top * 1.0001)  # saturated, never inf or NaN
    assert not np.isnan(got).any()


def test_f16_data_and_run_time_scale(tmp_path):
    x = ov_parameter([2, 64], np.float16, "x")
    s = ov_parameter([2, 1], np.float16, "s")
    xml = ov_save(tmp_path / "fc16.xml", ops.fake_convert(x, s, None, "f8e4m3"), [x, s])
    _check(xml, {"x": _data(np.float16, 64), "s": np.array([[0.75], [4.0]], np.float16)})


def test_integer_data_refused(tmp_path):
    from ir2onnx.testing import IRWriter

    w = IRWriter("fc_int")
    p = w.parameter([4], "i32", "x")
    s = w.const(np.array(2, np.int32))
    y = w.layer("FakeConvert", "opset13", [p, s], {"destination_type": "f8e4m3"}, [("i32", (4,))])[0]
    w.result(y)
    with pytest.raises(UnsupportedLayer, match="FakeConvert on i32"):
        convert(w.save(tmp_path / "fc_int.xml"))
