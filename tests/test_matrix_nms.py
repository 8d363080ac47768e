"""MatrixNms-8 on OpenVINO-written IR (boxes and scores as Parameters, dynamic box and class
counts): onnxruntime against the oracle (bit for bit) and against OpenVINO's CPU plugin row for
row (the same classes, indices and order; decayed scores and coordinates within 1e-5: the CPU
plugin computes the linear decay in f32 with 1e-10 added to the divisor, PaddlePaddle in f64 without).
Scores are continuous (no equal scores within a class) unless a test is about ties."""
from __future__ import annotations

import itertools
import math

import numpy as np
import openvino.opset8 as o8
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, assert_check, ov_parameter, ov_save, run_onnx, run_openvino

NAMES = ("selected_outputs", "selected_indices", "valid_outputs")


def _ir(tmp_path, dtype=np.float32, n=2, name="mnms.xml", **attrs):
    boxes = ov_parameter([n, None, 4], dtype, "boxes")
    scores = ov_parameter([n, None, None], dtype, "scores")
    node = o8.matrix_nms(boxes, scores, **attrs)
    outs = [node.output(i) for i in range(3)]
    for o, nm in zip(outs, NAMES):
        o.get_tensor().set_names({nm})
    return ov_save(tmp_path / name, outs, [boxes, scores])


def _data(seed, n=2, m=8, c=3, dtype=np.float32, scale=10.0):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, scale, (n, m, 2))
    boxes = np.concatenate([lo, lo + rng.uniform(0.1, 0.5, (n, m, 2)) * scale], axis=2).astype(dtype)
    return {"boxes": boxes, "scores": rng.uniform(0, 1, (n, c, m)).astype(dtype)}


def _run(xml, feeds, openvino=True):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    for g, w, what in zip(got, want, NAMES):
        assert_bitexact(g, w, f"oracle {what}")
    if openvino:
        ov = run_openvino(xml, feeds)
        assert_bitexact(got[1], ov[1], "openvino selected_indices")
        assert_bitexact(got[2], ov[2], "openvino valid_outputs")
        assert got[0].shape == ov[0].shape and got[0].dtype == ov[0].dtype
        assert_bitexact(got[0][:, 0], ov[0][:, 0], "openvino classes")
        np.testing.assert_allclose(got[0].astype(np.float32), ov[0].astype(np.float32), rtol=0, atol=1e-5)
    return got


GRID = list(itertools.product(["linear", "gaussian"], ["none", "score", "classid"], [False, True], [-1, 3],
                              [-1, 5], [-1, 0]))


@pytest.mark.parametrize("decay,sort_type,across,nms_top_k,keep_top_k,bg", GRID)
def test_matches_openvino_and_oracle(tmp_path, decay, sort_type, across, nms_top_k, keep_top_k, bg):
    xml = _ir(tmp_path, sort_result_type=sort_type, sort_result_across_batch=across, nms_top_k=nms_top_k,
              keep_top_k=keep_top_k, background_class=bg, decay_function=decay, gaussian_sigma=0.5,
              score_threshold=0.1, post_threshold=0.3)
    for seed in range(2):
        feeds = _data(seed)
        out, idx, num = _run(xml, feeds)
        assert len(out) == len(idx) == num.sum() > 0
        b, i = idx[:, 0] // 8, idx[:, 0] % 8
        assert_bitexact(out[:, 2:], feeds["boxes"][b, i])
        k = out[:, 0].astype(int)
        assert np.all(out[:, 1] > 0.3) and np.all(out[:, 1] <= feeds["scores"][b, k, i])
        assert bg == -1 or np.all(k != bg)
        if keep_top_k > -1:
            assert np.all(num <= keep_top_k)
        if nms_top_k > -1:  # at most nms_top_k per image and class
            assert max(np.sum((b == j) & (k == c)) for j in range(2) for c in range(3)) <= nms_top_k
        if sort_type == "score" and across:
            assert np.all(np.diff(out[:, 1]) <= 0)
        elif sort_type == "classid" and across:
            assert np.all(np.diff(k) >= 0)
        else:  # per image, decayed score descending
            assert np.all(np.diff(b) >= 0)
            assert all(np.all(np.diff(out[b == j, 1]) <= 0) for j in range(2))


