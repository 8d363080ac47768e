"""samples/rcnn: the committed Faster R-CNN- and R-FCN-style IRs (samples/make_rcnn.py: Caffe and
TensorFlow shapes of the Open Model Zoo's two-stage detectors; Proposal-4 with a run-time
im_info, ROIPooling-2 max/bilinear or PSROIPooling-1 average/bilinear, DetectionOutput-1 on the
proposals; FP16-compressed weights). onnxruntime against OpenVINO's saved output, OpenVINO itself
and the oracle, row for row: image ids, labels and the row order exactly, scores and coordinates
within 1e-4 (1e-5 to the oracle), on several seeded images with several detections each."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_check, run_onnx, run_openvino

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "samples" / "rcnn"
NAMES = ("faster_rcnn", "faster_rcnn_tf", "rfcn", "rfcn_tf")


def _make_rcnn():
    spec = importlib.util.spec_from_file_location("make_rcnn", ROOT / "samples" / "make_rcnn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MAKE = _make_rcnn()


def _rows_equal(got, other, tol):
    assert got.shape == other.shape and got.dtype == other.dtype == np.float32
    np.testing.assert_array_equal(got[..., :2], other[..., :2])  # image ids (-1 ends), labels, order
    np.testing.assert_allclose(got[..., 2:], other[..., 2:], rtol=tol, atol=tol)


def _compare(xml, feeds):
    """onnxruntime's detections equal OpenVINO's and the oracle's row for row; returns [rows, 7]."""
    got = run_onnx(xml, feeds)[0]
    _rows_equal(got, run_openvino(xml, feeds)[0], 1e-4)
    _rows_equal(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], 1e-5)
    return got[0, 0]


def _detections(det, image):
    """The rows of ``image`` before the row that ends the detections."""
    end = np.flatnonzero(det[:, 0] == -1)
    rows = det[:end[0] if len(end) else len(det)]
    return rows[rows[:, 0] == image]


def _nontrivial(det, images, least=4):
    """Every image has several detections, of real classes, with distinct scores above the
    threshold, class by class and score descending within a class; returns the labels seen."""
    labels = set()
    for image in range(images):
        rows = _detections(det, image)
        assert len(rows) >= least, (image, len(rows))
        assert (rows[:, 1] >= 1).all() and (rows[:, 2] > MAKE.DETECTION["confidence_threshold"]).all()
        assert len(np.unique(rows[:, 2])) == len(rows)  # no tied scores
        assert (np.diff(rows[:, 1]) >= 0).all()
        for label in np.unique(rows[:, 1]):
            assert (np.diff(rows[rows[:, 1] == label, 2]) < 0).all()
        labels |= set(rows[:, 1].tolist())
    return labels


@pytest.mark.parametrize("name", NAMES)
def test_sample_is_zoo_shaped(name):
    """The committed IR is what the tests claim: OpenVINO wrote it with f16 weights, the zoo's
    two-stage ops and attributes, image and im_info as inputs."""
    text = (FOLDER / f"{name}.xml").read_text()
    tf = name.endswith("_tf")
    needles = ['element_type="f16"', 'type="Proposal" version="opset4"', 'type="DetectionOutput" version="opset1"',
               f'framework="{"tensorflow" if tf else ""}"', f'normalize="{str(tf).lower()}"',
               f'normalized="{str(tf).lower()}"', f'variance_encoded_in_target="{str(not tf).lower()}"',
               f'share_location="{str(name.startswith("rfcn")).lower()}"', 'name="im_info"', 'name="img"',
               'type="SoftMax"', 'type="MatMul"' if name.startswith("faster") else 'type="PSROIPooling"']
    if name.startswith("faster"):
        needles += ['type="ROIPooling" version="opset2"', f'method="{"bilinear" if tf else "max"}"']
    else:
        needles += [f'mode="{"bilinear" if tf else "average"}"', 'type="ReduceMean"' if tf else 'type="AvgPool"']
    for needle in needles:
        assert needle in text, needle
    assert (FOLDER / f"{name}.bin").stat().st_size < 2 * 2**20
    if name == "faster_rcnn":
        assert "<dim>-1</dim>" in text  # a dynamic batch


