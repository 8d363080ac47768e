"""Proposal-1/-4 on OpenVINO-written IR: onnxruntime against OpenVINO's CPU plugin and the oracle,
row for row (image ids, the -1 row and the order exactly; coordinates within 1e-4 relative, scores
of the kept rows within 1e-6): a Faster R-CNN RPN head with FP16-compressed convolutions and
dynamic spatial dims, every attribute, both frameworks, image_shape of 3 and 4, padding, equal
scores and the refusals."""
from __future__ import annotations

import itertools

import numpy as np
import openvino.opset1 as o1
import openvino.opset4 as o4
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import Ir2OnnxError, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

U = np.uint32
BASE = dict(base_size=U(16), pre_nms_topn=U(30), post_nms_topn=U(8), nms_thresh=0.7, feat_stride=U(16),
            min_size=U(4), ratio=[0.5, 1.0, 2.0], scale=[8.0, 16.0])


def _kept(rois, n, post):
    """Rows of image ``n`` before its -1 row."""
    rows = rois[n * post:(n + 1) * post]
    end = np.flatnonzero(rows[:, 0] == -1)
    return end[0] if len(end) else post


def _compare(xml, feeds, post, oracle_tol=1e-5):
    """onnxruntime's rois (and scores) equal the oracle's and OpenVINO's; returns onnxruntime's."""
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    assert len(got) == len(want) == len(ov_out)
    for other, tol in ((want, oracle_tol), (ov_out, 1e-4)):
        assert got[0].shape == other[0].shape and got[0].dtype == other[0].dtype == np.float32
        np.testing.assert_array_equal(got[0][:, 0], other[0][:, 0])  # images, the -1 rows, padding
        np.testing.assert_allclose(got[0][:, 1:], other[0][:, 1:], rtol=tol, atol=tol)
    if len(got) == 2:
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)  # scores are copied, padding 0
        for n in range(len(got[0]) // post):  # OpenVINO leaves the padding's scores unwritten
            m = _kept(got[0], n, post)
            np.testing.assert_allclose(got[1][n * post:n * post + m], ov_out[1][n * post:n * post + m],
                                       rtol=1e-6, atol=1e-7)
            assert not got[1][n * post + m:(n + 1) * post].any()
    return got


def _ir(tmp_path, version=4, n=2, k=6, h=3, w=4, info=4, **attrs):
    cls, deltas = ov_parameter([n, 2 * k, h, w], name="cls"), ov_parameter([n, 4 * k, h, w], name="deltas")
    im = ov_parameter([info], name="im_info")
    node = (o4 if version == 4 else o1).proposal(cls, deltas, im, dict(BASE, **attrs))
    return ov_save(tmp_path / "p.xml", list(node.outputs()), [cls, deltas, im])


def _feeds(rng, n=2, k=6, h=3, w=4, info=(60.0, 70.0, 1.0, 1.5)):
    return {"cls": rng.uniform(0, 1, (n, 2 * k, h, w)).astype(np.float32),
            "deltas": rng.normal(0, 0.3, (n, 4 * k, h, w)).astype(np.float32),
            "im_info": np.array(info, np.float32)}


def _rpn(tmp_path, dynamic, k=6):
    """A Faster R-CNN RPN (Caffe style): conv + ReLU (f16 weights) -> rpn_cls_score conv ->
    Reshape [0, 2, -1, 0] -> Softmax(1) -> Reshape [0, 2K, -1, 0]; rpn_bbox_pred conv; Proposal-4."""
    rng = np.random.default_rng(11)
    img = ov_parameter([1, 3, None, None] if dynamic else [1, 3, 64, 96], name="img")
    im = ov_parameter([3], name="im_info")
    w = lambda co, ci, s: ops.constant((rng.standard_normal((co, ci, s, s)) / np.sqrt(ci * s * s)).astype(np.float32))  # noqa: E731
    feat = ops.relu(ops.convolution(img, w(16, 3, 4), [4, 4], [0, 0], [0, 0], [1, 1]))
    feat = ops.relu(ops.convolution(feat, w(16, 16, 3), [4, 4], [1, 1], [1, 1], [1, 1]))
    score = ops.convolution(feat, w(2 * k, 16, 1), [1, 1], [0, 0], [0, 0], [1, 1])
    shape = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    prob = ops.reshape(ops.softmax(ops.reshape(score, shape([0, 2, -1, 0]), True), 1), shape([0, 2 * k, -1, 0]), True)
    deltas = ops.convolution(feat, w(4 * k, 16, 1), [1, 1], [0, 0], [0, 0], [1, 1])
    attrs = dict(BASE, pre_nms_topn=U(60), post_nms_topn=U(12), min_size=U(8))
    node = o4.proposal(prob, deltas, im, attrs)
    return ov_save(tmp_path / "rpn.xml", list(node.outputs()), [img, im], compress_to_fp16=True)


@pytest.mark.parametrize("dynamic", [False, True])
def test_faster_rcnn_rpn_head(tmp_path, dynamic):
    xml = _rpn(tmp_path, dynamic)
    assert 'element_type="f16"' in xml.read_text()
    sizes = [(64, 96), (96, 64), (80, 128)] if dynamic else [(64, 96)] * 3
    for seed, (hh, ww) in enumerate(sizes):
        rng = np.random.default_rng(seed)
        feeds = {"img": rng.standard_normal((1, 3, hh, ww)).astype(np.float32),
                 "im_info": np.array([hh, ww, 1.0], np.float32)}
        rois, scores = _compare(xml, feeds, 12, oracle_tol=1e-4)  # the oracle's convolutions round otherwise
        assert rois.shape == (12, 5) and _kept(rois, 0, 12) > 4 and (scores[:4] > 0).all()
        assert (np.diff(scores[:_kept(rois, 0, 12)]) <= 0).all()  # kept in score order


ATTRS = list(itertools.product(["", "tensorflow"], [True, False], [True, False], [True, False], [3, 4]))


@pytest.mark.parametrize("framework,before,after,normalize,info", ATTRS)
def test_attributes(tmp_path, framework, before, after, normalize, info):
    xml = _ir(tmp_path, info=info, framework=framework, clip_before_nms=before, clip_after_nms=after,
              normalize=normalize)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        _compare(xml, _feeds(rng, info=(60.0, 70.0, 1.0, 1.5)[:info]), 8)


@pytest.mark.parametrize("version", [1, 4])
@pytest.mark.parametrize("attrs", [dict(box_size_scale=2.0, box_coordinate_scale=5.0),
                                   dict(ratio=[0.7, 1.3], scale=[3.0, 5.5, 9.0], base_size=U(10)),
                                   dict(feat_stride=U(8), base_size=U(7), framework="tensorflow"),
                                   dict(pre_nms_topn=U(500), post_nms_topn=U(3), nms_thresh=0.3),
                                   dict(pre_nms_topn=U(10), post_nms_topn=U(14))])
def test_more_attributes(tmp_path, version, attrs):
    k = len(attrs.get("ratio", BASE["ratio"])) * len(attrs.get("scale", BASE["scale"]))
    xml = _ir(tmp_path, version=version, k=k, h=4, w=5, **attrs)
    for seed in range(3):
        got = _compare(xml, _feeds(np.random.default_rng(seed), k=k, h=4, w=5), int(attrs.get("post_nms_topn", 8)))
        assert len(got) == (1 if version == 1 else 2)


def test_dynamic_dims(tmp_path):
    """Batch and feature map sizes known at run time only: the grid and the counts follow them."""
    cls, deltas = ov_parameter([None, 12, None, None], name="cls"), ov_parameter([None, 24, None, None], name="deltas")
    im = ov_parameter([4], name="im_info")
    node = o4.proposal(cls, deltas, im, dict(BASE, pre_nms_topn=U(40), post_nms_topn=U(10)))
    xml = ov_save(tmp_path / "d.xml", list(node.outputs()), [cls, deltas, im])
    for seed, (n, h, w) in enumerate([(1, 3, 4), (3, 5, 2), (2, 3, 3)]):
        rois, _ = _compare(xml, _feeds(np.random.default_rng(seed), n=n, h=h, w=w), 10)
        assert rois.shape == (n * 10, 5) and set(rois[:, 0]) <= set(range(n)) | {-1}


def test_small_pre_nms_topn(tmp_path):
    """Fewer than 8 boxes into NMS (pre_nms_topn or K * H * W): OpenVINO 2026.4's CPU plugin
    crashed the process (SIGSEGV; measured with 5-7 boxes and post_nms_topn 3-9, not with 1 and 1),
    so onnxruntime is compared with the oracle only."""
    xml = _ir(tmp_path, h=4, w=5, pre_nms_topn=U(5), post_nms_topn=U(9))
    for seed in range(3):
        feeds = _feeds(np.random.default_rng(seed), h=4, w=5)
        got = run_onnx(xml, feeds)
        want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
        np.testing.assert_array_equal(got[0][:, 0], want[0][:, 0])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got[1], want[1])
        assert 0 < _kept(got[0], 0, 9) <= 5 and got[0][_kept(got[0], 0, 9), 0] == -1


