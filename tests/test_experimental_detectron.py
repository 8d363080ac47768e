"""ExperimentalDetectronPriorGridGenerator-6 on Detectron-style heads that OpenVINO writes: priors
a Const (f16-compressed like the zoo's IR) or a run-time Parameter, the feature map a convolution
of the image (dynamic H, W), the image a Parameter. onnxruntime is compared with the oracle and
with OpenVINO bit for bit (float32 arithmetic in the reference's order)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest
from openvino.utils.node_factory import NodeFactory

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

BASE = dict(flatten=True, h=0, w=0, stride_x=0.0, stride_y=0.0)
PRIORS = np.array([[-22.5, -10.5, 22.5, 10.5], [-16.0, -16.0, 16.0, 16.0], [-7.25, -15.5, 7.25, 15.5]],
                  np.float32)


def _grid(priors, fm, img, attrs):
    return NodeFactory("opset6").create("ExperimentalDetectronPriorGridGenerator",
                                        [priors.output(0), fm.output(0), img.output(0)], attrs)


def _head(tmp_path, attrs, strides=((4, 4),), dynamic=True, priors_param=False, priors_dtype=np.float32):
    """Image -> one strided 1x1 convolution per level (f16 weights) -> a grid per level; the
    rois of all levels concatenated."""
    img = ov_parameter([1, 3, None, None] if dynamic else [1, 3, 30, 22], np.float32, "img")
    params = [img]
    if priors_param:
        pr = ov_parameter([None, 4], priors_dtype, "priors")
        params.append(pr)
    else:
        pr = ops.constant(PRIORS.astype(priors_dtype))
    outs = []
    for i, stride in enumerate(strides):
        k = ops.constant(np.random.default_rng(i).standard_normal((4, 3, 1, 1)).astype(np.float32))
        fm = ops.convolution(img, k, list(stride), [0, 0], [0, 0], [1, 1])
        outs.append(_grid(pr, fm, img, attrs))
    out = outs[0] if len(outs) == 1 else ops.concat(outs, 0)
    out.output(0).get_tensor().set_names({"rois"})
    return ov_save(tmp_path / "grid.xml", [out], params, compress_to_fp16=True)


def _check(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    ov_out = run_openvino(xml, feeds)[0]
    assert got.dtype == want.dtype == ov_out.dtype and got.shape == want.shape == ov_out.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, ov_out)
    return got


def _img(h=30, w=22):
    return {"img": np.random.default_rng(3).standard_normal((1, 3, h, w)).astype(np.float32)}


@pytest.mark.parametrize("attrs", [BASE, dict(BASE, stride_x=3.5, stride_y=4.25), dict(BASE, flatten=False)],
                         ids=["default-steps", "strides", "4d"])
def test_levels_match_oracle_and_openvino(tmp_path, attrs):
    xml = _head(tmp_path, attrs, strides=((4, 4), (8, 8)) if attrs["flatten"] else ((4, 4),))
    got = _check(xml, _img())
    # 30x22 image, stride 4 level: an 8x6 map, 3 priors per cell.
    assert got.shape[0] == (8 * 6 + 4 * 3) * 3 if attrs["flatten"] else got.shape == (8, 6, 3, 4)


def test_non_integral_default_steps_and_other_sizes(tmp_path):
    """30/7 and 22/5 are not integers: the float32 division and the rounding of every sum match."""
    xml = _head(tmp_path, BASE, strides=((4, 4), (3, 5)))
    for size in ((30, 22), (19, 41)):
        _check(xml, _img(*size))


def test_known_values(tmp_path):
    """A 2x2 map (stride 8) of a 16x16 image: cell centres 4 and 12, the priors shifted there."""
    xml = _head(tmp_path, BASE, strides=((8, 8),), priors_param=True)
    pr = np.array([[-1.0, -2.0, 1.0, 2.0]], np.float32)
    got = _check(xml, dict(_img(16, 16), priors=pr))
    want = [[3, 2, 5, 6], [11, 2, 13, 6], [3, 10, 5, 14], [11, 10, 13, 14]]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_run_time_priors_f32(tmp_path):
    xml = _head(tmp_path, dict(BASE, stride_x=16.0), priors_param=True)
    rng = np.random.default_rng(1)
    pr = (rng.standard_normal((5, 4)) * 30).astype(np.float32)
    assert _check(xml, dict(_img(), priors=pr)).shape == (8 * 6 * 5, 4)


def test_static_shapes(tmp_path):
    _check(_head(tmp_path, BASE, dynamic=False), _img())


def test_h_w_equal_to_the_map_are_accepted(tmp_path):
    xml = _head(tmp_path, dict(BASE, h=8, w=6), dynamic=False)
    _check(xml, _img())


@pytest.mark.parametrize("hw", [dict(h=4, w=0), dict(h=0, w=3)])
def test_smaller_grid_is_refused(tmp_path, hw):
    xml = _head(tmp_path, dict(BASE, **hw), dynamic=False)
    with pytest.raises(UnsupportedLayer, match="undefined"):
        convert(xml)


def test_h_on_dynamic_map_is_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="unknown"):
        convert(_head(tmp_path, dict(BASE, h=8)))



def test_f16_model(tmp_path):
    """All inputs f16 (OpenVINO wants one element type): the sum in float32, rounded to f16 once."""
    pr, fm, img = (ov_parameter(shape, np.float16, name) for shape, name in
                   (([None, 4], "priors"), ([1, 2, None, None], "fm"), ([1, 3, None, None], "img")))
    out = _grid(pr, fm, img, dict(BASE, stride_x=3.3))
    out.output(0).get_tensor().set_names({"rois"})
    xml = ov_save(tmp_path / "f16.xml", [out], [pr, fm, img])
    rng = np.random.default_rng(2)
    feeds = {"priors": (rng.standard_normal((4, 4)) * 40).astype(np.float16),
             "fm": np.zeros((1, 2, 5, 7), np.float16), "img": np.zeros((1, 3, 37, 50), np.float16)}
    assert _check(xml, feeds).dtype == np.float16


# -- ExperimentalDetectronTopKROIs-6 ---------------------------------------------------------------
def _topk_model(tmp_path, max_rois, n=None, dtype=np.float32):
    rois, probs = ov_parameter([n, 4], dtype, "rois"), ov_parameter([n], dtype, "probs")
    out = NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [rois.output(0), probs.output(0)],
                                       {"max_rois": max_rois})
    out.output(0).get_tensor().set_names({"top"})
    return ov_save(tmp_path / "topk.xml", [out], [rois, probs])


def _rois(n, dtype=np.float32, seed=0):
    """Row i of the rois starts with i, so that the picked indices can be read back."""
    rng = np.random.default_rng(seed)
    r = (rng.random((n, 4)) * 100).astype(dtype)
    r[:, 0] = np.arange(n)
    return r


@pytest.mark.parametrize("n, static", [(30, True), (30, False), (8, False)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_topk_rois_distinct(tmp_path, n, static, seed):
    xml = _topk_model(tmp_path, 8, n if static else None)
    probs = np.random.default_rng(seed + 10).random(n).astype(np.float32)
    got = _check(xml, {"rois": _rois(n, seed=seed), "probs": probs})
    idx = got[:, 0].astype(int)
    assert got.shape == (8, 4) and (np.diff(probs[idx]) < 0).all()
    np.testing.assert_array_equal(idx, np.argsort(-probs, kind="stable")[:8])


def test_topk_rois_fewer_than_max(tmp_path):
    """N < max_rois: the N rows sorted, then zero rows (OpenVINO leaves them unwritten)."""
    xml = _topk_model(tmp_path, 6)
    feeds = {"rois": _rois(4), "probs": np.array([0.1, 0.7, 0.3, 0.9], np.float32)}
    got = run_onnx(xml, feeds)[0]
    ov_out = run_openvino(xml, feeds)[0]
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    assert got.shape == ov_out.shape == want.shape == (6, 4)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:4], ov_out[:4])
    np.testing.assert_array_equal(got[:4, 0], [3, 1, 2, 0])
    assert not got[4:].any()


def test_topk_rois_ties_small_n_follow_openvino(tmp_path):
    """Equal probabilities, N <= 16: smaller index first, as OpenVINO's sort gives."""
    xml = _topk_model(tmp_path, 5)
    probs = np.array([1, 1, 2, 2, 0, 0, 2, 2, 0, 1, 2, 1], np.float32)
    got = _check(xml, {"rois": _rois(12), "probs": probs})
    np.testing.assert_array_equal(got[:, 0], [2, 3, 6, 7, 10])


