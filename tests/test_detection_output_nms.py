"""DetectionOutput's NMS at its edges, on OpenVINO-written IR: onnxruntime equals OpenVINO's CPU
plugin and the oracle exactly. CORNER code with zero priors and variance_encoded_in_target makes
the decoded boxes the fed box_logits bit for bit (``0 + loc``), so every IoU is the plugin's f32
``JaccardOverlap``: the IoU equal to nms_threshold and one ulp above it, boxes that touch or
overlap by one ulp, inverted boxes, boxes not normalized (no ``+ 1`` in the sizes, also for
sub-pixel boxes), equal scores (the smaller prior first, also under top_k), infinite and NaN
boxes."""
from __future__ import annotations

import re

import numpy as np
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

CORNER = "caffe.PriorBoxParameter.CORNER"
F = np.float32


def _detections(tmp_path, boxes, scores, *, version=8, prior=None, short=False, **attrs):
    """The rows ``[image, label, score, x0, y0, x1, y1]`` before the -1 row of one image whose
    priors have ``boxes`` [P, 4] (fed as box_logits) and class-1 ``scores`` [P] (class 0 is the
    background), asserted equal in onnxruntime, OpenVINO and the oracle. ``short``: the IR's
    nms_threshold is rewritten as the shortest decimal of its f32 (as the Model Optimizer wrote
    it, e.g. "0.45"; OpenVINO writes 17 digits, the exact value)."""
    boxes, scores = np.asarray(boxes, F), np.asarray(scores, F)
    p = len(scores)
    loc, conf = ov_parameter([None, p * 4], name="loc"), ov_parameter([None, p * 2], name="conf")
    full = dict(dict(keep_top_k=[-1], top_k=-1, nms_threshold=0.5, confidence_threshold=0.0, code_type=CORNER,
                     normalized=True, variance_encoded_in_target=True, background_label_id=0), **attrs)
    if prior is None:
        prior = np.zeros((1, 1, p * 4), F)
    if version == 1:
        full["num_classes"] = 2
    node = (o1 if version == 1 else o8).detection_output(loc, conf, ops.constant(prior), full)
    xml = ov_save(tmp_path / "det.xml", node, [loc, conf], compress_to_fp16=True)
    if short:
        text = np.format_float_positional(F(full["nms_threshold"]), unique=True)
        xml.write_text(re.sub(r'nms_threshold="[^"]*"', f'nms_threshold="{text}"', xml.read_text()))
    feeds = {"loc": boxes.reshape(1, -1), "conf": np.stack([np.zeros(p, F), scores], 1).reshape(1, -1)}
    got = run_onnx(xml, feeds)[0]
    for other in (run_openvino(xml, feeds)[0], list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]):
        np.testing.assert_array_equal(got, other)
    rows = got[0, 0]
    end = np.flatnonzero(rows[:, 0] == -1)
    return rows[:end[0]] if len(end) else rows


def _plugin_iou(a, b):
    """The CPU plugin's JaccardOverlap in f32, one operation at a time."""
    w = F(min(a[2], b[2]) - max(a[0], b[0]))
    h = F(min(a[3], b[3]) - max(a[1], b[1]))
    if w <= 0 or h <= 0:
        return F(0)
    inter = F(w * h)
    sa, sb = F(F(a[2] - a[0]) * F(a[3] - a[1])), F(F(b[2] - b[0]) * F(b[3] - b[1]))
    return F(inter / F(F(sb + sa) - inter))


@pytest.mark.parametrize("seed,short", [(None, False), (0, False), (0, True), (1, True), (2, False)])
def test_iou_at_the_threshold_and_one_ulp_above(tmp_path, seed, short):
    """Box 1 survives a threshold equal to its f32 IoU with box 0 (``iou > t`` is false) and is
    dropped at the f32 threshold one ulp below its IoU; seed None: the dyadic IoU f32(1/3). The
    threshold is an f32 also when the IR writes a shorter decimal (seed 0: "0.41936627", below
    the f32 IoU 0.41936627030372620 as a double)."""
    if seed is None:
        boxes = np.array([[0, 0, 1, 1], [.5, 0, 1.5, 1]], F)
    else:
        rng = np.random.default_rng(seed)
        lo = rng.uniform(0, .3, (2, 2))
        boxes = np.concatenate([lo, lo + rng.uniform(.5, .7, (2, 2))], 1).astype(F)
    iou = _plugin_iou(boxes[1], boxes[0])
    assert 0 < iou < 1
    kept = _detections(tmp_path, boxes, [.9, .8], nms_threshold=float(iou), short=short)
    assert kept[:, 2].tolist() == [F(.9), F(.8)]
    dropped = _detections(tmp_path, boxes, [.9, .8], nms_threshold=float(np.nextafter(iou, F(0))), short=short)
    assert dropped[:, 2].tolist() == [F(.9)]


