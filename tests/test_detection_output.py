"""DetectionOutput-1/-8 on OpenVINO-written IR: onnxruntime against OpenVINO's CPU plugin and the
oracle row for row (image ids and labels exactly, scores and coordinates within 1e-4): SSD-shaped
heads with FP16-compressed convolutions, every attribute, equal scores and boxes, the thresholds,
keep_top_k cutting across classes, no detections, a full output and the refusals."""
from __future__ import annotations

import itertools

import numpy as np
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.selftest.detection_output import CENTER, CORNER, priors, tied_scores
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino


def _compare(xml, feeds):
    """onnxruntime's detections equal OpenVINO's and the oracle's; returns them ([rows, 7])."""
    got = run_onnx(xml, feeds)[0]
    for other, tol in ((run_openvino(xml, feeds)[0], 1e-4), (list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], 1e-5)):
        assert got.shape == other.shape and got.dtype == other.dtype
        np.testing.assert_array_equal(got[..., :2], other[..., :2])  # image ids, labels, the -1 row
        np.testing.assert_allclose(got[..., 2:], other[..., 2:], rtol=tol, atol=tol)
    return got[0, 0]


def _ir(tmp_path, p, c, prior, *, n=1, arm=False, version=8, **attrs):
    num_loc = 1 if attrs.get("share_location", True) else c
    loc, conf = ov_parameter([n, p * num_loc * 4], name="loc"), ov_parameter([n, p * c], name="conf")
    params = [loc, conf]
    if arm:
        params += [ov_parameter([n, p * 2], name="arm_conf"), ov_parameter([n, p * num_loc * 4], name="arm_loc")]
    full = dict(dict(keep_top_k=[10], nms_threshold=0.45, confidence_threshold=0.2, code_type=CENTER,
                     normalized=True), **attrs)
    if version == 1:
        full["num_classes"] = c
    node = (o1 if version == 1 else o8).detection_output(loc, conf, ops.constant(prior), full, *params[2:])
    return ov_save(tmp_path / "det.xml", node, params)


def _feeds(rng, p, c, n=1, num_loc=1, arm=False, grid=8):
    out = {"loc": rng.normal(0, 1, (n, p * num_loc * 4)).astype(np.float32),
           "conf": tied_scores(rng, n, p, c, grid)}
    if arm:
        out["arm_conf"] = rng.uniform(0, 1, (n, p * 2)).astype(np.float32)
        out["arm_loc"] = rng.normal(0, 1, (n, p * num_loc * 4)).astype(np.float32)
    return out


def _ssd(tmp_path, n, c=3, anchors=2, share=True, **attrs):
    """Two feature maps -> f16-compressed Convolutions for loc and conf -> Transpose, Reshape,
    Concat; Softmax over the classes; a constant prior tensor -> DetectionOutput-8."""
    rng = np.random.default_rng(3)
    maps = [ov_parameter([n, 8, s, s], name=f"f{s}") for s in (4, 2)]
    num_loc = 1 if share else c
    heads = {"loc": [], "conf": []}
    for f in maps:
        for what, width in (("loc", anchors * num_loc * 4), ("conf", anchors * c)):
            w = ops.constant((rng.normal(0, 0.4, (width, 8, 3, 3))).astype(np.float32))
            y = ops.convolution(f, w, [1, 1], [1, 1], [1, 1], [1, 1])
            y = ops.transpose(y, ops.constant(np.array([0, 2, 3, 1], np.int64)))
            heads[what].append(ops.reshape(y, ops.constant(np.array([0, -1], np.int64)), True))
    loc = ops.concat(heads["loc"], 1)
    conf = ops.reshape(ops.concat(heads["conf"], 1), ops.constant(np.array([0, -1, c], np.int64)), True)
    conf = ops.reshape(ops.softmax(conf, 2), ops.constant(np.array([0, -1], np.int64)), True)
    p = (16 + 4) * anchors
    full = dict(dict(keep_top_k=[10], nms_threshold=0.45, confidence_threshold=0.2, code_type=CENTER,
                     normalized=True, top_k=20, share_location=share), **attrs)
    node = o8.detection_output(loc, conf, ops.constant(priors(p)), full)
    return ov_save(tmp_path / "ssd.xml", node, maps, compress_to_fp16=True)


@pytest.mark.parametrize("share,code,n", [(True, CENTER, 1), (False, CORNER, 2), (True, CORNER, None)])
def test_ssd_head_matches_openvino(tmp_path, share, code, n):
    xml = _ssd(tmp_path, n, share=share, code_type=code)
    assert "f16" in xml.read_text()  # compressed weights
    for seed in range(3):
        rng = np.random.default_rng(seed)
        batch = n or 2
        feeds = {f"f{s}": rng.normal(0, 1, (batch, 8, s, s)).astype(np.float32) for s in (4, 2)}
        det = _compare(xml, feeds)
        assert det.shape == (batch * 10, 7)
        assert 0 < (det[:, 0] >= 0).sum() and set(det[det[:, 0] >= 0][:, 1]) <= {1, 2}


