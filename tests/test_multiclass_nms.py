"""MulticlassNms-8/-9 on OpenVINO-written IR (dynamic box and class counts): onnxruntime against
the oracle and OpenVINO's CPU plugin, row for row and bit for bit (rows gathered, not computed).
Scores sit on a 0.1 grid so that equal scores (the tie rules) occur in every case."""
from __future__ import annotations

import itertools

import numpy as np
import openvino.opset8 as o8
import openvino.opset9 as o9
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import all_outputs_bitexact

NAMES = ("selected_outputs", "selected_indices", "selected_num")


def _ir(tmp_path, mod=o9, dtype=np.float32, n=2, roisnum=False, **attrs):
    boxes = ov_parameter([n, None, 4], dtype, "boxes")
    scores = ov_parameter([n, None] if roisnum else [n, None, None], dtype, "scores")  # roisnum: [C, M]
    params = [boxes, scores]
    if roisnum:
        params.append(ov_parameter([n], np.int32, "roisnum"))
    node = mod.multiclass_nms(*params, **attrs)
    outs = [node.output(i) for i in range(3)]
    for o, name in zip(outs, NAMES):
        o.get_tensor().set_names({name})
    return ov_save(tmp_path / "mnms.xml", outs, params)


def _data(seed, n=2, m=8, c=3, dtype=np.float32):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, 10, (n, m, 2))
    boxes = np.concatenate([lo, lo + rng.uniform(1, 5, (n, m, 2))], axis=2).astype(dtype)
    scores = (rng.integers(0, 11, (n, c, m)) / 10).astype(dtype)
    return {"boxes": boxes, "scores": scores}


def _run(xml, feeds, openvino=True):
    return all_outputs_bitexact(xml, feeds, openvino, NAMES)


GRID = list(itertools.product(["none", "score", "classid"], [False, True], [-1, 3], [-1, 4], [-1, 0]))


@pytest.mark.parametrize("sort_type,across,nms_top_k,keep_top_k,bg", GRID)
def test_matches_openvino_and_oracle(tmp_path, sort_type, across, nms_top_k, keep_top_k, bg):
    xml = _ir(tmp_path, sort_result_type=sort_type, sort_result_across_batch=across, nms_top_k=nms_top_k,
              keep_top_k=keep_top_k, background_class=bg, iou_threshold=0.3, score_threshold=0.3)
    for seed in range(3):
        feeds = _data(seed)
        out, idx, num = _run(xml, feeds)
        assert len(out) == len(idx) == num.sum() > 0
        b, i = idx[:, 0] // 8, idx[:, 0] % 8
        assert_bitexact(out[:, 2:], feeds["boxes"][b, i])
        assert_bitexact(out[:, 1], feeds["scores"][b, out[:, 0].astype(int), i])
        assert np.all(out[:, 1] >= 0.3) and (bg == -1 or np.all(out[:, 0] != bg))
        if keep_top_k > -1:
            assert np.all(num <= keep_top_k)
        if sort_type == "score" and across:
            assert np.all(np.diff(out[:, 1]) <= 0)
        elif not across or sort_type == "none":
            assert np.all(np.diff(b) >= 0)


@pytest.mark.parametrize("mod", [o8, o9])
@pytest.mark.parametrize("normalized", [True, False])
def test_versions_normalized_and_i32(tmp_path, mod, normalized):
    xml = _ir(tmp_path, mod, sort_result_type="classid", output_type="i32", iou_threshold=0.2,
              score_threshold=0.1, normalized=normalized)
    for seed in range(3):
        out, idx, num = _run(xml, _data(seed + 10, m=10, c=4))
        assert idx.dtype == num.dtype == np.int32


def test_f16_inputs(tmp_path):
    xml = _ir(tmp_path, dtype=np.float16, sort_result_type="score", iou_threshold=0.4, score_threshold=0.2,
              keep_top_k=6)
    out, _, _ = _run(xml, _data(3, dtype=np.float16))
    assert out.dtype == np.float16


def test_thresholds_are_inclusive(tmp_path):
    """IoU exactly 0.5 suppresses; a score exactly at the threshold is kept (the spec's >=)."""
    xml = _ir(tmp_path, n=1, iou_threshold=0.5, score_threshold=0.25)
    feeds = {"boxes": np.array([[[0, 0, 2, 1], [0, 0, 1, 1], [5, 5, 6, 6], [8, 8, 9, 9]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.1, 0.25]]], np.float32)}
    _, idx, num = _run(xml, feeds)
    assert idx.ravel().tolist() == [0, 3] and num.tolist() == [2]


