"""NMSRotated-13 on OpenVINO-written IR: onnxruntime against the float64 oracle and OpenVINO's CPU
plugin, indices exact and scores bit for bit (they are gathered, not computed). Thresholds are
checked to lie at least 1e-5 away from every IoU the oracle computes, so that the comparisons
test the geometry and not the rounding; the rounding itself is measured against OpenVINO by
bisecting the threshold at which it suppresses (test_iou_within_ulps_of_openvino)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset13 as o13
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.nms_rotated import iou as oracle_iou
from ir2onnx.testing import assert_bitexact, assert_check, ov_parameter, ov_save, run_openvino

from util import all_outputs_bitexact

NAMES = ("indices", "scores", "valid")


def _ir(tmp_path, shape=(2, 8, 3), clockwise=True, srt=True, otype="i64", dtype=np.float32, dyn=True,
        mob=4, iou=0.3, st=0.15, run_time=False):
    """NMSRotated with run-time boxes and scores (dynamic box count); thresholds constant or inputs."""
    b, n, c = shape
    boxes = ov_parameter([b, None if dyn else n, 5], dtype, "boxes")
    scores = ov_parameter([b, c, None if dyn else n], dtype, "scores")
    params = [boxes, scores]
    if run_time:
        extra = [ov_parameter([], np.int64, "mob"), ov_parameter([1], np.float32, "iou"),
                 ov_parameter([], np.float32, "st")]
        params += extra
    else:
        extra = [np.int64(mob), np.float32(iou), np.float32(st)]
    node = o13.nms_rotated(boxes, scores, *extra, sort_result_descending=srt, output_type=otype,
                           clockwise=clockwise)
    outs = [node.output(i) for i in range(3)]
    for o, name in zip(outs, NAMES):
        o.get_tensor().set_names({name})
    return ov_save(tmp_path / "nmsr.xml", outs, params)


def _data(shape=(2, 8, 3), seed=0, spread=5.0):
    """Rotated boxes crowded enough to overlap; scores on a 0.1 grid (ties)."""
    b, n, c = shape
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, spread, (b, n, 2))
    wh = rng.uniform(1, 4, (b, n, 2))
    angle = rng.uniform(-np.pi, np.pi, (b, n, 1))
    scores = np.round(rng.uniform(0, 1, (b, c, n)) * 10) / 10
    return np.concatenate([xy, wh, angle], axis=2).astype(np.float32), scores.astype(np.float32)


def _margin(boxes, t, clockwise=True):
    """The smallest distance of a pairwise oracle IoU (within a batch) from the threshold t."""
    return min(abs(oracle_iou(bx[i], bx[j], clockwise) - t)
               for bx in boxes for i in range(len(bx)) for j in range(len(bx)) if i != j)


def _run(xml, feeds, openvino=True):
    return all_outputs_bitexact(xml, feeds, openvino, NAMES)


@pytest.mark.parametrize("clockwise", [True, False])
@pytest.mark.parametrize("srt", [True, False])
def test_matches_openvino(tmp_path, clockwise, srt):
    xml = _ir(tmp_path, clockwise=clockwise, srt=srt)
    suppressed = 0
    for seed in range(4):
        boxes, scores = _data(seed=seed)
        assert _margin(boxes, 0.3, clockwise) > 1e-5
        idx, sc, valid = _run(xml, {"boxes": boxes, "scores": scores})
        assert valid.tolist() == [len(idx)] and sc.dtype == np.float32
        assert_bitexact(sc[:, 2], scores[idx[:, 0], idx[:, 1], idx[:, 2]])
        candidates = np.minimum((scores > 0.15).sum(axis=2), 4).sum()
        suppressed += candidates - len(idx)
        if srt:
            assert np.all(np.diff(sc[:, 2]) <= 0)
        else:
            assert np.all(np.diff(idx[:, 0] * 3 + idx[:, 1]) >= 0)
    assert suppressed > 0  # the IoU did suppress boxes


def test_clockwise_decides(tmp_path):
    """Two long thin boxes, the second shifted along the first's turned axis (and a little
    across): overlapping (IoU 3.5/12.5) when the angle turns them as clockwise=true does, apart
    otherwise."""
    a = 0.6
    shift = 3 * np.array([np.cos(a), np.sin(a)]) + 0.3 * np.array([-np.sin(a), np.cos(a)])
    boxes = np.array([[[0, 0, 8, 1, a], [shift[0], shift[1], 8, 1, a]]], np.float32)
    scores = np.array([[[0.9, 0.8]]], np.float32)
    kept = {}
    for cw in (True, False):
        xml = _ir(tmp_path, shape=(1, 2, 1), clockwise=cw, iou=0.2, st=0.0, dyn=False)
        kept[cw] = _run(xml, {"boxes": boxes, "scores": scores})[0][:, 2].tolist()
    assert oracle_iou(boxes[0, 1], boxes[0, 0], True) == pytest.approx(3.5 / 12.5, abs=1e-6)
    assert oracle_iou(boxes[0, 1], boxes[0, 0], False) == 0
    assert kept == {True: [0], False: [0, 1]}


def test_collinear_edges_openvino_deviates(tmp_path):
    """The second box is the first shifted by 3 along its long axis: their long edges are
    collinear, the IoU is 5/11 and the second box is suppressed at iou_threshold 0.3. OpenVINO
    2026.4's CPU plugin drops the intersection's corners that lie on the other box's edge (its
    f32 containment test rounds them outside) and computes 0.185 (measured by bisecting the
    threshold): it keeps the box. ir2onnx follows the spec (README deviations)."""
    a = 0.6
    shift = 3 * np.array([np.cos(a), np.sin(a)])
    boxes = np.array([[[0, 0, 8, 1, a], [shift[0], shift[1], 8, 1, a]]], np.float32)
    scores = np.array([[[0.9, 0.8]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 2, 1), iou=0.3, st=0.0, dyn=False)
    feeds = {"boxes": boxes, "scores": scores}
    assert oracle_iou(boxes[0, 1], boxes[0, 0]) == pytest.approx(5 / 11, abs=1e-6)
    assert _run(xml, feeds, openvino=False)[0][:, 2].tolist() == [0]
    assert run_openvino(xml, feeds)[0][:, 2].tolist() == [0, 1]
    below = _ir(tmp_path, shape=(1, 2, 1), iou=0.18, st=0.0, dyn=False)
    assert run_openvino(below, feeds)[0][:, 2].tolist() == [0]  # OpenVINO's IoU: between 0.18 and 0.3


@pytest.mark.parametrize("t, kept", [(0.24, [0, 3]), (0.26, [0, 1, 3]), (0.0, [0, 3])])
def test_known_overlaps(tmp_path, t, kept):
    """Box 1 inside box 0 (IoU 1/4); box 2 is box 0 turned by pi/2 with w and h swapped (IoU 1);
    box 3 is 0.5 away from box 0 along its long axis (IoU exactly 0, kept at iou_threshold 0)."""
    boxes = np.array([[[0, 0, 4, 2, 0.5], [0, 0, 2, 1, 0.5], [0, 0, 2, 4, 0.5 + np.pi / 2],
                       [4.5 * np.cos(0.5), 4.5 * np.sin(0.5), 4, 2, 0.5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 4, 1), iou=t, st=0.0, mob=10)
    assert _run(xml, {"boxes": boxes, "scores": scores})[0][:, 2].tolist() == kept


def test_touching_boxes_at_threshold_zero(tmp_path):
    """Axis-aligned boxes sharing edges or a corner overlap in area 0: all kept at iou_threshold 0;
    a box overlapping by 1e-3 is suppressed."""
    boxes = np.array([[[0, 0, 4, 2, 0], [4, 0, 4, 2, 0], [0, 2, 4, 2, 0], [4, 2, 4, 2, 0],
                       [-3.999, 0, 4, 2, 0]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.5]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 5, 1), iou=0.0, st=0.0, mob=10)
    assert _run(xml, {"boxes": boxes, "scores": scores})[0][:, 2].tolist() == [0, 1, 2, 3]


def test_degenerate_boxes(tmp_path):
    """w * h not positive: IoU 0 (kept, suppresses nothing); both w and h negative: the same
    rectangle as their absolute values (a positive area)."""
    boxes = np.array([[[0, 0, 0, 3, 0.2], [0, 0, 3, 3, 0.2], [0, 0, -3, 3, 0.2], [0, 0, -3, -3, 0.2],
                       [0.1, 0, 3, 3, 0.2]]], np.float32)
    scores = np.array([[[0.95, 0.9, 0.85, 0.8, 0.75]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 5, 1), iou=0.5, st=0.0, mob=10)
    assert _run(xml, {"boxes": boxes, "scores": scores})[0][:, 2].tolist() == [0, 1, 2]


def test_run_time_thresholds(tmp_path):
    """max boxes, iou and score thresholds fed at run time (a 1-element iou_threshold), a negative
    threshold keeping one box per class, max boxes 0 and above the box count."""
    xml = _ir(tmp_path, run_time=True, clockwise=False)
    for seed, (mob, t, st) in enumerate(((3, 0.25, 0.2), (0, 0.5, 0.0), (20, 0.45, 0.35), (5, -0.5, 0.1),
                                         (2, 1.5, 0.0))):
        boxes, scores = _data((2, 6 + seed, 3), seed=seed + 10)
        if 0 <= t <= 1:
            assert _margin(boxes, t, False) > 1e-5
        feeds = {"boxes": boxes, "scores": scores, "mob": np.array(mob), "iou": np.array([t], np.float32),
                 "st": np.array(st, np.float32)}
        idx, sc, valid = _run(xml, feeds)
        assert np.all(sc[:, 2] > np.float32(st)) and valid.tolist() == [len(idx)]
        per_class = np.bincount(idx[:, 0] * 3 + idx[:, 1], minlength=6) if len(idx) else np.zeros(6, int)
        assert per_class.max(initial=0) <= (1 if t < 0 else mob)
        if t < 0:
            assert per_class.tolist() == [int(np.any(s > np.float32(st))) for s in scores.reshape(6, -1)]


@pytest.mark.parametrize("otype", ["i32", "i64"])
def test_output_type_and_f16(tmp_path, otype):
    xml = _ir(tmp_path, otype=otype, dtype=np.float16, iou=0.35)
    boxes, scores = _data(seed=7)
    boxes, scores = boxes.astype(np.float16), scores.astype(np.float16)
    assert _margin(boxes.astype(np.float32), 0.35) > 1e-5
    idx, sc, valid = _run(xml, {"boxes": boxes, "scores": scores})
    assert idx.dtype == valid.dtype == np.dtype(otype.replace("i", "int"))
    assert len(idx) > 0


def test_check_cli_path(tmp_path):
    """``ir2onnx check``: onnxruntime, the oracle and OpenVINO agree (exact) on the harness feeds."""
    xml = _ir(tmp_path, srt=True, iou=0.3123)
    boxes, scores = _data(seed=3)
    assert_check(xml, inputs={"boxes": boxes, "scores": scores}, bitexact=True)


def test_iou_close_to_openvino(tmp_path):
    """The IoU the lowering computes (f64, rounded to f32) is the oracle's to f32 rounding and
    OpenVINO's (f32 arithmetic) to 3e-7: for each pair the smallest f32 threshold at which the
    second box is kept (iou <= t) is found by bisection, on OpenVINO's CPU plugin and on
    onnxruntime (measured over 600 random pairs: |ort - oracle| <= 5e-8, |ort - OpenVINO| <= 3e-7)."""
    xml = _ir(tmp_path, shape=(1, 2, 1), run_time=True, dyn=False, srt=False)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    sess = ort.InferenceSession(convert(xml).SerializeToString(), providers=["CPUExecutionProvider"])
    sc = np.array([[[0.9, 0.8]]], np.float32)

    def edge(kept, bx):
        lo, hi = 0, int(np.float32(1).view(np.int32))
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if kept(bx, np.array([mid], np.int32).view(np.float32)) else (mid, hi)
        return hi

    def by_ov(bx, t):
        return len(compiled([bx, sc, np.array(9), t, np.array(0, np.float32)])[0]) == 2

    def by_ort(bx, t):
        return len(sess.run(None, {"boxes": bx, "scores": sc, "mob": np.array(9), "iou": t,
                                   "st": np.array(0, np.float32)})[0]) == 2

    rng = np.random.default_rng(1)
    worst = 0
    for _ in range(12):
        a = np.concatenate([rng.uniform(0, 3, 2), rng.uniform(1, 8, 2), rng.uniform(-3.2, 3.2, 1)])
        b = a + np.concatenate([rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2), rng.uniform(-0.5, 0.5, 1)])
        bx = np.stack([a, b])[None].astype(np.float32)
        e_ov, e_ort = edge(by_ov, bx), edge(by_ort, bx)
        assert e_ov > 1000  # a real overlap (not IoU 0)
        v_ov, v_ort = (float(np.array([e], np.int32).view(np.float32)[0]) for e in (e_ov, e_ort))
        assert abs(v_ort - oracle_iou(bx[0, 1], bx[0, 0])) <= 6e-8
        worst = max(worst, abs(v_ov - v_ort))
    assert worst <= 3.5e-7


@pytest.mark.parametrize("what", ["max boxes", "boxes shape"])
def test_invalid(tmp_path, what):
    boxes = ov_parameter([1, 3, 5 if what != "boxes shape" else 4], np.float32, "boxes")
    scores = ov_parameter([1, 1, 3], np.float32, "scores")
    mob = np.int64(-1 if what == "max boxes" else 2)
    if what == "boxes shape":
        from ir2onnx.testing import IRWriter
        w = IRWriter("nmsr")
        b, s = w.parameter([1, 3, 4], "f32", "boxes"), w.parameter([1, 1, 3], "f32", "scores")
        consts = [w.const(np.array(2, np.int64)), w.const(np.array(0.5, np.float32)), w.const(np.array(0, np.float32))]
        outs = w.layer("NMSRotated", "opset13", [b, s, *consts], {},
                       [("i64", [None, 3]), ("f32", [None, 3]), ("i64", [1])], out_names=list(NAMES))
        for o in outs:
            w.result(o)
        xml = w.save(tmp_path / "n.xml")
    else:
        node = o13.nms_rotated(boxes, scores, mob, np.float32(0.5), np.float32(0))
        xml = ov_save(tmp_path / "n.xml", [node.output(i) for i in range(3)], [boxes, scores])
    with pytest.raises(InvalidLayer, match="negative|last dim 4"):
        convert(xml)


def test_mmdeploy_onnx_frontend(tmp_path):
    """The layer as OpenVINO's ONNX frontend writes it from mmdeploy's NMSRotated custom op
    (max boxes INT64_MAX as an i64 [1] Const, per-class order, only selected_indices used;
    onnxruntime cannot run the source op, so only OpenVINO and the oracle compare)."""
    from onnx import TensorProto, helper, save

    node = helper.make_node("NMSRotated", ["boxes", "scores"], ["idx"], domain="mmdeploy", iou_threshold=0.3,
                            score_threshold=0.15)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, None, 5]),
                                            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, None])],
                              [helper.make_tensor_value_info("idx", TensorProto.INT64, [None, 3])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)]),
         tmp_path / "m.onnx")
    ov.save_model(ov.Core().read_model(str(tmp_path / "m.onnx")), str(tmp_path / "m.xml"))
    boxes, scores = _data((1, 9, 2), seed=21)
    assert _margin(boxes, 0.3) > 1e-5
    idx = _run(tmp_path / "m.xml", {"boxes": boxes, "scores": scores})[0]
    assert np.all(np.diff(idx[:, 1]) >= 0) and len(idx) < np.sum(scores > 0.15)
    assert_check(tmp_path / "m.xml", inputs={"boxes": boxes, "scores": scores}, bitexact=True)


def test_equal_to_thresholds(tmp_path):
    """An IoU equal to iou_threshold keeps the box (``iou > t`` suppresses), a score equal to
    score_threshold drops it (``score > t`` is a candidate): box 1 inside box 0 has IoU exactly
    1/4 (axis-aligned, exact in f32); box 2's score is the threshold."""
    boxes = np.array([[[0, 0, 4, 2, 0], [0, 0, 2, 1, 0], [9, 9, 1, 1, 0.3]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.25]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 3, 1), iou=0.25, st=0.25, mob=10)
    assert _run(xml, {"boxes": boxes, "scores": scores})[0][:, 2].tolist() == [0, 1]