def test_topk_rois_ties_large_n(tmp_path):
    """N=40 with three distinct values: ours is the stable order; OpenVINO's unstable sort picks
    other tied rois (measured), but the same probabilities in the same order."""
    xml = _topk_model(tmp_path, 12)
    probs = np.random.default_rng(1).integers(0, 3, 40).astype(np.float32)
    feeds = {"rois": _rois(40), "probs": probs}
    got = run_onnx(xml, feeds)[0]
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, 0], np.argsort(-probs, kind="stable")[:12])
    ov_idx = run_openvino(xml, feeds)[0][:, 0].astype(int)
    np.testing.assert_array_equal(probs[ov_idx], probs[got[:, 0].astype(int)])


def test_topk_rois_f16(tmp_path):
    xml = _topk_model(tmp_path, 5, dtype=np.float16)
    probs = np.random.default_rng(4).permutation(20).astype(np.float16) / np.float16(20)
    got = _check(xml, {"rois": _rois(20, np.float16), "probs": probs})
    assert got.dtype == np.float16


def test_topk_rois_of_a_prior_grid(tmp_path):
    """The zoo's chain: a prior grid over a conv map (dynamic size), its rois ranked by run-time
    scores of the same length."""
    img = ov_parameter([1, 3, None, None], np.float32, "img")
    probs = ov_parameter([None], np.float32, "probs")
    k = ops.constant(np.random.default_rng(0).standard_normal((4, 3, 1, 1)).astype(np.float32))
    fm = ops.convolution(img, k, [4, 4], [0, 0], [0, 0], [1, 1])
    grid = _grid(ops.constant(PRIORS), fm, img, BASE)
    out = NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [grid.output(0), probs.output(0)],
                                       {"max_rois": 10})
    out.output(0).get_tensor().set_names({"top"})
    xml = ov_save(tmp_path / "chain.xml", [out], [img, probs], compress_to_fp16=True)
    feeds = dict(_img(), probs=np.random.default_rng(7).random(8 * 6 * 3).astype(np.float32))
    assert _check(xml, feeds).shape == (10, 4)


