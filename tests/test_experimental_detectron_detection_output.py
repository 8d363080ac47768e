"""ExperimentalDetectronDetectionOutput-6 on IR that OpenVINO writes (all inputs run-time
Parameters, dynamic N): onnxruntime row for row against OpenVINO's CPU plugin and the oracle
(classes exact, boxes and scores within 1e-4: exp differs by an ulp between libraries), the
+1 overlap and its "apart" test, the two output orders, the padding, and a Mask R-CNN-style
chain (proposals -> ROI features -> an f16 fc head -> detections) end to end."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest
from openvino.utils.node_factory import NodeFactory

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_check, ov_parameter, ov_save, run_onnx, run_openvino

ATTRS = dict(score_threshold=0.3, nms_threshold=0.5, max_delta_log_wh=4.135, num_classes=4, post_nms_count=5,
             max_detections_per_image=12, class_agnostic_box_regression=False, deltas_weights=[10.0, 10.0, 5.0, 5.0])
TOL = dict(rtol=0, atol=1e-4)


def _node(ins, attrs):
    ins = [x if hasattr(x, "get_tensor") else x.output(0) for x in ins]  # Outputs or nodes
    return NodeFactory("opset6").create("ExperimentalDetectronDetectionOutput", ins, attrs)


def _model(tmp_path, attrs=ATTRS, name="edo.xml"):
    c = attrs["num_classes"]
    ins = [ov_parameter([None, 4], np.float32, "rois"), ov_parameter([None, 4 * c], np.float32, "deltas"),
           ov_parameter([None, c], np.float32, "scores"), ov_parameter([1, 3], np.float32, "im_info")]
    node = _node(ins, attrs)
    for i, out in enumerate(("boxes", "classes", "det_scores")):
        node.output(i).get_tensor().set_names({out})
    return ov_save(tmp_path / name, [node.output(i) for i in range(3)], ins, compress_to_fp16=True)


def _feeds(seed, n=10, c=4, image=30):
    """Rois in a 50-pixel square (many overlaps, some beyond the image), one without width."""
    rng = np.random.default_rng(seed)
    xy, wh = rng.uniform(0, 50, (n, 2)), rng.uniform(5, 40, (n, 2))
    rois = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    rois[3, 2] = rois[3, 0]
    return {"rois": rois, "deltas": rng.normal(0, 1, (n, 4 * c)).astype(np.float32),
            "scores": rng.uniform(0, 1, (n, c)).astype(np.float32), "im_info": np.float32([[image, image, 1]])}


def _check(xml, feeds):
    """onnxruntime against OpenVINO and the oracle row for row; returns onnxruntime's outputs."""
    got = run_onnx(xml, feeds)
    assert [g.dtype for g in got] == [np.float32, np.int32, np.float32]
    for other in (run_openvino(xml, feeds), list(evaluate(ir2onnx.load_ir(xml), feeds).values())):
        assert [o.shape for o in other] == [g.shape for g in got]
        np.testing.assert_array_equal(got[1], other[1])
        np.testing.assert_allclose(got[0], other[0], **TOL)
        np.testing.assert_allclose(got[2], other[2], **TOL)
    return got


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_more_than_max_detections_sorted_by_score(tmp_path, seed):
    boxes, classes, scores = _check(_model(tmp_path), _feeds(seed))
    assert classes.shape == (12,) and (classes > 0).all() and (np.diff(scores) <= 0).all()
    assert len(set(classes)) == 3 and boxes.max() > 30  # all classes; boxes not clipped to the 30x30 image


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fewer_than_max_detections_class_by_class(tmp_path, seed):
    boxes, classes, scores = _check(_model(tmp_path, dict(ATTRS, max_detections_per_image=40)), _feeds(seed))
    live = classes > 0
    assert 12 < live.sum() <= 15 and (np.diff(classes[live]) >= 0).all()  # class order, NMS order inside
    assert not live[live.sum():].any() and not boxes[~live].any() and not scores[~live].any()  # zero rows
    for c in (1, 2, 3):
        assert (np.diff(scores[classes == c]) <= 0).all()


