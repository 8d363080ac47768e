"""GenerateProposals-9 on IR that OpenVINO writes (openvino.opset9.generate_proposals), every input
a run-time Parameter with dynamic dims, batch 2: onnxruntime against the oracle and OpenVINO's CPU
plugin, the same rows in the same order (rois within 1e-4: exp differs by an ulp between
libraries; scores copied, so equal), rois_num exactly and of roi_num_type."""
from __future__ import annotations

import numpy as np
import openvino.opset9 as o9
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_check, ov_parameter, ov_save, run_onnx, run_openvino

RPN = dict(min_size=4.0, nms_threshold=0.5, pre_nms_count=100, post_nms_count=20, normalized=False)
NAMES = ("im_info", "anchors", "deltas", "scores")


def _model(tmp_path, attrs, info=3, name="gp"):
    shapes = ([None, info], [None, None, None, 4], [None, None, None, None], [None, None, None, None])
    ins = [ov_parameter(s, np.float32, n) for s, n in zip(shapes, NAMES)]
    node = o9.generate_proposals(*ins, **attrs)
    for i, n in enumerate(("rois", "roi_scores", "rois_num")):
        node.output(i).get_tensor().set_names({n})
    return ov_save(tmp_path / f"{name}.xml", [node.output(i) for i in range(3)], ins)


def _feeds(seed, info=3, scale=1.0, a=3, h=6, w=8, spread=0.3):
    """Anchors of sides 8..40 on a stride-8 grid (times ``scale``), two images of different sizes
    and scales, normal deltas, distinct scores per image."""
    rng = np.random.default_rng(seed)
    ys, xs = np.meshgrid(np.arange(h) * 8 + 4, np.arange(w) * 8 + 4, indexing="ij")
    half = np.float32([4, 8, 12, 20])[:a, None]
    ctr = np.stack([xs, ys], -1).reshape(h, w, 1, 2).astype(np.float32)
    anchors = (np.concatenate([ctr - half, ctr + half], -1) * np.float32(scale)).astype(np.float32)
    im = np.float32([[h * 8 - 3, w * 8 - 5, 1, 1.5], [h * 8 - 10, w * 8, 0.5, 2]])[:, :info]
    im[:, :2] *= np.float32(scale)
    p = a * h * w
    scores = np.stack([rng.permutation(p) for _ in range(2)]).astype(np.float32) / np.float32(p) + np.float32(0.01)
    return {"im_info": im, "anchors": anchors, "scores": scores.reshape(2, a, h, w),
            "deltas": (rng.standard_normal((2, a * 4, h, w)) * spread).astype(np.float32)}


def _check(xml, feeds, num_type=np.int64, score_atol=0.0):
    got = run_onnx(xml, feeds)
    assert got[2].dtype == num_type and got[2].shape == (len(feeds["im_info"]),)
    assert got[0].shape == (got[2].sum(), 4) and got[1].shape == (got[2].sum(),)
    for other in (list(evaluate(ir2onnx.load_ir(xml), feeds).values()), run_openvino(xml, feeds)):
        np.testing.assert_array_equal(got[2], other[2])
        assert other[2].dtype == num_type
        np.testing.assert_allclose(got[1], other[1], rtol=0, atol=score_atol)  # copied: same rows, same order
        np.testing.assert_allclose(got[0], other[0], rtol=0, atol=1e-4)
    return got


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_oracle_and_openvino(tmp_path, seed, normalized):
    attrs = dict(RPN, normalized=normalized, min_size=4.0 / 64 if normalized else 4.0)
    got = _check(_model(tmp_path, attrs), _feeds(seed, scale=1 / 64 if normalized else 1.0))
    assert got[2].tolist() == [20, 20]
    for image in np.split(got[1], 2):  # each image's rows: highest score first
        assert (np.diff(image) < 0).all()


@pytest.mark.parametrize("seed", [3, 4])
def test_fewer_than_post_nms_count_and_i32(tmp_path, seed):
    """A strong NMS and min_size 10 keep fewer than post_nms_count, a different number per image."""
    attrs = dict(RPN, min_size=10.0, nms_threshold=0.3, pre_nms_count=60, post_nms_count=200, roi_num_type="i32")
    got = _check(_model(tmp_path, attrs), _feeds(seed, spread=0.6), num_type=np.int32)
    assert 0 < got[2].min() and got[2].max() < 60 and got[2][0] != got[2][1]
    first = got[0][:got[2][0]]  # image 0 has scale 1
    assert (first[:, 2:] - first[:, :2] + 1 >= 10).all()