ATTRS = list(itertools.product(
    [CENTER, CORNER], [True, False], [True, False], [(False, False), (True, False), (False, True)], [5, -1], [4, -1]))


@pytest.mark.parametrize("code,share,normalized,clips,keep,top", ATTRS)
def test_attributes(tmp_path, code, share, normalized, clips, keep, top):
    p, c = 10, 3
    xml = _ir(tmp_path, p, c, priors(p, normalized), n=2, code_type=code, share_location=share, normalized=normalized,
              input_width=300, input_height=200, clip_before_nms=clips[0], clip_after_nms=clips[1],
              keep_top_k=[keep], top_k=top)
    for seed in range(2):
        _compare(xml, _feeds(np.random.default_rng(seed), p, c, n=2, num_loc=1 if share else c))


@pytest.mark.parametrize("version,share", [(8, True), (8, False), (1, True)])
@pytest.mark.parametrize("style", ["mxnet", "arm", "arm-mxnet", "variance-in-target", "no-background"])
def test_styles(tmp_path, version, share, style):
    p, c = 10, 4
    attrs = {"mxnet": dict(decrease_label_id=True), "arm": dict(objectness_score=0.4),
             "arm-mxnet": dict(decrease_label_id=True, objectness_score=0.5),
             "variance-in-target": dict(variance_encoded_in_target=True),
             "no-background": dict(background_label_id=-1, keep_top_k=[-1], top_k=3)}[style]
    arm = style.startswith("arm")
    prior = priors(p, variances=style != "variance-in-target")
    xml = _ir(tmp_path, p, c, prior, n=2, arm=arm, version=version, share_location=share, **attrs)
    for seed in range(3):
        _compare(xml, _feeds(np.random.default_rng(seed), p, c, n=2, num_loc=1 if share else c, arm=arm))


TIES_PRIORS = np.array([[[0, 0, .5, .5, 0, 0, .5, .5, 0, 0, .25, .5, .6, .6, .9, .9]]], np.float32)


def test_equal_scores_equal_boxes_and_thresholds(tmp_path):
    """Equal boxes with equal scores: the smaller prior stays; IoU exactly nms_threshold (0.5) does
    not suppress; a score equal to confidence_threshold is no candidate (MXNet style: it is)."""
    kw = dict(code_type=CORNER, variance_encoded_in_target=True, keep_top_k=[4], nms_threshold=0.5,
              confidence_threshold=0.3)
    feeds = {"loc": np.zeros((1, 16), np.float32), "conf": np.array([[.1, .5, .1, .5, .1, .4, .1, .3]], np.float32)}
    det = _compare(_ir(tmp_path, 4, 2, TIES_PRIORS, **kw), feeds)
    want = [[0, 1, .5, 0, 0, .5, .5], [0, 1, .4, 0, 0, .25, .5], [-1, 0, 0, 0, 0, 0, 0], [0] * 7]
    np.testing.assert_array_equal(det, np.array(want, np.float32))
    det = _compare(_ir(tmp_path, 4, 2, TIES_PRIORS, decrease_label_id=True, **kw), feeds)
    assert det[:3, 1].tolist() == [0, 0, 0] and det[:3, 2].tolist() == [np.float32(.5), np.float32(.4), np.float32(.3)]


def test_keep_top_k_cuts_across_classes(tmp_path):
    """8 survivors of equal score in 2 classes: keep_top_k 2 keeps prior 0 of both classes, rows
    class by class, a full output without the -1 row. keep_top_k 3 cuts between prior 1 of class 1
    and of class 2, which OpenVINO leaves unordered: ir2onnx and the oracle keep class 1."""
    feeds = {"loc": np.zeros((1, 16), np.float32), "conf": np.array([[.1, .5, .5] * 4], np.float32)}
    kw = dict(code_type=CORNER, variance_encoded_in_target=True, nms_threshold=1.0)
    det = _compare(_ir(tmp_path, 4, 3, TIES_PRIORS, keep_top_k=[2], **kw), feeds)
    assert det[:, 1].tolist() == [1, 2] and -1 not in det[:, 0]
    xml = _ir(tmp_path, 4, 3, TIES_PRIORS, keep_top_k=[3], **kw)
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_array_equal(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0])
    assert got[0, 0, :, 1].tolist() == [1, 1, 2]  # (prior 0, class 1), (prior 1, class 1), (prior 0, class 2)
    assert run_openvino(xml, feeds)[0][0, 0, :, 1].tolist() in ([1, 1, 2], [1, 2, 2])