@pytest.mark.parametrize("decay", ["linear", "gaussian"])
@pytest.mark.parametrize("normalized", [True, False])
def test_normalized_and_i32(tmp_path, decay, normalized):
    xml = _ir(tmp_path, output_type="i32", decay_function=decay, normalized=normalized, score_threshold=0.05,
              post_threshold=0.05, sort_result_type="score")
    for seed in range(3):
        out, idx, num = _run(xml, _data(seed + 10, m=10, c=4, scale=1.0 if normalized else 20.0))
        assert idx.dtype == num.dtype == np.int32 and len(out) > 0


def test_f16_inputs(tmp_path):
    xml = _ir(tmp_path, dtype=np.float16, decay_function="gaussian", score_threshold=0.2, post_threshold=0.1,
              keep_top_k=6)
    out, _, num = _run(xml, _data(3, dtype=np.float16))
    assert out.dtype == np.float16 and num.tolist() == [6, 6]


def test_worked_example(tmp_path):
    """B overlaps A with IoU 0.5: linear decay (1 - 0.5) / (1 - 0) (B's own max IoU is A's);
    C overlaps nothing; D's score equals score_threshold (not a candidate: the spec's "higher")."""
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5], [2, 2, 3, 3], [5, 5, 6, 6]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7, 0.1]]], np.float32)}
    out, idx, num = _run(_ir(tmp_path, n=1, score_threshold=0.1, post_threshold=0.3), feeds)
    assert idx.ravel().tolist() == [0, 2, 1] and num.tolist() == [3]
    assert out[:, 1].tolist() == [np.float32(0.9), np.float32(0.7), np.float32(0.5) * np.float32(0.8)]
    out, idx, _ = _run(_ir(tmp_path, n=1, name="g.xml", score_threshold=0.1, post_threshold=0.3,
                           decay_function="gaussian", gaussian_sigma=2.0), feeds)
    assert out[2, 1] == np.float32(np.float32(math.exp(-0.5)) * np.float32(0.8))  # exp((0 - 0.5^2) * 2)
    _, idx, _ = _run(_ir(tmp_path, n=1, name="p.xml", score_threshold=0.1, post_threshold=0.4), feeds)
    assert idx.ravel().tolist() == [0, 2]  # 0.4 is not above post_threshold 0.4
    _, idx, _ = _run(_ir(tmp_path, n=1, name="s.xml", score_threshold=0.1, post_threshold=0.0), feeds)
    assert idx.ravel().tolist() == [0, 2, 1]  # D (score 0.1 = score_threshold) is no candidate