def test_scale_hw_with_unknown_im_info_width(tmp_path):
    """im_info [N, 4] given as [?, ?]: scale_w is its last column (min_size 6 * 2 in x for image 1)."""
    ins = [ov_parameter(s, np.float32, n) for s, n in zip(([None, None], [None, None, None, 4], [None] * 4, [None] * 4),
                                                         NAMES)]
    node = o9.generate_proposals(*ins, **dict(RPN, min_size=6.0, post_nms_count=300))
    xml = ov_save(tmp_path / "hw.xml", [node.output(i) for i in range(3)], ins)
    got = _check(xml, _feeds(5, info=4, spread=0.5))
    second = got[0][got[2][0]:]
    assert (second[:, 2] - second[:, 0] + 1 >= 12).all() and (second[:, 3] - second[:, 1] + 1 >= 3).all()
    assert (second[:, 3] - second[:, 1] + 1 < 6).any()  # kept by scale_h 0.5, under min_size 6


@pytest.mark.parametrize("seed", range(6))
def test_random_configurations(tmp_path, seed):
    """Random anchors (any size, anywhere), deltas up to 3 sigma, batch 1..3, A, H, W 1..6,
    thresholds 0..1, pre/post counts below and above the proposal count; distinct scores (rois_num
    here from 0 to 47 per image)."""
    rng = np.random.default_rng(100 + seed)
    norm, info = bool(seed % 2), 3 + (seed // 2) % 2
    n, a, h, w = (int(v) for v in rng.integers(1, [4, 5, 7, 7]))
    sc = np.float32(1 / 64 if norm else 1)
    attrs = dict(min_size=float(rng.choice([0, 1, 3, 8]) * sc), nms_threshold=float(rng.choice([0, 0.3, 0.7, 1])),
                 pre_nms_count=int(rng.integers(1, 150)), post_nms_count=int(rng.integers(1, 80)), normalized=norm)
    c, s = rng.uniform(0, 60, (h, w, a, 2)), rng.uniform(0, 20, (h, w, a, 2))
    feeds = {"im_info": np.concatenate([rng.uniform(20, 70, (n, 2)) * sc, rng.uniform(0.5, 2, (n, info - 2))], 1),
             "anchors": np.concatenate([c - s, c + s], -1) * sc,
             "deltas": rng.standard_normal((n, a * 4, h, w)) * rng.choice([0.1, 1, 3]),
             "scores": rng.permutation(n * a * h * w).reshape(n, a, h, w) / (n * a * h * w)}
    _check(_model(tmp_path, attrs, info=info), {k: v.astype(np.float32) for k, v in feeds.items()})


def _boxes(anchors, scores, image=(20, 20)):
    """One image, a 1 x W map of one anchor each, zero deltas: the anchors come back."""
    w = len(anchors)
    return {"im_info": np.float32([[image[0], image[1], 1]]), "anchors": np.float32(anchors).reshape(1, w, 1, 4),
            "deltas": np.zeros((1, 4, 1, w), np.float32), "scores": np.float32(scores).reshape(1, 1, 1, w)}


def test_small_box_takes_a_pre_nms_place(tmp_path):
    """The best box is 1 pixel wide (below min_size 2): it is one of the 2 pre_nms_count boxes and
    is then dropped, so only one row comes out (not two)."""
    feeds = _boxes([[1, 1, 1, 9], [4, 4, 12, 12], [3, 3, 11, 11]], [0.9, 0.8, 0.7])
    got = _check(_model(tmp_path, dict(RPN, min_size=2.0, pre_nms_count=2, nms_threshold=0.9)), feeds)
    np.testing.assert_array_equal(got[0], [[4, 4, 12, 12]])


@pytest.mark.parametrize("normalized, kept", [(False, 1), (True, 2)])
def test_iou_offset(tmp_path, normalized, kept):
    """Boxes [0, 0, 1, 1] and [1, 0, 2, 1] touch: with the +1 sizes their IoU is 2 / 6 > 0.3 (the
    second dropped); normalized, they share no area (both kept)."""
    feeds = _boxes([[0, 0, 1, 1], [1, 0, 2, 1]], [0.9, 0.8])
    got = _check(_model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=0.3, normalized=normalized)), feeds)
    assert got[2].tolist() == [kept]


