"""ROIAlignRotated-15 on OpenVINO-written IR: onnxruntime against the float64 oracle and OpenVINO
(f32: rtol/atol 1e-5; f16 data: 2e-3), with run-time data, ROIs and batch indices, dynamic dims,
clockwise true/false, several angles; angle 0 against ROIAlign-9 half_pixel_for_nn on the same
box; sampling_ratio 0 is refused."""
from __future__ import annotations

import math

import numpy as np
import openvino.opset9 as ops9
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

BOXES = np.array([[3.1, 4.2, 5.5, 3.1], [6, 5, 4, 7], [2, 2, 9, 3], [4.5, 3.5, 3, 3], [8, 1, 6, 2.5],
                  [10.5, 9.5, 6, 5]], np.float32)
BATCH = np.array([0, 1, 1, 0, 1, 0], np.int32)
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _rois(angle):
    return np.concatenate([BOXES, np.full((len(BOXES), 1), angle, np.float32)], axis=1)


def _data(dtype=np.float32, shape=(2, 3, 8, 9), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _ir(tmp_path, clockwise, ratio=2, dtype=np.float32, scale=0.8, index_type=np.int32):
    x = ov_parameter((None, 3, None, None), dtype, "x")
    rois = ov_parameter((None, 5), dtype, "rois")
    batch = ov_parameter((None,), index_type, "batch")
    y = ops.roi_align_rotated(x, rois, batch, 3, 2, ratio, scale, clockwise)
    return ov_save(tmp_path / "rar.xml", y, [x, rois, batch])


def _agree(xml, feeds, dtype=np.float32, opset=None):
    got = run_onnx(xml, feeds, opset=opset)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL[dtype])
    return got


@pytest.mark.parametrize("clockwise", [False, True])
@pytest.mark.parametrize("angle", [0.0, 0.4, -1.2, math.pi / 2, 2.5, 7.0])
def test_roi_align_rotated(tmp_path, clockwise, angle):
    xml = _ir(tmp_path, clockwise)
    feeds = {"x": _data(), "rois": _rois(angle), "batch": BATCH}
    got = _agree(xml, feeds)
    assert got.shape == (6, 3, 3, 2) and np.abs(got).max() > 0.1
    assert "GatherND" in [n.op_type for n in convert(xml).graph.node]


@pytest.mark.parametrize("ratio", [1, 3])
def test_roi_align_rotated_ratios_opsets_dynamic(tmp_path, ratio):
    """Other grids, opsets 14 and 18, and other batch / ROI counts and map sizes on one model."""
    xml = _ir(tmp_path, True, ratio=ratio, scale=0.5)
    for n, count, hw in ((2, 6, (8, 9)), (3, 2, (11, 6))):
        feeds = {"x": _data(shape=(n, 3) + hw, seed=n), "rois": _rois(0.7)[:count] * 1.5, "batch": BATCH[:count]}
        for opset in (14, 18):
            assert _agree(xml, feeds, opset=opset).shape == (count, 3, 3, 2)


def test_roi_align_rotated_direction(tmp_path):
    """clockwise_mode negates the angle: clockwise at a == counter-clockwise at -a, != at a."""
    feeds = {"x": _data(seed=3), "batch": BATCH}
    (tmp_path / "cw").mkdir()
    (tmp_path / "ccw").mkdir()
    cw, ccw = _ir(tmp_path / "cw", True), _ir(tmp_path / "ccw", False)
    a = run_onnx(cw, dict(feeds, rois=_rois(0.6)))[0]
    np.testing.assert_allclose(a, run_onnx(ccw, dict(feeds, rois=_rois(-0.6)))[0], rtol=1e-6, atol=1e-6)
    assert not np.allclose(a, run_onnx(ccw, dict(feeds, rois=_rois(0.6)))[0], atol=1e-2)


def test_roi_align_rotated_angle_zero_is_roi_align(tmp_path):
    """At angle 0 the box (cx, cy, w, h) samples as ROIAlign-9 half_pixel_for_nn on (cx -+ w/2, cy -+ h/2)."""
    feeds = {"x": _data(seed=4), "rois": _rois(0.0), "batch": BATCH}
    rotated = run_onnx(_ir(tmp_path, False), feeds)[0]
    x = ov_parameter((None, 3, None, None), np.float32, "x")
    rois = ov_parameter((None, 4), np.float32, "rois")
    batch = ov_parameter((None,), np.int32, "batch")
    y = ops9.roi_align(x, rois, batch, 3, 2, 2, 0.8, "avg", "half_pixel_for_nn")
    xml = ov_save(tmp_path / "ra.xml", y, [x, rois, batch])
    cx, cy, w, h = BOXES.T
    corners = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    np.testing.assert_allclose(rotated, run_onnx(xml, dict(feeds, rois=corners))[0], rtol=1e-5, atol=1e-5)


def test_roi_align_rotated_f16_i64_indices(tmp_path):
    xml = _ir(tmp_path, True, dtype=np.float16, index_type=np.int64)
    feeds = {"x": _data(np.float16, seed=5), "rois": _rois(-0.9).astype(np.float16), "batch": BATCH.astype(np.int64)}
    got = _agree(xml, feeds, np.float16)
    assert got.dtype == np.float16 and np.abs(got.astype(np.float32)).max() > 0.1


def test_roi_align_rotated_f16_weights_head(tmp_path):
    """Convolution with f16-compressed weights -> ROIAlignRotated on run-time boxes."""
    x = ov_parameter((None, 2, 10, 12), np.float32, "x")
    rois = ov_parameter((None, 5), np.float32, "rois")
    batch = ov_parameter((None,), np.int32, "batch")
    w = np.random.default_rng(6).standard_normal((3, 2, 3, 3)).astype(np.float32)
    conv = ops.convolution(x, ops.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])
    y = ops.roi_align_rotated(conv, rois, batch, 2, 2, 2, 0.5, False)
    xml = ov_save(tmp_path / "head.xml", y, [x, rois, batch], compress_to_fp16=True)
    assert 'element_type="f16"' in xml.read_text()
    feeds = {"x": _data(shape=(2, 2, 10, 12), seed=7), "rois": _rois(1.1) * 2, "batch": BATCH}
    _agree(xml, feeds)


def test_roi_align_rotated_adaptive_grid_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="sampling_ratio=0"):
        convert(_ir(tmp_path, False, ratio=0))