@pytest.mark.parametrize("name", NAMES)
def test_sample_matches_saved_openvino_output(name):
    feeds = {"img": np.load(FOLDER / "img.npy"), "im_info": np.load(FOLDER / "im_info.npy")}
    xml = FOLDER / f"{name}.xml"
    det = _compare(xml, feeds)
    _rows_equal(run_onnx(xml, feeds)[0], np.load(FOLDER / f"{name}_detections.npy"), 1e-4)
    _nontrivial(det, 1)


@pytest.mark.parametrize("name", NAMES)
def test_sample_matches_openvino(name):
    """Four seeded images (the Caffe Faster R-CNN also in batches of two): every image has several
    detections; over the seeds at least two classes are detected."""
    labels = set()
    for seed in range(1, 5):
        batch = 2 if name == "faster_rcnn" and seed % 2 else 1
        feeds = {"img": MAKE.image(seed, batch), "im_info": MAKE.IM_INFO}
        labels |= _nontrivial(_compare(FOLDER / f"{name}.xml", feeds), batch)
    assert len(labels) >= 2


def test_batch_rows_are_per_image():
    """In a batch each image gets the detections it gets alone (ROIs of image 1 pool image 1)."""
    xml = FOLDER / "faster_rcnn.xml"
    img = np.concatenate([MAKE.image(5), MAKE.image(6)])
    both = run_onnx(xml, {"img": img, "im_info": MAKE.IM_INFO})[0][0, 0]
    for n in range(2):
        alone = run_onnx(xml, {"img": img[n:n + 1], "im_info": MAKE.IM_INFO})[0][0, 0]
        np.testing.assert_array_equal(_detections(alone, 0)[:, 1:], _detections(both, n)[:, 1:])


@pytest.mark.parametrize("name", NAMES)
def test_ir2onnx_check_passes(name):
    assert_check(FOLDER / f"{name}.xml", inputs={"img": np.load(FOLDER / "img.npy"),
                                                 "im_info": np.load(FOLDER / "im_info.npy")})


def _padded(tmp_path, name):
    """The sample with post_nms_topn 150: fewer boxes survive Proposal's NMS, so each image's rois
    end with a -1 row and zeros; the rois are a second output."""
    import openvino as ov

    model = MAKE.build(name, count=150)
    proposal = next(op for op in model.get_ops() if op.get_type_name() == "Proposal")
    model.add_outputs(proposal.output(0))
    xml = tmp_path / f"{name}.xml"
    ov.save_model(model, str(xml))
    return xml


@pytest.mark.parametrize("name", NAMES)
def test_padded_proposals(tmp_path, name):
    """ROIPooling/PSROIPooling stop at Proposal's -1 row (OpenVINO's CPU plugin: that ROI and the
    later ones give 0) and DetectionOutput's not-normalized proposals end there."""
    xml = _padded(tmp_path, name)
    for seed in (1, 2):
        feeds = {"img": MAKE.image(seed), "im_info": MAKE.IM_INFO}
        det = _compare(xml, feeds)
        rois = run_onnx(xml, feeds)[1]
        ov_rois = run_openvino(xml, feeds)[1]
        np.testing.assert_array_equal(rois[:, 0], ov_rois[:, 0])
        np.testing.assert_allclose(rois[:, 1:], ov_rois[:, 1:], rtol=1e-4, atol=1e-4)
        end = np.flatnonzero(rois[:, 0] == -1)
        assert len(end) == 1 and 20 < end[0] < 150 and not rois[end[0] + 1:].any()
        _nontrivial(det, 1)


def test_padded_batch_zeroes_the_next_image(tmp_path):
    """In a batch, image 0's -1 row also ends image 1's rois for ROIPooling (OpenVINO's CPU
    plugin): image 1's ROIs all pool 0, so its detections share one score per class; onnxruntime
    gives OpenVINO's rows."""
    xml = _padded(tmp_path, "faster_rcnn")
    feeds = {"img": np.concatenate([MAKE.image(3), MAKE.image(4)]), "im_info": MAKE.IM_INFO}
    det = _compare(xml, feeds)
    rois = run_onnx(xml, feeds)[1]
    assert (rois[:150, 0] == -1).any() and (rois[150:, 0] == 1).any()
    _nontrivial(det, 1)
    second = _detections(det, 1)
    assert len(second) >= 4
    for label in np.unique(second[:, 1]):
        assert len(np.unique(second[second[:, 1] == label, 2])) == 1