def test_flipped_and_empty_boxes_overlap_nothing(tmp_path):
    xml = _ir(tmp_path, n=1, iou_threshold=0.1, score_threshold=0.0)
    feeds = {"boxes": np.array([[[0, 0, 4, 4], [4, 4, 0, 0], [0, 0, 0, 4], [1, 1, 3, 3]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)}
    _, idx, _ = _run(xml, feeds)
    assert idx.ravel().tolist() == [0, 1, 2]


@pytest.mark.parametrize("iou,kept", [(0.0, 1), (1.5, 4)])
def test_iou_threshold_out_of_range(tmp_path, iou, kept):
    xml = _ir(tmp_path, n=1, iou_threshold=iou, score_threshold=0.0)
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [5, 5, 6, 6], [8, 8, 9, 9]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)}
    _, _, num = _run(xml, feeds)
    assert num.tolist() == [kept]


def test_nms_eta_that_never_acts_converts(tmp_path):
    xml = _ir(tmp_path, nms_eta=0.5, iou_threshold=0.5, score_threshold=0.2)
    _run(xml, _data(5))


def test_refused(tmp_path):  # noqa: D103
    with pytest.raises(UnsupportedLayer, match="adaptive threshold"):
        convert(_ir(tmp_path, nms_eta=0.5, iou_threshold=0.7))
    with pytest.raises(UnsupportedLayer, match="back in the queue"):
        convert(_ir(tmp_path, nms_eta=0.5, iou_threshold=0.5, score_threshold=-0.1))


@pytest.mark.parametrize("repeat,want", [(0, [0, 1, 2]), (1, [0, 1])])
def test_nms_eta_loop_score_at_threshold(tmp_path, repeat, want):
    """nms_eta < 1 (never acting): box 2 (score == threshold) is compared with the latest kept
    box (1) only: a repeat of box 0 is kept, one of box 1 dropped (measured; nms_eta 1: dropped)."""
    boxes = [[0, 0, 1, 1], [5, 5, 6, 6]]
    feeds = {"boxes": np.array([boxes + [boxes[repeat]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.25]]], np.float32)}
    for eta, kept in ((0.5, want), (1.0, [0, 1])):
        _, idx, _ = _run(_ir(tmp_path, n=1, iou_threshold=0.5, score_threshold=0.25, nms_eta=eta), feeds)
        assert idx.ravel().tolist() == kept


INF = np.float32(np.inf)


@pytest.mark.parametrize("eta,score_t,scores,want", [(1.0, 0.0, [0.9, 0.8, 0.7], [0, 1]),
                                                      (0.5, 0.0, [0.9, 0.8, 0.7], [0]),
                                                      (0.5, 0.0, [0.9, 0.0, 0.7], [0, 1]),
                                                      (0.5, 0.5, [0.9, 0.5, 0.7], [0])])
def test_nan_iou(tmp_path, eta, score_t, scores, want):
    """Boxes 0 and 1 span -inf..inf: IoU inf / (inf + inf - inf) = NaN, which drops nothing with
    nms_eta 1 and drops box 1 in the nms_eta loop unless its score is 0; box 2 (IoU 0) is dropped
    at iou_threshold 0 (0 >= 0)."""
    xml = _ir(tmp_path, n=1, iou_threshold=0.0, score_threshold=score_t, nms_eta=eta, normalized=True)
    feeds = {"boxes": np.array([[[-INF, 0, INF, 1], [-INF, 0, INF, 1], [0, 5, 1, 6]]], np.float32),
             "scores": np.array([[scores]], np.float32)}
    _, idx, _ = _run(xml, feeds)
    assert idx.ravel().tolist() == want


def test_score_at_threshold_checked_against_every_kept_box(tmp_path):
    """Box 2 (score == threshold) repeats box 0, kept before box 1: suppressed (OpenVINO's
    reference code would compare it with the last kept box only; its CPU plugin and the spec do not)."""
    xml = _ir(tmp_path, n=1, iou_threshold=0.5, score_threshold=0.25)
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [5, 5, 6, 6], [0, 0, 1, 1]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.25]]], np.float32)}
    _, idx, _ = _run(xml, feeds)
    assert idx.ravel().tolist() == [0, 1]


