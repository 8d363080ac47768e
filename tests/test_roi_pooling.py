"""ROIPooling-2 on OpenVINO-written IR. max: onnxruntime equals the oracle and OpenVINO bit for
bit (run-time ROIs, dynamic dims, f16), and an ONNX MaxRoiPool read by OpenVINO round-trips to
onnxruntime's result on the original model. bilinear (an explicit chain): within rtol/atol 1e-5
of the float64 oracle and of OpenVINO."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset2 as ops2
import pytest
from onnx import TensorProto, helper

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere

# corners at half cells, past the map, malformed (end before start), a tiny one
ROIS = np.array([[0, 0.3, 1.2, 5.5, 6.1], [1, 2, 2, 2.4, 2.2], [1, -3, -2, 12, 11], [0, 1, 0.5, 7.9, 3.3],
                 [1, 2.5, 1.5, 6.5, 4.5], [0, 5, 5, 1, 1], [1, 7.6, 6.6, 30, 30]], np.float32)


def _numpy(x, rois, ph, pw, scale):
    out = np.zeros((len(rois), x.shape[1], ph, pw), x.dtype)
    rnd = lambda v: int(np.sign(v) * np.floor(abs(v) + 0.5))  # noqa: E731
    for k, r in enumerate(rois):
        x1, y1, x2, y2 = (rnd(float(np.float32(r[i]) * np.float32(scale))) for i in range(1, 5))
        h, w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph):
            for j in range(pw):
                hs = slice(min(max(int(np.floor(i * h / ph)) + y1, 0), x.shape[2]),
                           min(max(int(np.ceil((i + 1) * h / ph)) + y1, 0), x.shape[2]))
                ws = slice(min(max(int(np.floor(j * w / pw)) + x1, 0), x.shape[3]),
                           min(max(int(np.ceil((j + 1) * w / pw)) + x1, 0), x.shape[3]))
                block = x[int(r[0]), :, hs, ws]
                if block.size:
                    out[k, :, i, j] = block.reshape(x.shape[1], -1).max(1)
    return out


def _ir(tmp_path, ph, pw, scale, dtype=np.float32, method="max"):
    x = ov_parameter((None, 3, None, None), dtype, "x")
    rois = ov_parameter((None, 5), dtype, "rois")
    return ov_save(tmp_path / "rp.xml", ops2.roi_pooling(x, rois, [ph, pw], scale, method), [x, rois])


@pytest.mark.parametrize("ph, pw", [(3, 2), (1, 1), (4, 5)])
@pytest.mark.parametrize("scale", [1.0, 0.5, 0.25])
def test_roi_pooling(tmp_path, ph, pw, scale):
    xml = _ir(tmp_path, ph, pw, scale)
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype(np.float32)
    got = bitexact_everywhere(xml, {"x": x, "rois": ROIS}, _numpy(x, ROIS, ph, pw, scale))
    assert got.shape == (len(ROIS), 3, ph, pw) and (got != 0).any()


def test_roi_pooling_f16(tmp_path):
    xml = _ir(tmp_path, 2, 3, 0.5, np.float16)
    x = np.random.default_rng(1).standard_normal((2, 3, 10, 7)).astype(np.float16)
    rois = ROIS.astype(np.float16)
    got = bitexact_everywhere(xml, {"x": x, "rois": rois}, _numpy(x, rois, 2, 3, 0.5))
    assert got.dtype == np.float16


def test_roi_pooling_onnx_round_trip(tmp_path):
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[3, 2], spatial_scale=0.5)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 9]),
                                            helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["r", 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"x": np.random.default_rng(2).standard_normal((2, 3, 8, 9)).astype(np.float32), "rois": ROIS}
    framework = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    xml = tmp_path / "rp.xml"
    ov.save_model(ov.Core().read_model(model.SerializeToString(), b""), str(xml))
    assert "ROIPooling" in xml.read_text()
    assert_bitexact(bitexact_everywhere(xml, feeds), framework, "onnxruntime on the original ONNX model")


BILINEAR_ROIS = np.array([[0, 0.1, 0.2, 0.7, 0.9], [1, 0.5, 0.5, 0.5, 0.5], [1, -0.2, 0.1, 1.3, 0.8],
                          [0, 0.9, 0.8, 0.1, 0.2], [1, 0, 0, 1, 1]], np.float32)


@pytest.mark.parametrize("ph, pw", [(3, 2), (1, 1), (4, 5), (1, 3)])
def test_roi_pooling_bilinear(tmp_path, ph, pw):
    """Normalised ROIs: inside, a point, partly outside (those samples are 0), reversed, whole map."""
    xml = _ir(tmp_path, ph, pw, 1.0, method="bilinear")
    feeds = {"x": np.random.default_rng(3).standard_normal((2, 3, 8, 9)).astype(np.float32), "rois": BILINEAR_ROIS}
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    assert got.shape == (5, 3, ph, pw)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5, atol=1e-6)
    corner = feeds["x"][1, :, 0, 0] if ph > 1 and pw > 1 else None
    if corner is not None:  # the whole-map ROI starts at the map's corner exactly
        np.testing.assert_allclose(got[4, :, 0, 0], corner, rtol=1e-6)


def test_roi_pooling_bilinear_f16_dynamic(tmp_path):
    xml = _ir(tmp_path, 2, 3, 1.0, np.float16, method="bilinear")
    for size in ((1, 3, 6, 7), (2, 3, 9, 5)):
        feeds = {"x": np.random.default_rng(4).standard_normal(size).astype(np.float16),
                 "rois": (BILINEAR_ROIS[:size[0] * 2 + 1] * [0, 1, 1, 1, 1]).astype(np.float16)}
        got = run_onnx(xml, feeds)[0]
        assert got.dtype == np.float16 and got.shape == (len(feeds["rois"]), 3, 2, 3)
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=2e-3, atol=2e-3)



# Proposal's output: image 0's rois, its end row (-1), zeros, image 1's rois
PROPOSALS = np.array([[0, 0.3, 1.2, 5.5, 6.1], [0, 1, 0.5, 7.9, 3.3], [-1, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                      [1, 2, 2, 2.4, 2.2], [1, 2.5, 1.5, 6.5, 4.5]], np.float32)


@pytest.mark.parametrize("method", ["max", "bilinear"])
@pytest.mark.parametrize("end", [(2, -1.0), (1, -1.7), (0, -1.0), (None, None)])
def test_roi_pooling_ends_at_batch_id_minus_one(tmp_path, method, end):
    """The first ROI whose batch id truncates to -1 (the row that ends Proposal's output) ends the
    list, as OpenVINO's CPU plugin runs it: that ROI and every later one, image 1's too, give 0
    (ids in (-1, 0) truncate to image 0). Before, MaxRoiPool failed at run time on -1 and the
    bilinear chain pooled image N - 1."""
    rois = PROPOSALS.copy()
    at, value = end
    if at is None:
        rois[2, 0] = -0.5  # image 0
    else:
        rois[at, 0] = value
    scale = 1.0 if method == "bilinear" else 0.5
    if method == "bilinear":
        rois[:, 1:] /= 9
    xml = _ir(tmp_path, 2, 3, scale, method=method)
    feeds = {"x": np.random.default_rng(5).uniform(1, 2, (2, 3, 8, 9)).astype(np.float32), "rois": rois}
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5, atol=1e-6)
    live = len(rois) if at is None else at
    assert (got[:live] > 0).all() and not got[live:].any()


def test_roi_pooling_refusals(tmp_path):
    (tmp_path / "f64").mkdir()
    with pytest.raises(UnsupportedLayer, match="f64"):
        convert(_ir(tmp_path / "f64", 2, 2, 1.0, np.float64))