def test_boxes_half_a_pixel_apart_do_not_touch(tmp_path):
    """1-pixel-wide boxes 0.5 apart: OpenVINO's touch test (x0' <= x1) fails, so both stay, where
    ONNX NonMaxSuppression fed ``x1 + 1`` boxes would see IoU 1/3 > 0.3 and drop one."""
    feeds = _boxes([[2, 2, 2, 12], [2.5, 2, 2.5, 12]], [0.9, 0.8])
    got = _check(_model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=0.3)), feeds)
    np.testing.assert_array_equal(got[0], [[2, 2, 2, 12], [2.5, 2, 2.5, 12]])


@pytest.mark.parametrize("normalized", [False, True])
def test_negative_threshold_drops_disjoint_boxes(tmp_path, normalized):
    """OpenVINO's NMS gives boxes that do not touch IoU 0, and 0 > nms_threshold -0.1: every box
    after the first goes (measured); a touch test that skipped them would keep all three."""
    feeds = _boxes([[0, 0, 4, 4], [10, 10, 14, 14], [20, 0, 24, 4]], [0.9, 0.8, 0.7], image=(30, 30))
    got = _check(_model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=-0.1, normalized=normalized)), feeds)
    np.testing.assert_array_equal(got[0], [[0, 0, 4, 4]])


def test_equal_scores_smaller_proposal_first(tmp_path):
    """Equal scores: the spec leaves the order open; ir2onnx and its oracle take the smaller
    proposal index first (OpenVINO's partial sort gives 1, 3, 0, 2 here: README deviation list)."""
    feeds = _boxes([[i * 10, 0, i * 10 + 5, 5] for i in range(4)], [0.5] * 4, image=(100, 100))
    xml = _model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=1.0))
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    np.testing.assert_array_equal(got[0][:, 0], [0, 10, 20, 30])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    ov = run_openvino(xml, feeds)  # the same set of rows
    np.testing.assert_array_equal(np.sort(ov[0][:, 0]), got[0][:, 0])


def test_rpn_head_with_f16_weights_passes_check(tmp_path):
    """A Paddle-style head: 1x1 convolutions (f16-compressed weights) of a run-time feature map give
    deltas and scores (Sigmoid); constant anchors (compressed too); dynamic H, W; ir2onnx check."""
    fm = ov_parameter([2, 4, None, None], np.float32, "fm")
    im_info = ov_parameter([2, 3], np.float32, "im_info")
    rng = np.random.default_rng(6)
    conv = lambda x, c: ops.convolution(  # noqa: E731
        x, ops.constant((rng.standard_normal((c, 4, 1, 1)) * 0.3).astype(np.float32)), [1, 1], [0, 0], [0, 0], [1, 1])
    anchors = _feeds(0, a=3, h=5, w=6)["anchors"]
    node = o9.generate_proposals(im_info, ops.constant(anchors), conv(fm, 12), ops.sigmoid(conv(fm, 3)),
                                 **dict(RPN, post_nms_count=15))
    for i, n in enumerate(("rois", "roi_scores", "rois_num")):
        node.output(i).get_tensor().set_names({n})
    xml = ov_save(tmp_path / "head.xml", [node.output(i) for i in range(3)], [fm, im_info], compress_to_fp16=True)
    feeds = {"fm": rng.standard_normal((2, 4, 5, 6)).astype(np.float32), "im_info": np.float32([[40, 48, 1]] * 2)}
    got = _check(xml, feeds, score_atol=1e-6)  # Sigmoid: an ulp between libraries
    assert got[2].tolist() == [15, 15]
    assert_check(xml, inputs=feeds, atol=1e-4)


def _writer_model(tmp_path, attrs, etype="f32"):
    w = IRWriter("gp")
    ins = [w.parameter(s, etype, n) for s, n in zip(([2, 3], [2, 2, 1, 4], [2, 4, 2, 2], [2, 1, 2, 2]), NAMES)]
    outs = w.layer("GenerateProposals", "opset9", ins, attrs, [(etype, [-1, 4]), (etype, [-1]), ("i64", [2])])
    for o in outs:
        w.result(o)
    return w.save(tmp_path / "w.xml")


@pytest.mark.parametrize("attrs, etype, error, match", [
    ({"nms_eta": "0.5"}, "f32", InvalidLayer, "nms_eta 0.5"),
    ({"post_nms_count": "0"}, "f32", InvalidLayer, "must be positive"),
    ({}, "f16", UnsupportedLayer, "only f32"),
])
def test_refused(tmp_path, attrs, etype, error, match):
    base = {"min_size": "1", "nms_threshold": "0.7", "pre_nms_count": "10", "post_nms_count": "5"}
    with pytest.raises(error, match=match):
        convert(_writer_model(tmp_path, {**base, **attrs}, etype), precision="ir")  # literal f16