# -- ExperimentalDetectronROIFeatureExtractor-6 -----------------------------------------------------
EXTRACT = dict(output_size=4, sampling_ratio=2, pyramid_scales=[4, 8, 16, 32], aligned=False)
FEAT_TOL = dict(rtol=2e-6, atol=2e-6)


def _fpn(tmp_path, attrs, levels=4, image=None):
    """An FPN head: the image -> one strided 1x1 convolution per level (f16 weights; strides the
    pyramid scales; 1x1 so that the maps' own rounding stays small) -> the extractor on run-time rois. Dynamic image size."""
    img = ov_parameter([1, 3, None, None], np.float32, "img")
    rois = ov_parameter([None, 4], np.float32, "rois")
    maps = []
    for i in range(levels):
        s = attrs["pyramid_scales"][i]
        k = ops.constant(np.random.default_rng(i).standard_normal((5, 3, 1, 1)).astype(np.float32))
        maps.append(ops.convolution(img, k, [s, s], [0, 0], [0, 0], [1, 1]))
    node = NodeFactory("opset6").create("ExperimentalDetectronROIFeatureExtractor",
                                        [rois.output(0)] + [m.output(0) for m in maps], attrs)
    node.output(0).get_tensor().set_names({"features"})
    node.output(1).get_tensor().set_names({"rois_out"})
    return ov_save(tmp_path / "fpn.xml", [node.output(0), node.output(1)], [img, rois], compress_to_fp16=True)


def _level_rois(rng, n_per=4, image=128):
    """ROIs whose sqrt(area) is 224 * 2 ** (level - 2) times a factor in [0.75, 1.4): every level
    0..3 (and beyond, clamped), inside and partly outside the image; plus an empty ROI."""
    sides = []
    for lvl in range(-1, 5):
        sides += list(224 * 2.0 ** (lvl - 2) * rng.uniform(0.75, 1.4, n_per))
    sides = np.float32(sides)[:, None]
    centre = rng.uniform(0, image, (len(sides), 2)).astype(np.float32)
    rois = np.concatenate([centre - sides / 2, centre + sides / 2], 1).astype(np.float32)
    return np.concatenate([rois, np.float32([[10, 10, 10, 40], [50, 50, 40, 60]])])