@pytest.mark.parametrize("version", [1, 8])
def test_touching_boxes_do_not_overlap(tmp_path, version):
    """nms_threshold 0: boxes sharing an edge or a corner are both kept (IoU 0), a box that
    overlaps by one ulp is dropped."""
    half = F(.5)
    below = np.nextafter(half, F(0))
    boxes = [[0, 0, half, half], [half, 0, 1, half], [half, half, 1, 1], [0, half, half, 1],
             [below, below, 1, 1]]
    det = _detections(tmp_path, boxes, [.9, .8, .7, .6, .5], nms_threshold=0.0, version=version)
    assert det[:, 2].tolist() == [F(s) for s in (.9, .8, .7, .6)]


@pytest.mark.parametrize("size,threshold,rows", [(8, .35, 2), (8, .3, 1), (.5, .12, 2), (.5, .1, 1)])
def test_not_normalized_sizes_have_no_plus_one(tmp_path, size, threshold, rows):
    """normalized false (priors in pixels with an image id, divided by input_width/height 16):
    two priors of ``size`` pixels shifted by half their width have IoU 1/3 without ``+ 1``
    (kept at 0.35, dropped at 0.3; ``+ 1`` pixel would give 0.385), sub-pixel ones shifted by
    0.4 pixel IoU 0.111 (kept at 0.12, dropped at 0.1; ``+ 1`` would give 0.58)."""
    half = {8: 4, .5: .4}[size]
    px = np.array([[0, 0, 0, size, size], [0, half, 0, half + size, size]], F)
    det = _detections(tmp_path, np.zeros((2, 4)), [.9, .8], prior=px.reshape(1, 1, -1), normalized=False,
                      input_width=16, input_height=16, nms_threshold=threshold)
    assert len(det) == rows
    np.testing.assert_array_equal(det[0, 3:], px[0, 1:] / F(16))


def test_inverted_boxes_overlap_nothing(tmp_path):
    """Boxes decoded with xmax < xmin and/or ymax < ymin (the last one with a positive area in
    the plugin's ``(x1 - x0) * (y1 - y0)``) never suppress nor are suppressed, whatever their
    score; ONNX NonMaxSuppression alone would reorder their corners."""
    boxes = [[.6, 0, .2, 1], [0, 0, 1, 1], [0, .9, 1, .1], [.9, .9, .1, .1], [.1, .1, .9, .9]]
    det = _detections(tmp_path, boxes, [.9, .8, .7, .6, .5], nms_threshold=0.3)
    assert det[:, 2].tolist() == [F(s) for s in (.9, .8, .7, .6)]  # the last one overlaps box 1


@pytest.mark.parametrize("style", ["caffe", "mxnet"])
def test_equal_scores_go_by_prior(tmp_path, style):
    """Equal scores: the smaller prior comes first. Box 0 overlaps boxes 1 and 2, which do not
    overlap each other: prior order keeps box 0 alone; any other order would keep 1 and 2. top_k
    2 of the four equal ones keeps priors 0 and 1 (two boxes that touch), not 2 and 3 (one
    suppresses the other)."""
    boxes = [[.25, 0, .75, 1], [0, 0, .5, 1], [.5, 0, 1, 1], [.3, 0, .8, 1]]
    attrs = dict(decrease_label_id=True) if style == "mxnet" else {}
    det = _detections(tmp_path, boxes, [.5] * 4, nms_threshold=0.3, **attrs)
    np.testing.assert_array_equal(det[:, 3:], np.array(boxes[:1], F))
    order = [boxes[1], boxes[2], boxes[0], boxes[3]]
    det = _detections(tmp_path, order, [.5] * 4, nms_threshold=0.3, top_k=2, **attrs)
    np.testing.assert_array_equal(det[:, 3:], np.array(order[:2], F))


def test_infinite_and_nan_boxes(tmp_path):
    """Two equal infinite boxes have IoU inf / NaN (kept), a box with a NaN corner has a NaN
    intersection or union with every box (kept), a finite box inside an infinite one has IoU 0
    (kept), two finite equal boxes IoU 1 (dropped)."""
    inf = np.inf
    boxes = [[-inf, -inf, inf, inf], [-inf, -inf, inf, inf], [np.nan, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]
    det = _detections(tmp_path, boxes, [.9, .8, .7, .6, .5], nms_threshold=0.5)
    assert det[:, 2].tolist() == [F(.9), F(.8), F(.7), F(.6)]