def test_decay_uses_the_earlier_boxes_max_iou(tmp_path):
    """C overlaps B (IoU 0.5) and B overlaps A (IoU 0.5): C's linear decay is min((1 - 0) / (1 - 0),
    (1 - 0.5) / (1 - 0.5)) = 1, so C keeps its score (greedy NMS would suppress nothing either)."""
    feeds = {"boxes": np.array([[[0, 0, 2, 1], [1, 0, 3, 1], [2, 0, 4, 1]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32)}
    out, idx, _ = _run(_ir(tmp_path, n=1, score_threshold=0.0, post_threshold=0.0), feeds)
    ious = np.float32(1) / np.float32(3)  # A-B and B-C: 1 / 3; A-C: 0
    assert idx.ravel().tolist() == [0, 2, 1]
    assert out[1, 1] == np.float32(0.7) and out[2, 1] == np.float32(1 - float(ious)) * np.float32(0.8)


def test_duplicate_boxes_divide_by_zero(tmp_path):
    """A repeated twice: the second copy decays to 0 (f(1, 0)); B's decay against the copy divides
    by 1 - max_iou = 0 (inf, or NaN for the third copy: no part), so B keeps 1 - IoU(A, B)."""
    feeds = {"boxes": np.array([[[0, 0, 2, 2], [0, 0, 2, 2], [1, 0, 3, 2], [0, 0, 2, 2]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)}
    out, idx, _ = _run(_ir(tmp_path, n=1, score_threshold=0.0, post_threshold=0.0), feeds)
    assert idx.ravel().tolist() == [0, 2]
    assert out[1, 1] == np.float32(1 - float(np.float32(2) / np.float32(6))) * np.float32(0.7)


def test_image_without_detections_does_not_stop_the_next(tmp_path):
    """PaddlePaddle and the CPU plugin go on after an empty image (OpenVINO's reference code
    would stop at it)."""
    xml = _ir(tmp_path, n=3, score_threshold=0.2, post_threshold=0.1, sort_result_type="score",
              sort_result_across_batch=True)
    feeds = _data(4, n=3)
    feeds["scores"][0] = 0.1
    _, idx, num = _run(xml, feeds)
    assert num[0] == 0 and num[1] > 0 and num[2] > 0 and np.all(idx[:, 0] >= 8)


def test_degenerate_boxes(tmp_path):
    """Flipped boxes (area 0), point boxes (IoU 0 / 0 = NaN, which takes no part) and touching
    boxes, against OpenVINO."""
    boxes = np.array([[[0, 0, 4, 4], [4, 4, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], [4, 0, 6, 4], [5, 1, 3, 2]]],
                     np.float32)
    feeds = {"boxes": boxes, "scores": np.array([[[0.9, 0.8, 0.7, 0.6, 0.5, 0.4]]], np.float32)}
    # normalized: box 1 is flipped (area 0) inside box 0: IoU 16 / 0 = inf, and the linear decay
    # (1 - 0) / (1 - inf) = -0 removes every later box; the point boxes 2, 3 have IoU NaN
    kept = {("linear", True): [0], ("linear", False): [0, 2, 4, 5, 1],
            ("gaussian", True): [0, 2, 3, 4, 5], ("gaussian", False): [0, 2, 4, 1, 5, 3]}
    for (decay, norm), want in kept.items():
        xml = _ir(tmp_path, n=1, name=f"{decay}{norm}.xml", score_threshold=0.0, post_threshold=0.0,
                  decay_function=decay, normalized=norm)
        _, idx, _ = _run(xml, feeds)
        assert idx.ravel().tolist() == want


def test_nan_iou_takes_no_part_in_max_iou(tmp_path):
    """k, a line, and j, flipped in x, have IoU -0 / 0 = NaN: j's max IoU stays 0, so i (flipped
    in y, IoU 4 / (0 + 0 - 4) = -1 with j) decays by the gaussian exp((0 - 1) * 2)."""
    feeds = {"boxes": np.array([[[0, 2, 4, 2], [3, 0, 1, 4], [0, 3, 4, 1]]], np.float32),
             "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32)}
    xml = _ir(tmp_path, n=1, score_threshold=0.0, post_threshold=0.0, decay_function="gaussian", gaussian_sigma=2.0)
    out, idx, _ = _run(xml, feeds)
    assert idx.ravel().tolist() == [0, 1, 2]
    assert out[2, 1] == np.float32(np.float32(math.exp(-2.0)) * np.float32(0.7))


def test_equal_scores(tmp_path):
    """Equal scores of one class: nms_top_k keeps the smaller box indices (as the CPU plugin
    does here); apart boxes with equal scores decay alike in any order."""
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]] * 2, np.float32),
             "scores": np.full((2, 2, 4), 0.5, np.float32)}
    out, idx, num = _run(_ir(tmp_path, score_threshold=0.0, nms_top_k=2), feeds)
    assert idx.ravel().tolist() == [0, 1, 0, 1, 4, 5, 4, 5] and num.tolist() == [4, 4]
    assert out[:, 0].tolist() == [0, 0, 1, 1] * 2


def test_equal_scores_of_overlapping_boxes_smaller_index_first(tmp_path):
    """Overlapping boxes with equal scores: the decay depends on their order, which the spec leaves
    open (OpenVINO and PaddlePaddle take std::partial_sort's); ir2onnx takes the smaller index first."""
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5]]], np.float32),
             "scores": np.array([[[0.8, 0.8]]], np.float32)}
    out, idx, _ = _run(_ir(tmp_path, n=1, score_threshold=0.0), feeds, openvino=False)
    assert idx.ravel().tolist() == [0, 1] and out[:, 1].tolist() == [np.float32(0.8), np.float32(0.4)]