def test_min_size_and_padding(tmp_path):
    """min_size zeroes the scores of small boxes (they fall behind every other box); more rows
    than survivors: the -1 row, zeros after it, scores 0 in the padding."""
    small = _ir(tmp_path, post_nms_topn=U(40), min_size=U(16))
    feeds = _feeds(np.random.default_rng(3))
    rois, scores = _compare(small, feeds, 40)
    for n in (0, 1):
        m = _kept(rois, n, 40)
        assert 0 < m < 40 and rois[n * 40 + m, 0] == -1 and not rois[n * 40 + m + 1:(n + 1) * 40].any()
        sizes = rois[n * 40:n * 40 + m, 3:] - rois[n * 40:n * 40 + m, 1:3] + 1
        positive = scores[n * 40:n * 40 + m] > 0
        assert (sizes[positive] >= [16, 24]).all()  # min_size * scale_w, * scale_h (1.5)


def test_equal_scores(tmp_path):
    """All scores equal: ir2onnx and the oracle take the proposals in index order; OpenVINO's
    partial sort leaves them in another order, the same rows when all of them are kept."""
    xml = _ir(tmp_path, h=4, w=5, pre_nms_topn=U(120), post_nms_topn=U(120), nms_thresh=1.0)
    feeds = _feeds(np.random.default_rng(0), h=4, w=5, info=(600.0, 700.0, 1.0, 1.0))
    feeds["cls"][:] = 0.5
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    np.testing.assert_array_equal(got[0][:, 0], want[0][:, 0])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    ov_rois = run_openvino(xml, feeds)[0]
    for n in (0, 1):
        ours, theirs = (np.array(sorted(map(tuple, r[n * 120:(n + 1) * 120].round(2)))) for r in (got[0], ov_rois))
        np.testing.assert_allclose(ours, theirs, atol=0.02)