def _extract_check(xml, feeds):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    assert got[0].shape == want[0].shape == ov_out[0].shape
    np.testing.assert_allclose(got[0], want[0], **FEAT_TOL)
    np.testing.assert_allclose(got[0], ov_out[0], **FEAT_TOL)
    np.testing.assert_array_equal(got[1], feeds["rois"])
    np.testing.assert_array_equal(ov_out[1], feeds["rois"])
    return got[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_extractor_levels(tmp_path, seed):
    xml = _fpn(tmp_path, EXTRACT)
    rng = np.random.default_rng(seed)
    feeds = {"img": rng.standard_normal((1, 3, 128, 96)).astype(np.float32), "rois": _level_rois(rng)}
    got = _extract_check(xml, feeds)
    assert not got[-2:].any() and np.abs(got[:-2]).sum(axis=(1, 2, 3)).min() > 0  # empty ROIs: zeros


def test_extractor_adaptive_grid_and_other_size(tmp_path):
    xml = _fpn(tmp_path, dict(EXTRACT, sampling_ratio=0, output_size=3, pyramid_scales=[4, 8]), levels=2)
    rng = np.random.default_rng(5)
    feeds = {"img": rng.standard_normal((1, 3, 64, 80)).astype(np.float32), "rois": _level_rois(rng, 2, 64)}
    got = _extract_check(xml, feeds)
    # ONNX opset 14: RoiAlign-10 has no coordinate_transformation_mode (output_half_pixel is its only one)
    np.testing.assert_array_equal(run_onnx(xml, feeds, opset=14)[0], got)


def _numpy_level(side):
    f = np.float32
    t = f(f(np.sqrt(f(side * side)) / f(224)) + f(1e-6))
    return int(np.floor(f(np.log2(t)) + f(2)))


def test_extractor_level_boundaries(tmp_path):
    """Squares on both sides of each level change (near sides 112, 224, 448, shifted by the
    1e-6): the level changes exactly where OpenVINO's float32 arithmetic says."""
    xml = _fpn(tmp_path, EXTRACT)
    rows = []
    for side in (112.0, 224.0, 448.0):
        s = np.float32(side)
        while _numpy_level(np.nextafter(s, np.float32(0))) == _numpy_level(side):
            s = np.nextafter(s, np.float32(0))
        below = np.nextafter(s, np.float32(0))
        assert _numpy_level(below) == _numpy_level(s) - 1
        rows += [[0, 0, below, below], [0, 0, s, s], [8, 4, 8 + s, 4 + s]]
    feeds = {"img": np.random.default_rng(1).standard_normal((1, 3, 512, 512)).astype(np.float32),
             "rois": np.float32(rows)}
    got = _extract_check(xml, feeds)
    assert all(np.abs(got[i] - got[i + 1]).max() > 1e-3 for i in range(0, len(rows), 3))


def _tiny_rois(rng, n=6):
    """ROIs of sides 0.5 .. 6 pixels (level 0, scale 4: under one map pixel, where OpenVINO keeps
    the roi size at least 1) near the image's edges and inside."""
    corner = rng.uniform(-2, 120, (n, 2)).astype(np.float32)
    side = rng.uniform(0.5, 6, (n, 2)).astype(np.float32)
    return np.concatenate([corner, corner + side], 1).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_extractor_aligned(tmp_path, seed):
    """aligned=true: the half-pixel shift of every level's scaled roi and the minimum roi size 1
    (tiny rois), against OpenVINO and the oracle; the shift changes the features."""
    rng = np.random.default_rng(seed)
    feeds = {"img": rng.standard_normal((1, 3, 128, 96)).astype(np.float32),
             "rois": np.concatenate([_level_rois(rng), _tiny_rois(rng)])}
    got = _extract_check(_fpn(tmp_path, dict(EXTRACT, aligned=True)), feeds)
    (tmp_path / "plain").mkdir()
    plain = run_onnx(_fpn(tmp_path / "plain", EXTRACT), feeds)[0]
    assert np.abs(got - plain)[:-8].max() > 1e-2 and not got[-8:-6].any()  # empty ROIs: zeros


def test_extractor_aligned_adaptive_grid(tmp_path):
    xml = _fpn(tmp_path, dict(EXTRACT, aligned=True, sampling_ratio=0, output_size=3, pyramid_scales=[4, 8]), levels=2)
    rng = np.random.default_rng(6)
    feeds = {"img": rng.standard_normal((1, 3, 64, 80)).astype(np.float32),
             "rois": np.concatenate([_level_rois(rng, 2, 64), _tiny_rois(rng)])}
    got = _extract_check(xml, feeds)
    np.testing.assert_array_equal(run_onnx(xml, feeds, opset=14)[0], got)


# -- ExperimentalDetectronGenerateProposalsSingleImage-6 --------------------------------------------
RPN = dict(min_size=4.0, nms_threshold=0.5, pre_nms_count=100, post_nms_count=20)
ROI_TOL = dict(rtol=0, atol=1e-4)  # exp differs by an ulp between libraries


def _rpn_model(tmp_path, attrs, a=3, dynamic=True):
    shapes = ([3], [None, 4], [a * 4, None, None], [a, None, None]) if dynamic else \
        ([3], [6 * 8 * a, 4], [a * 4, 6, 8], [a, 6, 8])
    ins = [ov_parameter(s, np.float32, n) for s, n in zip(shapes, ("im_info", "anchors", "deltas", "scores"))]
    node = NodeFactory("opset6").create("ExperimentalDetectronGenerateProposalsSingleImage",
                                        [x.output(0) for x in ins], attrs)
    node.output(0).get_tensor().set_names({"rois"})
    node.output(1).get_tensor().set_names({"roi_scores"})
    return ov_save(tmp_path / "rpn.xml", [node.output(0), node.output(1)], ins)


def _rpn_feeds(seed, a=3, h=6, w=8, spread=0.3):
    rng = np.random.default_rng(seed)
    ys, xs = np.meshgrid(np.arange(h) * 8 + 4, np.arange(w) * 8 + 4, indexing="ij")
    half = np.float32([4, 8, 12, 20])[:a]
    ctr = np.stack([xs, ys], -1).reshape(-1, 1, 2).astype(np.float32)
    anchors = np.concatenate([ctr - half[:, None], ctr + half[:, None]], -1).reshape(-1, 4)
    n = a * h * w
    return {"im_info": np.float32([h * 8 - 3, w * 8 - 5, 1]), "anchors": anchors.astype(np.float32),
            "deltas": (rng.standard_normal((a * 4, h, w)) * spread).astype(np.float32),
            "scores": (rng.permutation(n).reshape(a, h, w).astype(np.float32) + 1) / np.float32(n)}


def _rpn_check(xml, feeds):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    for other in (want, ov_out):
        assert got[0].shape == other[0].shape and got[1].shape == other[1].shape
        np.testing.assert_array_equal(got[1], other[1])  # scores: copied, same rows in the same order
        np.testing.assert_allclose(got[0], other[0], **ROI_TOL)
    return got


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_proposals_match_oracle_and_openvino(tmp_path, seed):
    got = _rpn_check(_rpn_model(tmp_path, RPN), _rpn_feeds(seed))
    assert (got[1] > 0).all() and (np.diff(got[1]) < 0).all()  # 20 kept, highest first


def test_proposals_static_shapes_and_four_anchors(tmp_path):
    _rpn_check(_rpn_model(tmp_path, dict(RPN, pre_nms_count=1000), a=4, dynamic=False), _rpn_feeds(4, a=4))


def test_proposals_fewer_than_post_nms_count(tmp_path):
    """A strict NMS (IoU 0.05) over few proposals keeps fewer than post_nms_count: zero rows after."""
    xml = _rpn_model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=0.05, post_nms_count=60))
    got = _rpn_check(xml, _rpn_feeds(5, h=3, w=4))
    kept = int((got[1] > 0).sum())
    assert 0 < kept < 36 and not got[0][kept:].any() and not got[1][kept:].any()


