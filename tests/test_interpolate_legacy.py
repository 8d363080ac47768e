"""Interpolate-1 (Model Optimizer's form, in Open Model Zoo IRs such as face-detection-0105) on
OpenVINO-written IR against the oracle and the OpenVINO runtime, which runs it as the Interpolate-4
of its ConvertInterpolate1ToInterpolate4: nearest bit for bit, linear and cubic within f32 tolerance."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)


def _save(tmp_path, shape, target, dtype=np.float32, compress=False, **attrs):
    x = ov_parameter(shape, dtype)
    a = dict(axes=[2, 3], mode="nearest", align_corners=False, antialias=False, pads_begin=[0], pads_end=[0])
    a.update(attrs)
    y = o1.interpolate(x, o1.constant(np.array(target, np.int64)), a)
    return ov_save(tmp_path / "m.xml", [y], [x], compress_to_fp16=compress)


def _check(xml, x, exact):
    feeds = {"x": x}
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    ov_out = run_openvino(xml, feeds)[0]
    got = run_onnx(xml, feeds)[0]
    if exact:
        assert_bitexact(got, want, "oracle")
        assert_bitexact(got, ov_out, "openvino")
    else:
        np.testing.assert_allclose(got, want, **TOL)
        np.testing.assert_allclose(got, ov_out, **TOL)


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("target", [[6, 8], [9, 4], [2, 3], [1, 2], [5, 3], [2, 9]])
def test_nearest(tmp_path, target):
    """Upsampling rounds down, downsampling up (OpenVINO's nearest_mode simple), odd ratios too, and
    axes that shrink beside axes that grow."""
    _check(_save(tmp_path, [1, 2, 3, 4], target), _data((1, 2, 3, 4)), exact=True)


def test_nearest_mixed_with_pads(tmp_path):
    _check(_save(tmp_path, [1, 2, 5, 4], [3, 9], pads_begin=[0, 0, 1, 0], pads_end=[0, 0, 0, 1]),
           _data((1, 2, 5, 4)), exact=True)


def test_nearest_x2_is_repeat(tmp_path):
    x = _data((1, 3, 5, 7))
    xml = _save(tmp_path, [1, 3, 5, 7], [10, 14])
    np.testing.assert_array_equal(run_onnx(xml, {"x": x})[0], x.repeat(2, axis=2).repeat(2, axis=3))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("target", [[6, 9], [2, 3]])
def test_smooth_modes(tmp_path, mode, align_corners, target):
    _check(_save(tmp_path, [1, 2, 4, 5], target, mode=mode, align_corners=align_corners), _data((1, 2, 4, 5)),
           exact=False)


@pytest.mark.parametrize("axes,target", [([1, 2], [6, 8]), ([2], [7])])
def test_linear_other_axes_is_half_pixel(tmp_path, axes, target):
    """Off NCHW's (H, W) OpenVINO's conversion picks half_pixel for linear."""
    _check(_save(tmp_path, [1, 3, 4, 5], target, mode="linear", axes=axes), _data((1, 3, 4, 5)), exact=False)


def test_linear_with_pads(tmp_path):
    _check(_save(tmp_path, [1, 2, 4, 5], [8, 12], mode="linear", axes=[2, 3], pads_begin=[0, 0, 1, 0],
                 pads_end=[0, 0, 1, 2]), _data((1, 2, 4, 5)), exact=False)


def test_nearest_dynamic_batch(tmp_path):
    xml = _save(tmp_path, [-1, 2, 3, 4], [6, 8])
    _check(xml, _data((3, 2, 3, 4)), exact=True)


def test_nearest_with_run_time_sizes_is_refused(tmp_path):
    x, size = ov_parameter([1, 2, 3, 4]), ov_parameter([2], np.int64, name="size")
    a = dict(axes=[2, 3], mode="nearest", align_corners=False, antialias=False, pads_begin=[0], pads_end=[0])
    xml = ov_save(tmp_path / "m.xml", [o1.interpolate(x, size, a)], [x, size])
    with pytest.raises(UnsupportedLayer, match="needs constant sizes"):
        convert(xml)


def test_area_is_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="mode 'area'"):
        convert(_save(tmp_path, [1, 2, 4, 4], [2, 2], mode="area"))