def test_all_kept_and_negative_threshold(tmp_path):
    """post_nms_count -1 keeps every NMS survivor; with score_threshold < 0 the roi without width
    takes part with its zero box and zero score."""
    attrs = dict(ATTRS, post_nms_count=-1, score_threshold=-1.0, max_detections_per_image=60)
    boxes, classes, scores = _check(_model(tmp_path, attrs), _feeds(1))
    zero = (classes > 0) & (scores == 0)
    assert zero.sum() == 3 and not boxes[zero].any()  # the empty roi, once per class


def test_run_time_shapes(tmp_path):
    """One IR, other numbers of rois: 1, 25, and none above the threshold (all zeros)."""
    xml = _model(tmp_path)
    one = {k: v if k == "im_info" else v[:1] for k, v in _feeds(7).items()}
    assert (_check(xml, one)[1] > 0).sum() == (one["scores"][0, 1:] > np.float32(0.3)).sum()
    _check(xml, _feeds(7, n=25))
    feeds = _feeds(8)
    feeds["scores"] *= np.float32(0.25)
    out = _check(xml, feeds)
    assert not any(o.any() for o in out)


def _pair_feeds(second):
    """Two rois, class 1 scores 0.9 and 0.8, zero deltas (the boxes are the rois)."""
    return {"rois": np.float32([[0, 0, 9, 9], second]), "deltas": np.zeros((2, 8), np.float32),
            "scores": np.float32([[0, 0.9], [0, 0.8]]), "im_info": np.float32([[20, 20, 1]])}


@pytest.mark.parametrize("second, kept", [
    ([5, 0, 14, 9], 1),      # +1 sizes: inter 5 * 10 = 50 of 150 -> 0.333 > 0.3 (no offset: 36/126 = 0.286)
    ([9.5, 0, 18.5, 9], 2),  # apart (xmin2 > xmax1) although min - max + 1 = 0.5 > 0 (5 / 195 > 0.01)
    ([9, 0, 18, 9], 1),      # touching: width 1 of the +1 overlap, 10 / 190 = 0.053 > 0.01
])
def test_overlap_with_plus_one(tmp_path, second, kept):
    attrs = dict(ATTRS, num_classes=2, nms_threshold=0.3 if second[0] == 5 else 0.01, deltas_weights=[1.0] * 4)
    boxes, classes, scores = _check(_model(tmp_path, attrs), _pair_feeds(second))
    assert (classes > 0).sum() == kept
    np.testing.assert_array_equal(boxes[0], [0, 0, 9, 9])


def test_negative_nms_threshold_and_empty_intersections(tmp_path):
    """The boxes touch, but the first has width 0 and the second height 0 (exp(-200) = 0), so a
    side of their intersection is 0 and both areas are 0: the overlap is 0 (the plugin's
    JaccardOverlap), not 0 / 0 = NaN, and nms_threshold -0.5 drops the second (measured)."""
    feeds = _pair_feeds([0, 5, 19, 14])
    feeds["rois"][0] = [0, 0, 9, 19]
    feeds["deltas"][:, 4:] = [[0, 0, -200, 0], [0, 0, 0, -200]]
    for thr, kept in ((-0.5, 1), (0.5, 2)):
        attrs = dict(ATTRS, num_classes=2, nms_threshold=thr, deltas_weights=[1.0] * 4)
        boxes, classes, _ = _check(_model(tmp_path, attrs, f"t{thr}.xml"), feeds)
        assert (classes > 0).sum() == kept
    np.testing.assert_array_equal(boxes[:2], [[5, 0, 4, 19], [0, 10, 19, 9]])