def test_proposals_min_size_zeroes_scores(tmp_path):
    """min_size 14: the 8-pixel anchors (and boxes shrunk below 14) get score 0 and rank last."""
    xml = _rpn_model(tmp_path, dict(RPN, min_size=14.0, post_nms_count=10))
    feeds = _rpn_feeds(6, spread=0.05)
    got = _rpn_check(xml, feeds)
    sizes = np.minimum(got[0][:, 2] - got[0][:, 0], got[0][:, 3] - got[0][:, 1]) + 1
    assert (got[1] > 0).all() and (sizes >= 14).all()


def test_proposals_pre_nms_count_cuts(tmp_path):
    """pre_nms_count 10: only the 10 best enter NMS, so at most 10 rows are filled."""
    got = _rpn_check(_rpn_model(tmp_path, dict(RPN, pre_nms_count=10)), _rpn_feeds(7))
    assert 0 < (got[1] > 0).sum() <= 10 and not got[1][10:].any()


def test_proposals_of_a_detectron_head(tmp_path):
    """The zoo's RPN: a prior grid over a conv feature map gives the anchors, 1x1 convolutions
    (f16 weights) of the map the deltas and the scores (Sigmoid); dynamic image size."""
    img = ov_parameter([1, 3, None, None], np.float32, "img")
    im_info = ov_parameter([3], np.float32, "im_info")
    rng = np.random.default_rng(0)
    conv = lambda x, c, s: ops.convolution(  # noqa: E731
        x, ops.constant((rng.standard_normal((c, x.get_output_partial_shape(0)[1].get_length(), s, s)) * 0.2)
                        .astype(np.float32)), [s, s], [0, 0], [0, 0], [1, 1])
    fm = conv(img, 8, 8)
    grid = _grid(ops.constant(PRIORS), fm, img, BASE)
    deltas = ops.squeeze(conv(fm, 12, 1), ops.constant(np.int64([0])))
    scores = ops.squeeze(ops.sigmoid(conv(fm, 3, 1)), ops.constant(np.int64([0])))
    node = NodeFactory("opset6").create("ExperimentalDetectronGenerateProposalsSingleImage",
                                        [im_info.output(0), grid.output(0), deltas.output(0), scores.output(0)],
                                        dict(RPN, post_nms_count=15))
    node.output(0).get_tensor().set_names({"rois"})
    node.output(1).get_tensor().set_names({"roi_scores"})
    xml = ov_save(tmp_path / "head.xml", [node.output(0), node.output(1)], [img, im_info], compress_to_fp16=True)
    feeds = {"img": np.random.default_rng(1).standard_normal((1, 3, 64, 48)).astype(np.float32),
             "im_info": np.float32([64, 48, 1])}
    got = run_onnx(xml, feeds)
    ov_out = run_openvino(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    for other in (want, ov_out):  # deltas and scores come from convolutions: a tolerance, same rows
        np.testing.assert_allclose(got[1], other[1], rtol=0, atol=1e-6)
        np.testing.assert_allclose(got[0], other[0], rtol=1e-5, atol=1e-4)
    assert (got[1] > 0).all()


def _inverted_feeds():
    """Ten anchors along x; the first two equal and shrunk by deltas (d log w = d log h = -4) to
    0.29 pixels, so decoding (x1 = centre + 0.15 - 1) inverts them: x1 < x0, y1 < y0."""
    anchors = np.float32([[40 * i, 0, 40 * i + 15, 15] for i in range(10)])
    anchors[1] = anchors[0]
    deltas = np.zeros((4, 1, 10), np.float32)
    deltas[2:, 0, :2] = -4
    scores = np.linspace(0.9, 0.1, 10, dtype=np.float32).reshape(1, 1, 10)
    return {"im_info": np.float32([100, 500, 1]), "anchors": anchors, "deltas": deltas, "scores": scores}


def test_proposals_inverted_boxes_never_overlap(tmp_path):
    """OpenVINO's NMS (the plugin's nms_cpu, offset 0) takes the signed sizes of inverted boxes: their
    intersection is 0, so the two equal inverted boxes both stay; ONNX NonMaxSuppression, which
    reorders the corners, would call them identical (IoU 1) and drop the second."""
    xml = _rpn_model(tmp_path, dict(RPN, min_size=0.0, post_nms_count=12), a=1)
    got = _rpn_check(xml, _inverted_feeds())
    assert (got[0][:2, 2] < got[0][:2, 0]).all() and (got[0][:2, 3] < got[0][:2, 1]).all()  # inverted
    np.testing.assert_array_equal(got[0][0], got[0][1])
    assert (got[1][:10] > 0).all() and not got[1][10:].any()  # all ten kept


def test_proposals_negative_threshold_drops_disjoint_boxes(tmp_path):
    """OpenVINO's NMS gives boxes that do not touch IoU 0, and 0 > nms_threshold -0.1: of ten
    disjoint boxes only the first stays (measured); ONNX NonMaxSuppression would keep all ten."""
    feeds = _inverted_feeds()
    feeds["deltas"][:] = 0
    feeds["anchors"][1] = [40, 20, 55, 35]
    got = _rpn_check(_rpn_model(tmp_path, dict(RPN, min_size=0.0, nms_threshold=-0.1, post_nms_count=12), a=1), feeds)
    assert got[1][0] > 0 and not got[1][1:].any()