def test_nearly_equal_scores_sort_exactly(tmp_path):
    """Scores 3e-7 apart in two classes: the higher first (the reference code's 1e-6 tie window
    would order them by class; the CPU plugin does not)."""
    xml = _ir(tmp_path, n=1, iou_threshold=0.5, score_threshold=0.0, sort_result_type="score")
    high = np.float32(0.5) + np.float32(3e-7)
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [5, 5, 6, 6]]], np.float32),
             "scores": np.array([[[0.5, 0.0], [0.0, high]]], np.float32)}
    out, _, _ = _run(xml, feeds)
    assert out[:2, 0].tolist() == [1, 0] and out[0, 1] == high


@pytest.mark.parametrize("sort_type,across", list(itertools.product(["score", "classid", "none"], [False, True])))
@pytest.mark.parametrize("normalized", [True, False])
def test_detection_head_sized(tmp_path, sort_type, across, normalized):
    """3 images, 200 boxes, 6 classes (background 0), continuous scores: the usual head."""
    xml = _ir(tmp_path, o8, n=3, iou_threshold=0.45, score_threshold=0.05, nms_top_k=50, keep_top_k=30,
              sort_result_type=sort_type, sort_result_across_batch=across, background_class=0,
              normalized=normalized)
    rng = np.random.default_rng(7)
    scale = 1 if normalized else 100
    lo = rng.uniform(0, scale, (3, 200, 2))
    boxes = np.concatenate([lo, lo + rng.uniform(0.05, 0.3, (3, 200, 2)) * scale], axis=2).astype(np.float32)
    _, _, num = _run(xml, {"boxes": boxes, "scores": rng.uniform(0, 1, (3, 6, 200)).astype(np.float32)})
    assert num.tolist() == [30, 30, 30]


def test_nothing_selected(tmp_path):
    xml = _ir(tmp_path, o8, iou_threshold=0.45, score_threshold=0.99, keep_top_k=3, nms_top_k=2,
              sort_result_type="classid", sort_result_across_batch=True, background_class=1)
    out, idx, num = _run(xml, {"boxes": np.zeros((2, 3, 4), np.float32), "scores": np.zeros((2, 2, 3), np.float32)})
    assert out.shape == (0, 6) and idx.shape == (0, 1) and num.tolist() == [0, 0]


def _roisnum_data(seed, c=3, total=9):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, 10, (c, total, 2))
    boxes = np.concatenate([lo, lo + rng.uniform(1, 5, (c, total, 2))], axis=2).astype(np.float32)
    return boxes, (rng.integers(0, 11, (c, total)) / 10).astype(np.float32)


