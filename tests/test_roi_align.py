"""ROIAlign-3/-9 (avg) on OpenVINO-written IR: onnxruntime against the float64 oracle and OpenVINO
(f32: rtol/atol 1e-5; f16 data: 2e-3), with run-time ROIs and batch indices, dynamic dims, each
aligned mode and sampling ratio, and ONNX RoiAlign models read by OpenVINO compared with
onnxruntime on the original model (the framework). mode=max (an explicit chain) with a fixed
sampling grid; max with sampling_ratio 0 is refused."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset3 as ops3
import openvino.opset9 as ops9
import openvino.opset15 as ops
import pytest
from onnx import TensorProto, helper

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

ROIS = np.array([[0.3, 1.2, 5.5, 6.1], [2, 2, 2.4, 2.2], [-3, -2, 12, 11], [1, 0.5, 7.9, 3.3],
                 [6.5, 4.1, 8.9, 7.9]], np.float32)
BATCH = np.array([0, 1, 1, 0, 1], np.int32)
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _data(dtype=np.float32, shape=(2, 3, 8, 9), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _ir(tmp_path, version, ratio, aligned="asymmetric", dtype=np.float32, mode="avg", scale=0.7,
        index_type=np.int32):
    x = ov_parameter((None, 3, None, None), dtype, "x")
    rois = ov_parameter((None, 4), dtype, "rois")
    batch = ov_parameter((None,), index_type, "batch")
    if version == 3:
        y = ops3.roi_align(x, rois, batch, 3, 2, ratio, scale, mode)
    else:
        y = ops9.roi_align(x, rois, batch, 3, 2, ratio, scale, mode, aligned)
    return ov_save(tmp_path / "ra.xml", y, [x, rois, batch])


def _agree(xml, feeds, dtype=np.float32, opset=None):
    got = run_onnx(xml, feeds, opset=opset)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL[dtype])
    return got


@pytest.mark.parametrize("version, aligned", [(3, "asymmetric"), (9, "asymmetric"), (9, "half_pixel_for_nn"),
                                              (9, "half_pixel")])
@pytest.mark.parametrize("ratio", [0, 1, 2])
def test_roi_align(tmp_path, version, aligned, ratio):
    xml = _ir(tmp_path, version, ratio, aligned)
    feeds = {"x": _data(), "rois": ROIS, "batch": BATCH}
    got = _agree(xml, feeds)
    assert got.shape == (5, 3, 3, 2) and np.abs(got).max() > 0.1


def test_roi_align_modes_differ(tmp_path):
    """The three aligned modes give three different results on the same ROIs (the shift matters)."""
    feeds = {"x": _data(seed=1), "rois": ROIS, "batch": BATCH}
    outs = []
    for mode in ("asymmetric", "half_pixel_for_nn", "half_pixel"):
        (tmp_path / mode).mkdir()
        outs.append(run_onnx(_ir(tmp_path / mode, 9, 2, mode), feeds)[0])
    assert not np.allclose(outs[0], outs[1], atol=1e-3) and not np.allclose(outs[1], outs[2], atol=1e-3)


def test_roi_align_f16_and_i64_indices(tmp_path):
    xml = _ir(tmp_path, 9, 0, "half_pixel_for_nn", dtype=np.float16, index_type=np.int64)
    feeds = {"x": _data(np.float16, seed=2), "rois": ROIS.astype(np.float16), "batch": BATCH.astype(np.int64)}
    assert _agree(xml, feeds, np.float16).dtype == np.float16


def test_roi_align_opsets(tmp_path):
    """asymmetric runs at opset 14 (RoiAlign-10); the half-pixel modes need opset 16."""
    feeds = {"x": _data(seed=3), "rois": ROIS, "batch": BATCH}
    _agree(_ir(tmp_path, 3, 2), feeds, opset=14)
    with pytest.raises(UnsupportedLayer, match="opset >= 16"):
        convert(_ir(tmp_path, 9, 2, "half_pixel"), opset=15)


def test_roi_align_detector_head_f16_weights(tmp_path):
    """Convolution with f16-compressed weights -> ROIAlign on run-time boxes (a detector's head)."""
    x = ov_parameter((None, 2, 10, 12), np.float32, "x")
    rois = ov_parameter((None, 4), np.float32, "rois")
    batch = ov_parameter((None,), np.int32, "batch")
    w = np.random.default_rng(4).standard_normal((3, 2, 3, 3)).astype(np.float32)
    conv = ops.convolution(x, ops.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])
    y = ops9.roi_align(conv, rois, batch, 2, 2, 2, 0.5, "avg", "half_pixel_for_nn")
    xml = ov_save(tmp_path / "head.xml", y, [x, rois, batch], compress_to_fp16=True)
    assert 'element_type="f16"' in xml.read_text()
    feeds = {"x": _data(shape=(2, 2, 10, 12), seed=5), "rois": ROIS * 2, "batch": BATCH}
    _agree(xml, feeds)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_onnx_round_trip(tmp_path, ctm, ratio):
    """ONNX RoiAlign (avg) read by OpenVINO (ROIAlign-9: half_pixel -> half_pixel_for_nn,
    output_half_pixel -> asymmetric), saved, converted back: onnxruntime on the converted model
    matches onnxruntime on the original ONNX model and OpenVINO."""
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], coordinate_transformation_mode=ctm,
                            mode="avg", output_height=3, output_width=2, sampling_ratio=ratio, spatial_scale=0.7)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 9]),
                                            helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["r", 4]),
                                            helper.make_tensor_value_info("batch", TensorProto.INT64, ["r"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    feeds = {"x": _data(seed=6), "rois": ROIS, "batch": BATCH.astype(np.int64)}
    framework = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    ov_model = ov.Core().read_model(model.SerializeToString(), b"")
    xml = tmp_path / "ra.xml"
    ov.save_model(ov_model, str(xml))
    assert "ROIAlign" in xml.read_text()
    got = _agree(xml, feeds)
    np.testing.assert_allclose(got, framework, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("version, aligned", [(3, "asymmetric"), (9, "half_pixel_for_nn"), (9, "half_pixel")])
@pytest.mark.parametrize("ratio", [1, 2, 3])
def test_roi_align_max(tmp_path, version, aligned, ratio):
    """max: the largest bilinear sample of each bin, and 0 (OpenVINO's pooled value starts at 0:
    mostly negative maps give zeros), in OpenVINO's float order; at opsets 14 and 18 too."""
    xml = _ir(tmp_path, version, ratio, aligned, mode="max")
    feeds = {"x": _data(seed=7) - 1.0, "rois": ROIS, "batch": BATCH}
    for opset in (14, 17, 18):
        got = _agree(xml, feeds, opset=opset)
    assert (got == 0).any() and (got > 0.2).any()
    assert "RoiAlign" not in [n.op_type for n in convert(xml).graph.node]


def test_roi_align_max_f16_dynamic_rois(tmp_path):
    xml = _ir(tmp_path, 9, 2, "half_pixel_for_nn", dtype=np.float16, mode="max")
    for count in (5, 2):
        feeds = {"x": _data(np.float16, seed=8), "rois": ROIS[:count].astype(np.float16), "batch": BATCH[:count]}
        assert _agree(xml, feeds, np.float16).shape == (count, 3, 3, 2)


def test_roi_align_max_adaptive_grid_and_bad_attributes_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="mode=max with sampling_ratio=0"):
        convert(_ir(tmp_path, 9, 0, "half_pixel", mode="max"))
    xml = _ir(tmp_path, 3, 2)
    bad = tmp_path / "bad.xml"
    bad.write_text(xml.read_text().replace('sampling_ratio="2"', 'sampling_ratio="-1"'))
    (tmp_path / "bad.bin").write_bytes((tmp_path / "ra.bin").read_bytes())
    with pytest.raises(InvalidLayer, match="sampling_ratio -1"):
        convert(bad)