@pytest.mark.parametrize("thr", [-0.5, 0.5])
def test_nan_overlap_drops_nothing(tmp_path, thr):
    """dx * ww overflows: both boxes are (inf, 0, inf, 9), their areas and overlap NaN, and a box
    is dropped only for an overlap > nms_threshold: both stay (measured)."""
    feeds = _pair_feeds([0, 0, 9, 9])
    feeds["deltas"][:, 4] = 1e38
    attrs = dict(ATTRS, num_classes=2, nms_threshold=thr, deltas_weights=[1.0] * 4)
    with np.errstate(over="ignore", invalid="ignore"):  # the oracle's inf and NaN
        boxes, classes, _ = _check(_model(tmp_path, attrs), feeds)
    assert (classes > 0).sum() == 2 and np.isinf(boxes[:2, [0, 2]]).all()


def test_nan_delta_clamps_to_zero(tmp_path):
    """The plugin clamps decoded corners with ``std::max(0.f, v)``, which turns a NaN into 0
    (measured: a NaN x delta gives the box [0, 0, 0, y1]); ONNX Max would keep the NaN."""
    feeds = _feeds(5)
    feeds["deltas"][:, 4:8] = np.nan  # class 1's deltas of every roi: dx, dy, dw, dh
    feeds["deltas"][:, 5] = 0.0
    feeds["deltas"][:, 7] = 0.0  # x NaN, y finite
    got = _check(_model(tmp_path), feeds)
    rows = got[0][got[1] == 1]
    assert len(rows) and not np.isnan(got[0]).any()
    assert (rows[:, 0] == 0).all() and (rows[:, 2] == 0).all() and (rows[:, 3] > 0).all()


def test_skipped_rois_have_area_zero(tmp_path):
    """With score_threshold < 0 the skipped rois (no width) take part with zero boxes of area 0,
    not the 1 of their +1 sizes: their overlap is 1 / (0 + 0 - 1) = -1 and both stay (measured)."""
    feeds = {"rois": np.float32([[3, 3, 3, 9], [0, 0, 9, 9], [4, 4, 4, 4]]), "deltas": np.zeros((3, 8), np.float32),
             "scores": np.float32([[0, 0.5], [0, 0.9], [0, 0.4]]), "im_info": np.float32([[20, 20, 1]])}
    attrs = dict(ATTRS, num_classes=2, score_threshold=-1.0, deltas_weights=[1.0] * 4)
    boxes, classes, scores = _check(_model(tmp_path, attrs), feeds)
    np.testing.assert_array_equal(classes[:4], [1, 1, 1, 0])
    np.testing.assert_array_equal(scores[:3], np.float32([0.9, 0, 0]))
    assert not boxes[1:].any()


def test_equal_scores(tmp_path):
    """Equal scores: smaller roi first, inside a class (NMS order) and in the score order."""
    feeds = _feeds(4, n=6, c=3)
    feeds["deltas"][:] = 0
    feeds["rois"] = np.float32([[i * 40, 0, i * 40 + 20, 20] for i in range(6)])  # apart: nothing suppressed
    feeds["scores"][:, 1], feeds["scores"][:, 2] = np.float32(0.5), np.float32(0.4)
    attrs = dict(ATTRS, num_classes=3, post_nms_count=10, deltas_weights=[1.0] * 4)
    boxes, classes, _ = _check(_model(tmp_path, dict(attrs, max_detections_per_image=12)), feeds)
    np.testing.assert_array_equal(classes, [1] * 6 + [2] * 6)
    np.testing.assert_array_equal(boxes[:, 0], np.tile(np.arange(6) * 40, 2))
    xml = _model(tmp_path, dict(attrs, max_detections_per_image=8), "b.xml")
    boxes, classes, _ = _check(xml, feeds)
    np.testing.assert_array_equal(classes, [1] * 6 + [2] * 2)
    np.testing.assert_array_equal(boxes[:, 0], [0, 40, 80, 120, 160, 200, 0, 40])