def test_separated_boxes_never_overlap(tmp_path):
    """Pairs a gap apart along the first box's axis, the second turned a little: IoU exactly 0, so
    both are kept at iou_threshold 0 (the clipped area alone is 0 only up to rounding here)."""
    n = 48
    rng = np.random.default_rng(5)
    a, w, h = rng.uniform(-3.2, 3.2, n), rng.uniform(1, 4, n), rng.uniform(1, 4, n)
    w2, gap = rng.uniform(1, 4, n), rng.choice([0.25, 0.5], n)
    dist = (w + w2) / 2 + gap
    first = np.stack([np.zeros(n), np.zeros(n), w, h, a], 1)
    second = np.stack([dist * np.cos(a), dist * np.sin(a), w2, rng.uniform(1, 4, n), a + rng.uniform(-0.3, 0.3, n)], 1)
    boxes = np.stack([first, second], 1).astype(np.float32)
    boxes = boxes[[oracle_iou(b[1], b[0]) == 0 for b in boxes]]  # the turn may close the gap
    n = len(boxes)
    assert n >= 30
    xml = _ir(tmp_path, shape=(n, 2, 1), iou=0.0, st=0.0, dyn=False, srt=False)
    idx = _run(xml, {"boxes": boxes, "scores": np.tile(np.array([[[0.9, 0.8]]], np.float32), (n, 1, 1))})[0]
    assert len(idx) == 2 * n