def test_nothing_selected_and_no_boxes(tmp_path):
    """Nothing passes, nms_top_k = 0 and zero boxes: no rows, counts 0 (the spec; OpenVINO's CPU
    plugin raises when no image has a detection, crashes the process on nms_top_k = 0 with
    candidates and fails on zero boxes: oracle only there)."""
    xml = _ir(tmp_path, score_threshold=0.99, keep_top_k=3, sort_result_type="classid", sort_result_across_batch=True)
    feeds = {"boxes": np.zeros((2, 3, 4), np.float32), "scores": np.zeros((2, 2, 3), np.float32)}
    out, idx, num = _run(xml, feeds, openvino=False)
    assert out.shape == (0, 6) and idx.shape == (0, 1) and num.tolist() == [0, 0]
    with pytest.raises(RuntimeError, match="Total number of boxes"):  # measured, OpenVINO 2026.4
        run_openvino(xml, feeds)
    out, _, num = _run(_ir(tmp_path, name="z.xml", score_threshold=0.1, nms_top_k=0), _data(1), openvino=False)
    assert out.shape == (0, 6) and num.tolist() == [0, 0]
    empty = {"boxes": np.zeros((2, 0, 4), np.float32), "scores": np.zeros((2, 3, 0), np.float32)}
    out, _, num = _run(_ir(tmp_path, name="e.xml", score_threshold=0.1), empty, openvino=False)
    assert out.shape == (0, 6) and num.tolist() == [0, 0]


def test_detection_head_sized(tmp_path):
    """2 images, 120 boxes, 5 classes (background 0), the usual top-k limits."""
    xml = _ir(tmp_path, score_threshold=0.05, post_threshold=0.2, nms_top_k=40, keep_top_k=25, background_class=0,
              sort_result_type="score", decay_function="gaussian", gaussian_sigma=2.0)
    out, _, num = _run(xml, _data(7, m=120, c=5, scale=1.0))
    assert num.tolist() == [25, 25]


@pytest.mark.parametrize("opset", [14, 21])
def test_onnx_opsets(tmp_path, opset):
    xml = _ir(tmp_path, sort_result_type="classid", sort_result_across_batch=True, score_threshold=0.1,
              post_threshold=0.2, nms_top_k=4)
    feeds = _data(2)
    want = run_openvino(xml, feeds)
    got = run_onnx(xml, feeds, opset=opset)
    assert_bitexact(got[1], want[1]) and assert_bitexact(got[2], want[2])
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-5)


def test_check_command(tmp_path):
    xml = _ir(tmp_path, sort_result_type="score", score_threshold=0.1, post_threshold=0.2, keep_top_k=6)
    assert_check(xml, inputs=_data(5), rtol=0, atol=1e-5)


def test_refused(tmp_path):
    w = IRWriter("f64")  # OpenVINO itself builds MatrixNms on bf16, f16 and f32 only
    boxes, scores = w.parameter([1, None, 4], "f64", "boxes"), w.parameter([1, None, None], "f64", "scores")
    outs = w.layer("MatrixNms", "opset8", [boxes, scores], {"score_threshold": 0.1},
                   [("f64", (None, 6)), ("i64", (None, 1)), ("i64", (1,))], out_names=list(NAMES))
    for o in outs:
        w.result(o)
    with pytest.raises(UnsupportedLayer, match="boxes of type f64"):
        convert(w.save(tmp_path / "f64.xml"))
    xml = _ir(tmp_path, name="nan.xml", post_threshold=float("nan"))
    with pytest.raises(InvalidLayer, match="post_threshold must not be NaN"):
        convert(xml)