def test_refusals(tmp_path):
    xml = _ir(tmp_path, nms_thresh=0.25)
    xml.write_text(xml.read_text().replace('nms_thresh="0.25"', 'nms_thresh="-0.25"'))
    with pytest.raises(UnsupportedLayer, match="nms_thresh"):
        convert(xml)
    cls, deltas = ov_parameter([1, 4, 2, 2], np.float16, "cls"), ov_parameter([1, 8, 2, 2], np.float16, "deltas")
    node = o4.proposal(cls, deltas, ov_parameter([3], np.float16, "im"), dict(BASE, ratio=[1.0], scale=[2.0, 4.0]))
    with pytest.raises(UnsupportedLayer, match="f32 only"):  # literal f16 (the default computes it in f32)
        convert(ov_save(tmp_path / "h.xml", list(node.outputs()), [cls, deltas, node.input_value(2).get_node()]),
                precision="ir")
    text = _ir(tmp_path, framework="tensorflow").read_text().replace('framework="tensorflow"', 'framework="mxnet"')
    (tmp_path / "m.xml").write_text(text)
    (tmp_path / "m.bin").write_bytes((tmp_path / "p.bin").read_bytes())
    with pytest.raises(Ir2OnnxError, match="mxnet"):
        convert(tmp_path / "m.xml")


@pytest.mark.parametrize("below", [False, True])
def test_iou_at_threshold(tmp_path, below):
    """Eight Caffe boxes [8i, 0, 8i + 16, 16] (zero deltas, one 16x16 anchor, stride 8): neighbours
    overlap with IoU 9 * 17 / (2 * 17 * 17 - 9 * 17) = 0.36 exactly in f32. nms_thresh 0.36 keeps
    all (strictly above suppresses); one ulp below it every second box goes."""
    thr = np.float32(153) / np.float32(425)
    if below:
        thr = np.nextafter(thr, np.float32(0))
    cls, deltas = ov_parameter([1, 2, 1, 8], name="cls"), ov_parameter([1, 4, 1, 8], name="deltas")
    im = ov_parameter([3], name="im_info")
    attrs = dict(BASE, ratio=[1.0], scale=[1.0], feat_stride=U(8), min_size=U(1), pre_nms_topn=U(8),
                 post_nms_topn=U(8), nms_thresh=float(thr), clip_before_nms=False)
    node = o4.proposal(cls, deltas, im, attrs)
    xml = ov_save(tmp_path / "t.xml", list(node.outputs()), [cls, deltas, im])
    scores = np.concatenate([np.zeros(8), np.linspace(0.9, 0.2, 8)]).reshape(1, 2, 1, 8).astype(np.float32)
    feeds = {"cls": scores, "deltas": np.zeros((1, 4, 1, 8), np.float32), "im_info": np.array([100, 100, 1], np.float32)}
    rois, _ = _compare(xml, feeds, 8)
    expect = [0, 16, 32, 48] if below else [8 * i for i in range(8)]
    assert rois[:len(expect), 1].tolist() == expect and rois[:len(expect), 3].tolist() == [x + 16 for x in expect]