def test_no_detections(tmp_path):
    p, c = 6, 3
    xml = _ir(tmp_path, p, c, priors(p), n=2, confidence_threshold=0.99)
    rng = np.random.default_rng(0)
    feeds = dict(_feeds(rng, p, c, n=2), conf=np.full((2, p * c), 0.99, np.float32))  # not above the threshold
    det = _compare(xml, feeds)
    want = np.zeros((20, 7), np.float32)
    want[0, 0] = -1
    np.testing.assert_array_equal(det, want)


def test_inverted_box_overlaps_nothing(tmp_path):
    """Prior 1 has xmax < xmin over the same span as prior 0: OpenVINO keeps both (ONNX
    NonMaxSuppression would reorder its corners and suppress it)."""
    prior = np.array([[[0, 0, .5, .5, .5, 0, 0, .5]]], np.float32)
    xml = _ir(tmp_path, 2, 2, prior, code_type=CORNER, variance_encoded_in_target=True, keep_top_k=[3],
              nms_threshold=0.3)
    det = _compare(xml, {"loc": np.zeros((1, 8), np.float32), "conf": np.array([[0, .9, 0, .8]], np.float32)})
    assert det[:2, 2].tolist() == [np.float32(.9), np.float32(.8)]


def test_prior_image_id_minus_one_ends_the_priors(tmp_path):
    p, c = 6, 2
    prior = priors(p, normalized=False)
    prior[0, 0, 3 * 5] = -1  # priors 3.. are never candidates
    xml = _ir(tmp_path, p, c, prior, normalized=False, input_width=300, input_height=200, confidence_threshold=0.0)
    feeds = {"loc": np.zeros((1, p * 4), np.float32), "conf": np.full((1, p * c), 0.5, np.float32)}
    det = _compare(xml, feeds)
    assert det[:4, 0].tolist() == [0, 0, 0, -1]


@pytest.mark.parametrize("normalized", [True, False])
def test_run_time_per_image_priors(tmp_path, normalized):
    """Priors fed at run time, one set per image ([N, 2, P * S])."""
    p, c, n = 8, 3, 2
    loc, conf = ov_parameter([n, p * 4], name="loc"), ov_parameter([n, p * c], name="conf")
    pri = ov_parameter([n, 2, p * (4 if normalized else 5)], name="priors")
    attrs = dict(keep_top_k=[6], nms_threshold=0.3, confidence_threshold=0.2, code_type=CENTER, normalized=normalized,
                 input_width=300, input_height=200)
    xml = ov_save(tmp_path / "r.xml", o8.detection_output(loc, conf, pri, attrs), [loc, conf, pri])
    for seed in range(3):
        rng = np.random.default_rng(seed)
        feeds = dict(_feeds(rng, p, c, n=n), priors=np.concatenate([priors(p, normalized, seed=s) for s in (seed, 9)]))
        det = _compare(xml, feeds)
        assert set(det[:, 0]) >= {0, 1}


@pytest.mark.parametrize("dtype,opset", [(np.float16, 14), (np.float32, 14), (np.float16, 21)])
def test_f16_and_opsets(tmp_path, dtype, opset):
    """f16 activations are computed in f32 (as OpenVINO's CPU plugin does) and rounded once."""
    p, c = 10, 3
    loc, conf = ov_parameter([2, p * 4], dtype, "loc"), ov_parameter([2, p * c], dtype, "conf")
    attrs = dict(keep_top_k=[8], nms_threshold=0.45, confidence_threshold=0.2, top_k=5, code_type=CENTER,
                 normalized=True)
    xml = ov_save(tmp_path / "h.xml", o8.detection_output(loc, conf, ops.constant(priors(p).astype(dtype)), attrs),
                  [loc, conf])
    feeds = {k: v.astype(dtype) for k, v in _feeds(np.random.default_rng(1), p, c, n=2).items()}
    got = run_onnx(xml, feeds, opset=opset)[0]
    assert got.dtype == dtype and got.shape == (1, 1, 16, 7)
    np.testing.assert_array_equal(got, run_openvino(xml, feeds)[0])
    np.testing.assert_array_equal(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0])


@pytest.mark.parametrize("attrs,reason", [(dict(code_type="CORNER_SIZE"), "CORNER_SIZE"),
                                          (dict(nms_threshold=-0.5), "do not overlap")])
def test_refused(tmp_path, attrs, reason):
    """CORNER_SIZE: OpenVINO's own op refuses to be built with it, so the IR is edited."""
    xml = _ir(tmp_path, 4, 2, priors(4), **{k: v for k, v in attrs.items() if k != "code_type"})
    if "code_type" in attrs:
        xml.write_text(xml.read_text().replace("PriorBoxParameter.CENTER_SIZE", "PriorBoxParameter.CORNER_SIZE"))
    with pytest.raises(UnsupportedLayer, match=reason):
        convert(ir2onnx.load_ir(xml))
