"""samples/ssd: the committed SSD-style IR (the head of the Open Model Zoo's face/person detection
IRs: PriorBoxClustered fed by ShapeOf + StridedSlice of two feature maps and the image,
DetectionOutput-1 with the zoo's attributes, FP16-compressed weights, a dynamic batch).
onnxruntime against OpenVINO's saved output, OpenVINO itself and the oracle, row for row: image
ids, labels and the row order exactly, scores and coordinates within 1e-4 (1e-5 to the oracle)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_check, ov_save, run_onnx, run_openvino

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "samples" / "ssd"
XML = FOLDER / "ssd.xml"


def _make_ssd():
    spec = importlib.util.spec_from_file_location("make_ssd", ROOT / "samples" / "make_ssd.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows_equal(got, other, tol):
    assert got.shape == other.shape and got.dtype == other.dtype == np.float32
    np.testing.assert_array_equal(got[..., :2], other[..., :2])  # image ids (-1 ends), labels, order
    np.testing.assert_allclose(got[..., 2:], other[..., 2:], rtol=tol, atol=tol)


def _compare(xml, img):
    """onnxruntime's detections equal OpenVINO's and the oracle's row for row; returns [rows, 7]."""
    feeds = {"img": img}
    got = run_onnx(xml, feeds)[0]
    _rows_equal(got, run_openvino(xml, feeds)[0], 1e-4)
    _rows_equal(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], 1e-5)
    return got[0, 0]


def test_sample_is_zoo_shaped():
    """The committed IR is what the tests claim: OpenVINO wrote it with f16 weights, a dynamic
    batch, the zoo's prior and detection ops and attributes."""
    text = XML.read_text()
    for needle in ('element_type="f16"', 'type="PriorBoxClustered" version="opset1"', 'type="ShapeOf"',
                   'type="StridedSlice"', 'type="DetectionOutput" version="opset1"', 'type="SoftMax"',
                   'code_type="caffe.PriorBoxParameter.CENTER_SIZE"', 'keep_top_k="200"', 'top_k="400"',
                   'background_label_id="0"', 'share_location="true"', 'nms_threshold="0.449999',
                   'confidence_threshold="0.0099999', '<dim>-1</dim>'):
        assert needle in text, needle
    assert text.count('type="PriorBoxClustered"') == 2 and text.count('type="ShapeOf"') == 4
    assert XML.with_suffix(".bin").stat().st_size < 2 * 2**20


def test_sample_matches_saved_openvino_output():
    img = np.load(FOLDER / "img.npy")
    det = _compare(XML, img)
    saved = np.load(FOLDER / "detections.npy")
    _rows_equal(run_onnx(XML, {"img": img})[0], saved, 1e-4)
    assert det.shape == (2 * 200, 7) and set(det[:, 0]) == {0, 1}  # both images fill keep_top_k
    assert set(det[:, 1]) == {1, 2}  # never the background
    for image in (0, 1):  # rows class by class, scores descending within a class
        rows = det[det[:, 0] == image]
        assert (np.diff(rows[:, 1]) >= 0).all() and rows[:, 2].min() > 0.01
        for label in (1, 2):
            assert (np.diff(rows[rows[:, 1] == label, 2]) <= 0).all()


@pytest.mark.parametrize("seed,batch,kind", [(0, 1, "uniform"), (1, 2, "normal"), (2, 3, "uniform"),
                                             (3, 1, "normal"), (4, 2, "bright")])
def test_sample_matches_openvino(seed, batch, kind):
    rng = np.random.default_rng(seed)
    img = {"uniform": lambda: rng.uniform(0, 1, (batch, 3, 64, 64)),
           "normal": lambda: rng.standard_normal((batch, 3, 64, 64)),
           "bright": lambda: rng.uniform(0, 1, (batch, 3, 64, 64)) * 8 + 2}[kind]().astype(np.float32)
    det = _compare(XML, img)
    assert det.shape == (batch * 200, 7)
    one = run_onnx(XML, {"img": img[-1:]})[0][0, 0]  # the last image alone: its own rows
    last = det[det[:, 0] == batch - 1]
    np.testing.assert_array_equal(one[one[:, 0] >= 0][:, 1:], last[:, 1:])


@pytest.mark.parametrize("attrs", [dict(confidence_threshold=0.45, keep_top_k=[50]),
                                   dict(confidence_threshold=0.3, top_k=20, nms_threshold=0.3),
                                   dict(keep_top_k=[-1], top_k=30)])
def test_sample_head_other_thresholds(tmp_path, attrs):
    """The sample's graph with stricter DetectionOutput attributes: images with fewer detections
    than keep_top_k (OpenVINO's -1 row then zeros), top_k cutting each class, no keep_top_k."""
    import openvino as ov

    xml = tmp_path / "ssd.xml"
    ov.save_model(_make_ssd().build(**attrs), str(xml))
    for seed in range(3):
        img = np.random.default_rng(seed).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32)
        det = _compare(xml, img)
        end = np.flatnonzero(det[:, 0] == -1)  # the row that ends the detections, zeros after it
        kept = end[0] if len(end) else len(det)
        assert kept > 0 and (det[:kept, 0] >= 0).all() and not det[kept + 1:].any()
        if attrs.get("keep_top_k") == [50]:
            assert kept < 100 and len(det) == 100


def test_ir2onnx_check_passes():
    assert_check(XML, inputs={"img": np.load(FOLDER / "img.npy")})
    assert_check(XML, seed=3)  # generated normal input, batch 1


def test_docs_show_this_sample():
    """The Open Model Zoo page (docs/open-model-zoo.md) runs the sample's files with the shapes they have."""
    text = (ROOT / "docs" / "open-model-zoo.md").read_text(encoding="utf-8")
    assert "$ ir2onnx convert samples/ssd/ssd.xml -o ssd.onnx" in text
    assert "$ ir2onnx check samples/ssd/ssd.xml --input img=samples/ssd/img.npy" in text
    assert "img        [2,3,64,64] float32  given" in text and "shape [1,1,400,7]  float32" in text
    assert np.load(FOLDER / "img.npy").shape == (2, 3, 64, 64)
    assert np.load(FOLDER / "detections.npy").shape == (1, 1, 400, 7)