def test_equal_scores_across_classes(tmp_path):
    """Equal score and equal roi in two classes: OpenVINO's partial sort leaves their order open
    (measured with 6 rows: classes 1, 2, 2, 1, 2, 1); the rois' order and the pairs
    agree, ir2onnx puts the smaller class first."""
    feeds = _feeds(4, n=6, c=3)
    feeds["deltas"][:] = 0
    feeds["rois"] = np.float32([[i * 40, 0, i * 40 + 20, 20] for i in range(6)])
    feeds["scores"][:] = np.float32(0.5)
    xml = _model(tmp_path, dict(ATTRS, num_classes=3, post_nms_count=10, deltas_weights=[1.0] * 4,
                                max_detections_per_image=6))
    got, ov_out = run_onnx(xml, feeds), run_openvino(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    np.testing.assert_array_equal(got[1], [1, 2, 1, 2, 1, 2])
    for other in (ov_out, want):
        np.testing.assert_array_equal(got[0], other[0])  # rois 0, 0, 1, 1, 2, 2
        np.testing.assert_array_equal(got[2], other[2])
        for row in range(0, 6, 2):
            assert sorted(other[1][row:row + 2]) == [1, 2]
    np.testing.assert_array_equal(got[1], want[1])


def test_im_info_and_class_agnostic_flag_change_nothing(tmp_path):
    """OpenVINO's CPU plugin never reads im_info and decodes with each class's deltas whatever
    class_agnostic_box_regression says (measured); so does ir2onnx."""
    feeds = _feeds(2)
    base = _check(_model(tmp_path), feeds)
    other = _check(_model(tmp_path, dict(ATTRS, class_agnostic_box_regression=True), "b.xml"),
                   dict(feeds, im_info=np.float32([[1000, 500, 2]])))
    for a, b in zip(base, other):
        np.testing.assert_array_equal(a, b)


def test_harness_check_and_opsets(tmp_path):
    """`ir2onnx check` agrees; ONNX opsets 14 (the lowest) .. 21 give the same bytes."""
    xml, feeds = _model(tmp_path), _feeds(5)
    assert_check(xml, inputs=feeds, atol=1e-4, rtol=0)
    base = run_onnx(xml, feeds)
    for opset in (14, 21):
        for a, b in zip(run_onnx(xml, feeds, opset=opset), base):
            np.testing.assert_array_equal(a, b)


def test_many_rois_and_classes(tmp_path):
    """81 classes and 300 rois of a 400-pixel image (a Mask R-CNN head's sizes, fewer rois)."""
    rng = np.random.default_rng(9)
    xy, wh = rng.uniform(0, 400, (300, 2)), rng.uniform(5, 120, (300, 2))
    feeds = {"rois": np.concatenate([xy, xy + wh], 1).astype(np.float32),
             "deltas": rng.normal(0, 0.5, (300, 324)).astype(np.float32),
             "scores": (rng.dirichlet(np.ones(81) * 0.05, 300)).astype(np.float32),
             "im_info": np.float32([[400, 400, 1]])}
    attrs = dict(ATTRS, num_classes=81, score_threshold=0.05, post_nms_count=100, max_detections_per_image=100)
    xml = _model(tmp_path, attrs)
    got, ov_out = run_onnx(xml, feeds), run_openvino(xml, feeds)
    np.testing.assert_array_equal(got[1], ov_out[1])
    np.testing.assert_allclose(got[0], ov_out[0], **TOL)
    np.testing.assert_allclose(got[2], ov_out[2], **TOL)
    assert (got[1] > 0).sum() == 100 and len(set(got[1])) > 20


def test_f16_inputs_are_refused(tmp_path):
    ins = [ov_parameter([None, 4], np.float16, "rois"), ov_parameter([None, 16], np.float16, "deltas"),
           ov_parameter([None, 4], np.float16, "scores"), ov_parameter([1, 3], np.float16, "im_info")]
    node = _node(ins, ATTRS)
    xml = ov_save(tmp_path / "h.xml", [node.output(i) for i in range(3)], ins)
    with pytest.raises(UnsupportedLayer, match="only f32"):
        convert(xml, precision="ir")  # the default computes f16 IRs in f32


def _mask_rcnn_head(tmp_path, classes=4, a=2, ch=8):
    """A Mask R-CNN-style box path on a run-time feature map (stride 4): an RPN of two 1x1
    convolutions (f16 weights) -> GenerateProposalsSingleImage -> ROIFeatureExtractor -> an fc
    head (f16 weights; Softmax scores, per-class deltas) -> DetectionOutput."""
    rng = np.random.default_rng(11)
    w = lambda *shape, s=1.0: ops.constant((rng.standard_normal(shape) * s).astype(np.float32))  # noqa: E731
    fm = ov_parameter([1, ch, None, None], np.float32, "fm")
    im_info = ov_parameter([3], np.float32, "im_info")
    anchors = ov_parameter([None, 4], np.float32, "anchors")
    conv = lambda k: ops.squeeze(ops.convolution(fm, k, [1, 1], [0, 0], [0, 0], [1, 1]), [0])  # noqa: E731
    rpn = NodeFactory("opset6").create(
        "ExperimentalDetectronGenerateProposalsSingleImage",
        [im_info.output(0), anchors.output(0), conv(w(4 * a, ch, 1, 1, s=0.1)).output(0),
         ops.sigmoid(conv(w(a, ch, 1, 1))).output(0)],
        dict(min_size=2.0, nms_threshold=0.7, pre_nms_count=60, post_nms_count=16))
    feats = NodeFactory("opset6").create(
        "ExperimentalDetectronROIFeatureExtractor", [rpn.output(0), fm.output(0)],
        dict(output_size=2, sampling_ratio=2, pyramid_scales=[4], aligned=False))
    x = ops.relu(ops.matmul(ops.reshape(feats.output(0), [-1, ch * 4], False), w(ch * 4, 32, s=0.3), False, False))
    scores = ops.softmax(ops.matmul(x, w(32, classes), False, False), 1)
    deltas = ops.matmul(x, w(32, 4 * classes, s=0.2), False, False)
    node = _node([rpn.output(0), deltas, scores, ops.reshape(im_info, [1, 3], False)],
                 dict(ATTRS, num_classes=classes, score_threshold=0.05, post_nms_count=6, max_detections_per_image=10))
    for i, out in enumerate(("boxes", "classes", "det_scores")):
        node.output(i).get_tensor().set_names({out})
    return ov_save(tmp_path / "mask_rcnn.xml", [node.output(i) for i in range(3)], [fm, im_info, anchors],
                   compress_to_fp16=True)


@pytest.mark.parametrize("seed, side", [(0, 8), (1, 10), (2, 6)])
def test_mask_rcnn_style_chain(tmp_path, seed, side):
    rng = np.random.default_rng(seed)
    ys, xs = np.meshgrid(np.arange(side) * 4 + 2, np.arange(side) * 4 + 2, indexing="ij")
    ctr = np.stack([xs, ys], -1).reshape(-1, 1, 2).astype(np.float32)
    half = np.float32([4, 8])[:, None]
    anchors = np.concatenate([ctr - half, ctr + half], -1).reshape(-1, 4).astype(np.float32)
    feeds = {"fm": rng.standard_normal((1, 8, side, side)).astype(np.float32),
             "im_info": np.float32([side * 4, side * 4, 1]), "anchors": anchors}
    xml = _mask_rcnn_head(tmp_path)
    boxes, classes, scores = _check(xml, feeds)
    assert (classes > 0).sum() >= 3 and np.isin(classes, [0, 1, 2, 3]).all()
    assert_check(xml, inputs=feeds, atol=1e-4, rtol=0)