@pytest.mark.parametrize("sort_type,across", list(itertools.product(["none", "score", "classid"], [False, True])))
@pytest.mark.parametrize("roisnum", [[4, 5], [0, 9], [9], [2, 0, 7], [-1, 3, 6]])
def test_roisnum_form(tmp_path, sort_type, across, roisnum):
    """MulticlassNms-9 with per-class boxes [C, S, 4], scores [C, S] and the boxes per image."""
    c = ov_parameter([3, None, 4], np.float32, "boxes")
    s = ov_parameter([3, None], np.float32, "scores")
    r = ov_parameter([None], np.int32, "roisnum")
    node = o9.multiclass_nms(c, s, r, sort_result_type=sort_type, sort_result_across_batch=across,
                             iou_threshold=0.3, score_threshold=0.2, nms_top_k=3, keep_top_k=5, background_class=1)
    outs = [node.output(i) for i in range(3)]
    for o, name in zip(outs, NAMES):
        o.get_tensor().set_names({name})
    xml = ov_save(tmp_path / "mnms.xml", outs, [c, s, r])
    negative = min(roisnum) < 0  # OpenVINO's CPU plugin steps back by the negative count
    for seed in range(2):
        boxes, scores = _roisnum_data(seed)
        feeds = {"boxes": boxes, "scores": scores, "roisnum": np.array(roisnum, np.int32)}
        out, idx, num = _run(xml, feeds, openvino=not negative)
        assert len(num) == len(roisnum) and num.sum() == len(out) > 0
        assert_bitexact(out[:, 2:], boxes[idx[:, 0] % 3, idx[:, 0] // 3])
        assert np.all(num[np.array(roisnum) <= 0] == 0)
        if negative and seed == 0 and sort_type == "none":  # measured: a flat index of -1
            assert np.min(run_openvino(xml, feeds)[1]) == -1


@pytest.mark.parametrize("opset", [14, 21])
def test_onnx_opsets(tmp_path, opset):
    xml = _ir(tmp_path, sort_result_type="classid", iou_threshold=0.3, score_threshold=0.3, keep_top_k=4, nms_top_k=3)
    feeds = _data(1)
    want = run_openvino(xml, feeds)
    for g, w, what in zip(run_onnx(xml, feeds, opset=opset), want, NAMES):
        assert_bitexact(g, w, f"opset {opset} {what}")


def _pair(tmp_path, a, b, thr, normalized=False):
    xml = _ir(tmp_path, n=1, iou_threshold=float(thr), score_threshold=0.0, normalized=normalized)
    feeds = {"boxes": np.array([[a, b]], np.float32), "scores": np.array([[[0.9, 0.8]]], np.float32)}
    return _run(xml, feeds)[2].tolist()


# (box a, box b, their IoU as OpenVINO's CPU plugin computes it, normalized=false): at 3e7 the
# coordinates step by 2, so NMS on boxes with x2 + 1 (rounded) sees another IoU (0.35196), and
# sub-pixel boxes whose IoU with x2 + 1 rounds 1 ulp lower (0.42085367)
PAIRS = [([30000054.0, 30000054.0, 30000080.0, 30000076.0], [30000050.0, 30000050.0, 30000072.0, 30000068.0],
          0.36869341135025024),
         ([0.1350965052843094, 0.721488356590271, 0.5253543257713318, 0.3102418780326843],
          [0.12659771740436554, 0.9551810622215271, 0.7857804298400879, 0.22491899132728577], 0.42085379362106323)]


@pytest.mark.parametrize("a,b,iou", PAIRS)
def test_iou_at_the_threshold_not_normalized(tmp_path, a, b, iou):
    """IoU == iou_threshold drops box b; the next f32 above keeps it (x2 - x1 + 1 as OpenVINO)."""
    assert _pair(tmp_path, a, b, np.float32(iou)) == [1]
    assert _pair(tmp_path, a, b, np.nextafter(np.float32(iou), np.float32(1))) == [2]


def test_sliver_box_not_normalized(tmp_path):
    """x2 - x1 + 1 = 2**-23 > 0 (x2 + 1 - x1 rounds to 0): box a is a sliver that suppresses b,
    IoU 2**-23 * 4 / 24 (about 2e-8)."""
    a, b = [2.0472865104675293, 0.0, 1.0472866296768188, 3.0], [0.0, 0.0, 5.0, 3.0]
    assert _pair(tmp_path, a, b, 1e-8) == [1]
    assert _pair(tmp_path, a, b, 1e-7) == [2]


def test_iou_at_the_threshold_normalized(tmp_path):
    """normalized: no +1, the IoU of the pair at 3e7 (252 / 716) decides at == and the next f32."""
    a, b, _ = PAIRS[0]
    iou = np.float32(252 / 716)
    assert _pair(tmp_path, a, b, iou, normalized=True) == [1]
    assert _pair(tmp_path, a, b, np.nextafter(iou, np.float32(1)), normalized=True) == [2]


@pytest.mark.parametrize("eta", [1.0, 0.5])
def test_far_boxes_not_normalized(tmp_path, eta):
    """Boxes at 3e7 on the f32 grid (step 2), some empty or flipped, scores on a 0.2 grid (some at
    score_threshold): row for row with OpenVINO (the old NonMaxSuppression lowering differed)."""
    xml = _ir(tmp_path, iou_threshold=0.5, score_threshold=0.2, nms_eta=eta, normalized=False)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        lo = np.round(rng.uniform(0, 6, (2, 12, 2))) * 2 + 3e7
        boxes = np.concatenate([lo, lo + np.round(rng.uniform(-1, 6, (2, 12, 2))) * 2], 2).astype(np.float32)
        _, _, num = _run(xml, {"boxes": boxes, "scores": (rng.integers(0, 6, (2, 3, 12)) / 5).astype(np.float32)})
        assert num.sum() > 0


def test_score_threshold_minus_inf(tmp_path):
    """score_threshold -inf: -inf scores are candidates, NaN scores are not (they must not take
    nms_top_k's places: candidates are sorted first)."""
    xml = _ir(tmp_path, n=1, iou_threshold=0.5, score_threshold=float("-inf"), nms_top_k=3)
    feeds = {"boxes": np.arange(5, dtype=np.float32)[None, :, None] * 2 + np.float32([0, 0, 1, 1]),
             "scores": np.array([[[np.nan, -np.inf, np.nan, -np.inf, 0.5]]], np.float32)}
    _, idx, _ = _run(xml, feeds)
    assert idx.ravel().tolist() == [4, 1, 3]