def _row_ir(tmp_path, w=8, **attrs):
    """One anchor on a 1 x w grid: w Caffe boxes along x."""
    cls, deltas = ov_parameter([1, 2, 1, w], name="cls"), ov_parameter([1, 4, 1, w], name="deltas")
    im = ov_parameter([3], name="im_info")
    attrs = dict(BASE, ratio=[1.0], min_size=U(1), pre_nms_topn=U(w), post_nms_topn=U(w), clip_before_nms=False,
                 **attrs)
    return ov_save(tmp_path / "r.xml", list(o4.proposal(cls, deltas, im, attrs).outputs()), [cls, deltas, im])


def test_boxes_less_than_a_pixel_apart(tmp_path):
    """Anchors 15.5 wide (scale 0.96875) at stride 16, zero deltas: box w is [16w + 0.25, 16w +
    15.75] (decoding moves x1 by the offset), its neighbour starts 0.5 after it ends. OpenVINO
    calls them disjoint (IoU 0) and keeps all eight at nms_thresh 0.01; sizes by x1 + 1 (ONNX
    NonMaxSuppression's form) would overlap them with IoU 0.5 / 32.5 and drop every second box."""
    xml = _row_ir(tmp_path, scale=[0.96875], feat_stride=U(16), nms_thresh=0.01)
    scores = np.concatenate([np.zeros(8), np.linspace(0.9, 0.2, 8)]).reshape(1, 2, 1, 8).astype(np.float32)
    feeds = {"cls": scores, "deltas": np.zeros((1, 4, 1, 8), np.float32),
             "im_info": np.array([200, 200, 1], np.float32)}
    rois, _ = _compare(xml, feeds, 8)
    assert rois[:, 1].tolist() == [16 * i + 0.25 for i in range(8)]
    assert rois[:, 3].tolist() == [16 * i + 15.75 for i in range(8)]


# dx, dy of boxes 6 and 7 (anchors [-120, 135] square, stride 128) that put box 7's x1 just below
# 1024, where x1 + 1 rounds: the IoU of the two in OpenVINO's expression and in the x1 + 1 form
# differ by one ulp, and nms_thresh sits on the smaller one.
NEAR = {"above": ([-0.031104533, -0.03126567, -0.032298293, -0.030050157], 0.33558193, False),
        "below": ([-0.030906832, -0.030136555, -0.03311132, -0.02954626], 0.33675984, True)}


@pytest.mark.parametrize("w", [8, 16])
@pytest.mark.parametrize("case", sorted(NEAR))
def test_iou_one_ulp_from_threshold(tmp_path, case, w):
    """Box 6 (scored first) and box 7 with IoU about 0.3356: OpenVINO's f32 IoU (sizes x1 - x0 + 1)
    is one ulp above nms_thresh ("above": box 7 dropped) or equal to it ("below": kept), where the
    x1 + 1 form rounds the other way. Box 6, moved 8 pixels left, also drops box 5; the other
    neighbours overlap with IoU 1/3 or less (kept).
    With 8 boxes the plugin compares them in its scalar loop, with 16 in its 8-wide vector loop."""
    d, thr, seven = NEAR[case]
    xml = _row_ir(tmp_path, w=w, scale=[16.0], feat_stride=U(128), nms_thresh=float(np.float32(thr)))
    deltas = np.zeros((1, 4, 1, w), np.float32)
    deltas[0, :2, 0, 6], deltas[0, :2, 0, 7] = d[:2], d[2:]
    scores = np.zeros((1, 2, 1, w), np.float32)
    scores[0, 1, 0] = np.linspace(0.5, 0.01, w)
    scores[0, 1, 0, 6:8] = [0.9, 0.8]
    feeds = {"cls": scores, "deltas": deltas, "im_info": np.array([3000, 3000, 1], np.float32)}
    rois, _ = _compare(xml, feeds, w)
    assert 639 < rois[0, 1] < 641  # box 6 first
    kept_x1 = rois[:_kept(rois, 0, w), 3]
    assert (np.abs(kept_x1 - 1024) < 1).any() == seven and len(kept_x1) == w - 2 + seven  # box 5 too
