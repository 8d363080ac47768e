"""AvgPool-16 (dilations) on OpenVINO-written IR: onnxruntime at ONNX opset 19 against the oracle
and OpenVINO (f32: rtol 1e-5, atol 1e-6; f16: 2e-3) over exclude-pad, pads, rounding types,
auto_pad and dilations; dilations > 1 below opset 19 are refused."""
from __future__ import annotations

import numpy as np
import openvino.opset16 as ops16
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

from util import FLOAT_TOLS


def _ir(tmp_path, shape, kernel, strides, pads_begin, pads_end, exclude, rounding, dilations, auto_pad=None,
        dtype=np.float32, param_shape=None):
    x = ov_parameter(param_shape or shape, dtype, "x")
    y = ops16.avg_pool(x, strides, pads_begin, pads_end, kernel, exclude, rounding, auto_pad, dilations)
    return ov_save(tmp_path / "ap.xml", y, [x])


def _agree(xml, x, opset=19):
    got = run_onnx(xml, {"x": x}, opset=opset)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    tol = FLOAT_TOLS[x.dtype.type]
    assert got.shape == want.shape and got.dtype == x.dtype
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": x})[0], **tol)
    return got


@pytest.mark.parametrize("exclude", [True, False])
@pytest.mark.parametrize("pads", [(0, 0), (1, 1), (2, 1)])
@pytest.mark.parametrize("rounding", ["floor", "ceil", "ceil_torch"])
@pytest.mark.parametrize("dilations", [[2, 2], [2, 3], [1, 2]])
def test_avg_pool16_dilations(tmp_path, exclude, pads, rounding, dilations):
    xml = _ir(tmp_path, (1, 2, 11, 12), [3, 3], [2, 2], list(pads), list(pads), exclude, rounding, dilations)
    x = np.random.default_rng(0).standard_normal((1, 2, 11, 12)).astype(np.float32)
    try:
        got = _agree(xml, x)
    except UnsupportedLayer as e:  # the oracle's and the lowering's one refusal: a window of padding only
        assert "no input element" in str(e)
        return
    undilated = run_onnx(_ir(tmp_path, (1, 2, 11, 12), [3, 3], [2, 2], list(pads), list(pads), exclude,
                             rounding, [1, 1]), {"x": x}, opset=19)[0]
    assert got.shape != undilated.shape or not np.allclose(got, undilated)


@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower", "valid"])
def test_avg_pool16_auto_pad(tmp_path, auto_pad):
    xml = _ir(tmp_path, (2, 3, 9, 8), [3, 2], [1, 2], [0, 0], [0, 0], True, "floor", [2, 2], auto_pad)
    _agree(xml, np.random.default_rng(1).standard_normal((2, 3, 9, 8)).astype(np.float32))


def test_avg_pool16_1d_3d_f16_dynamic(tmp_path):
    one = _ir(tmp_path, (2, 3, 15), [3], [2], [1], [1], False, "floor", [3], param_shape=(None, 3, None))
    _agree(one, np.random.default_rng(2).standard_normal((2, 3, 15)).astype(np.float32))
    (tmp_path / "f16").mkdir()
    three = _ir(tmp_path / "f16", (1, 2, 7, 7, 7), [2, 2, 2], [1, 1, 1], [0] * 3, [0] * 3, True, "floor", [2, 1, 3],
                dtype=np.float16)
    _agree(three, np.random.default_rng(3).standard_normal((1, 2, 7, 7, 7)).astype(np.float16))


def test_avg_pool16_opsets(tmp_path):
    """Dilations 1 at the default opset (as AvgPool-14); dilations > 1 need opset 19."""
    plain = _ir(tmp_path, (1, 2, 6, 6), [2, 2], [1, 1], [1, 1], [1, 1], False, "ceil", [1, 1])
    _agree(plain, np.random.default_rng(4).standard_normal((1, 2, 6, 6)).astype(np.float32), opset=17)
    (tmp_path / "d").mkdir()
    dilated = _ir(tmp_path / "d", (1, 2, 6, 6), [2, 2], [1, 1], [0, 0], [0, 0], True, "floor", [2, 2])
    with pytest.raises(UnsupportedLayer, match="opset >= 19"):
        convert(dilated, opset=18)


def test_avg_pool_f64_refused_at_conversion(tmp_path):
    """onnxruntime's CPU AveragePool has no double kernel (any opset): refused when converting."""
    xml = _ir(tmp_path, (1, 2, 6, 6), [2, 2], [1, 1], [0, 0], [0, 0], True, "floor", [2, 2], dtype=np.float64)
    with pytest.raises(UnsupportedLayer, match="only f16, f32"):
        convert(xml, opset=19)
