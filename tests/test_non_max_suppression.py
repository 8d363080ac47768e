"""NonMaxSuppression-5/-9 on OpenVINO-written IR: onnxruntime against the oracle and
OpenVINO's CPU plugin, bit for bit (indices exact, scores gathered). Thresholds are chosen off the
score grid where OpenVINO is compared; where OpenVINO 2026.4 differs from the spec at the
thresholds (iou == iou_threshold, iou_threshold 0) the tests pin both the result ir2onnx follows
(the source ONNX model's, tests/test_framework_round_trips.py: ``score > score_threshold`` kept,
``iou > iou_threshold`` suppressed) and OpenVINO's measured one."""
from __future__ import annotations

import numpy as np
import openvino.opset3 as o3
import openvino.opset4 as o4
import openvino.opset5 as o5
import openvino.opset9 as o9
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _ir(tmp_path, mod=o9, shape=(2, 7, 3), mob=3, iou=0.3, st=0.25, sigma=0.0, enc="corner", srt=True,
        otype="i64", dtype=np.float32, dyn=False, mob_param=False):
    b, n, c = shape
    boxes = ov_parameter([b, None if dyn else n, 4], dtype, "boxes")
    scores = ov_parameter([b, c, None if dyn else n], dtype, "scores")
    params = [boxes, scores]
    if mob_param:
        mob_in = ov_parameter([1], np.int32, "mob")
        params.append(mob_in)
    else:
        mob_in = ops.constant(np.int64(mob))
    args = [boxes, scores, mob_in, ops.constant(np.float32(iou)), ops.constant(np.float32(st))]
    if mod is not o3:
        args.append(ops.constant(np.float32(sigma)))
    node = mod.non_max_suppression(*args, box_encoding=enc, sort_result_descending=srt, output_type=otype)
    outs = [node.output(i) for i in range(3)]
    for o, name in zip(outs, ("indices", "scores_out", "valid")):
        o.get_tensor().set_names({name})
    return ov_save(tmp_path / "nms.xml", outs, params)


def _data(shape=(2, 7, 3), seed=0, center=False, grid=0.1):
    b, n, c = shape
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, 10, (b, n, 2)).astype(np.float32)
    size = rng.uniform(1, 5, (b, n, 2)).astype(np.float32)
    boxes = np.concatenate([lo, size if center else lo + size], axis=2)
    scores = np.round(rng.uniform(0, 1, (b, c, n)) / grid) * grid  # many equal scores
    return boxes, scores.astype(np.float32)


def _run(xml, feeds, *, openvino=True, valid=True):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    for g, w, what in zip(got, want, ("indices", "scores", "valid")):
        assert_bitexact(g, w, f"oracle {what}")
    if openvino:
        for g, o, what in list(zip(got, run_openvino(xml, feeds), ("indices", "scores", "valid")))[:3 if valid else 2]:
            assert_bitexact(g, o, f"openvino {what}")
    return got


@pytest.mark.parametrize("mod", [o9, o5])
@pytest.mark.parametrize("srt", [True, False])
@pytest.mark.parametrize("enc", ["corner", "center"])
def test_matches_openvino(tmp_path, mod, srt, enc):
    xml = _ir(tmp_path, mod, enc=enc, srt=srt)
    for seed in range(3):
        boxes, scores = _data(seed=seed, center=enc == "center")
        idx, sc, valid = _run(xml, {"boxes": boxes, "scores": scores})
        assert valid.tolist() == [len(idx)] and 0 < len(idx) <= 2 * 3 * 3
        assert_bitexact(sc[:, 2], scores[idx[:, 0], idx[:, 1], idx[:, 2]])  # gathered, not recomputed
        if srt:
            assert np.all(np.diff(sc[:, 2]) <= 0)
        else:
            assert np.all(np.diff(idx[:, 0] * 3 + idx[:, 1]) >= 0)


@pytest.mark.parametrize("otype", ["i32", "i64"])
def test_output_type_and_pruning(tmp_path, otype):
    xml = _ir(tmp_path, iou=0.05, st=0.55, otype=otype)
    idx, sc, valid = _run(xml, dict(zip(("boxes", "scores"), _data(seed=5))))
    assert idx.dtype == valid.dtype == np.dtype(otype.replace("i", "int")) and sc.dtype == np.float32
    assert np.all(sc[:, 2] >= 0.55)


def test_ties_across_batches_keep_batch_class_box_order(tmp_path):
    boxes = np.tile(np.array([[i * 3, 0, i * 3 + 1, 1] for i in range(5)], np.float32), (2, 1, 1))
    scores = np.full((2, 2, 5), 0.5, np.float32)
    scores[1, 0, 3] = 0.75
    xml = _ir(tmp_path, shape=(2, 5, 2), mob=10, iou=0.5, st=0.1)
    idx = _run(xml, {"boxes": boxes, "scores": scores})[0]
    assert idx[0].tolist() == [1, 0, 3]
    rest = [tuple(r) for r in idx[1:]]
    assert rest == sorted(rest) and len(rest) == 19


@pytest.mark.parametrize("mob", [0, 1, 100])
def test_max_output_boxes(tmp_path, mob):
    xml = _ir(tmp_path, mob=mob, iou=0.45)
    # OpenVINO 2026.4 leaves valid_outputs uninitialised for a constant max_output_boxes_per_class 0
    idx, sc, valid = _run(xml, dict(zip(("boxes", "scores"), _data(seed=2))), valid=mob != 0)
    assert valid.tolist() == [len(idx)] and sc.shape == idx.shape
    if mob == 0:
        assert idx.shape == (0, 3)
    if mob == 1:
        assert len(idx) == 6


def test_dynamic_boxes_and_run_time_max_boxes(tmp_path):
    xml = _ir(tmp_path, dyn=True, mob_param=True, srt=False)
    for n, mob in ((4, 2), (9, 5), (1, 3)):
        boxes, scores = _data((2, n, 3), seed=n)
        idx = _run(xml, {"boxes": boxes, "scores": scores, "mob": np.array([mob], np.int32)})[0]
        assert np.all(idx[:, 2] < n) and len(idx) <= 2 * 3 * min(n, mob)


def test_zero_area_and_flipped_corners(tmp_path):
    boxes = np.array([[[0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 3], [3, 3, 2, 2], [2, 2, 3, 3], [5, 5, 4, 4]]],
                     np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.55, 0.5]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 6, 1), mob=10, iou=0.4, st=0.0)
    idx = _run(xml, {"boxes": boxes, "scores": scores})[0]
    assert idx[:, 2].tolist() == [0, 1, 2, 3, 5]  # box 4 is box 3 with its corners swapped


def test_f16_inputs(tmp_path):
    xml = _ir(tmp_path, dtype=np.float16, iou=0.35)
    boxes, scores = _data(seed=7)
    _, sc, _ = _run(xml, {"boxes": boxes.astype(np.float16), "scores": scores.astype(np.float16)})
    assert sc.dtype == np.float32


# -- where OpenVINO 2026.4's CPU plugin differs from the spec (measured) -----------------------

def _spec_and_openvino(xml, boxes, scores):
    feeds = {"boxes": boxes, "scores": scores}
    got = _run(xml, feeds, openvino=False)[0]
    return got[:, 2].tolist(), run_openvino(xml, feeds)[0][:, 2].tolist()


def test_score_equal_to_threshold_is_dropped(tmp_path):
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]], np.float32)
    scores = np.array([[[0.9, 0.25, 0.2]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 3, 1), mob=5, iou=0.5, st=0.25)
    # s > st, as onnxruntime on the source ONNX model (tests/test_framework_round_trips.py) and OpenVINO
    assert _spec_and_openvino(xml, boxes, scores) == ([0], [0])


def test_iou_equal_to_threshold_is_kept(tmp_path):
    boxes = np.array([[[0, 0, 2, 1], [0, 0, 1, 1]]], np.float32)  # IoU exactly 0.5
    scores = np.array([[[0.9, 0.8]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 2, 1), mob=5, iou=0.5, st=0.0)
    assert _spec_and_openvino(xml, boxes, scores) == ([0, 1], [0])  # spec: iou > t suppresses; OpenVINO >=


def test_iou_threshold_zero_keeps_disjoint_boxes(tmp_path):
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [0, 0, 0.5, 0.5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    xml = _ir(tmp_path, shape=(1, 3, 1), mob=5, iou=0.0, st=0.0)
    assert _spec_and_openvino(xml, boxes, scores) == ([0, 1], [0])


def test_default_thresholds_from_irwriter(tmp_path):
    w = IRWriter("nms")
    boxes = w.parameter([1, 4, 4], "f32", "boxes")
    scores = w.parameter([1, 2, 4], "f32", "scores")
    mob = w.const(np.array([2], np.int32))
    outs = w.layer("NonMaxSuppression", "opset9", [boxes, scores, mob], {"sort_result_descending": False},
                   [("i64", [None, 3]), ("f32", [None, 3]), ("i64", [1])], out_names=["idx", "sc", "valid"])
    for o in outs:
        w.result(o)
    xml = w.save(tmp_path / "nms.xml")
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 0.9], [5, 5, 6, 6], [5, 5, 6, 6.5]]], np.float32),
             "scores": np.array([[[0.5, 0.0, -0.5, 0.25], [-0.0, 0.5, 0.25, -1.0]]], np.float32)}
    idx = _run(xml, feeds, openvino=False)[0]
    # iou_threshold 0: overlapping boxes suppressed; score_threshold 0: only scores above 0 kept
    assert idx.tolist() == [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 2]]


@pytest.mark.parametrize("what", ["sigma", "run-time sigma", "negative iou"])
def test_refused(tmp_path, what):
    if what == "sigma":
        xml = _ir(tmp_path, sigma=0.5)
    else:
        boxes, scores = ov_parameter([1, 3, 4], np.float32, "boxes"), ov_parameter([1, 1, 3], np.float32, "scores")
        s = ov_parameter([], np.float32, "s")
        iou = ops.constant(np.float32(-0.1 if what == "negative iou" else 0.5))
        node = o9.non_max_suppression(boxes, scores, ops.constant(np.int64(3)), iou, ops.constant(np.float32(0)),
                                      *([s] if what == "run-time sigma" else []))
        xml = ov_save(tmp_path / "n.xml", [node.output(i) for i in range(3)],
                      [boxes, scores] + ([s] if what == "run-time sigma" else []))
    with pytest.raises(UnsupportedLayer, match="Soft-NMS|never does"):
        convert(xml)


@pytest.mark.parametrize("mod", [o9, o5])
def test_run_time_thresholds(tmp_path, mod):
    """max boxes, iou_threshold and score_threshold fed at run time, the boxes dim dynamic: the
    oracle bit for bit at thresholds on the score grid, negative and above-1 IoU
    thresholds included; OpenVINO too where the thresholds are off the grid."""
    boxes, scores = ov_parameter([2, None, 4], np.float32, "boxes"), ov_parameter([2, 3, None], np.float32, "scores")
    mob, iou, st = ov_parameter([], np.int64, "mob"), ov_parameter([], np.float32, "iou"), ov_parameter([], np.float32, "st")
    node = mod.non_max_suppression(boxes, scores, mob, iou, st, ops.constant(np.float32(0)), sort_result_descending=True)
    outs = [node.output(i) for i in range(3)]
    xml = ov_save(tmp_path / "n.xml", outs, [boxes, scores, mob, iou, st])
    for n, (m, t_iou, t_st, ov) in zip((7, 5, 9, 7, 6, 8), ((3, 0.33, 0.27, True), (4, 0.5, 0.3, False),
                                                          (2, -0.1, 0.2, False), (5, 1.5, 0.0, False),
                                                          (0, 0.4, 0.1, False), (6, 0.0, 0.45, False))):
        b, s = _data((2, n, 3), seed=n + m)
        feeds = {"boxes": b, "scores": s, "mob": np.array(m), "iou": np.array(t_iou, np.float32), "st": np.array(t_st, np.float32)}
        idx = _run(xml, feeds, openvino=ov)[0]
        kept = s[idx[:, 0], idx[:, 1], idx[:, 2]]
        assert np.all(kept > np.float32(t_st))
        if t_iou < 0:  # every other box of a class suppressed: one per (batch, class) at most
            assert len({(i, j) for i, j, _ in idx.tolist()}) == len(idx)
    # equal to the threshold: dropped, as onnxruntime runs the source ONNX model (README deviations)
    feeds["st"], feeds["mob"] = np.array(0.3, np.float32), np.array(9)
    assert np.any(s == np.float32(0.3))
    idx = _run(xml, feeds, openvino=False)[0]
    kept = s[idx[:, 0], idx[:, 1], idx[:, 2]]
    assert len(kept) and not np.any(kept == np.float32(0.3)) and np.all(kept > np.float32(0.3))


# -- NonZero-3 ---------------------------------------------------------------------------------


def _ir_indices_only(tmp_path, version, enc="corner", srt=True, otype="i64", mob=3, shape=(2, 7, 3)):
    """NonMaxSuppression-1/-3/-4, as OpenVINO writes them (one output: selected_indices)."""
    import importlib

    mod = importlib.import_module(f"openvino.{version}")
    b, n, c = shape
    boxes, scores = ov_parameter([b, n, 4], name="boxes"), ov_parameter([b, c, n], name="scores")
    args = [boxes, scores, ops.constant(np.int64(mob)), ops.constant(np.float32(0.3)), ops.constant(np.float32(0.25))]
    kw = {} if version == "opset1" else {"output_type": otype}
    node = mod.non_max_suppression(*args, box_encoding=enc, sort_result_descending=srt, **kw)
    return ov_save(tmp_path / "nms.xml", [node.output(0)], [boxes, scores])


@pytest.mark.parametrize("version", ["opset1", "opset3", "opset4"])
@pytest.mark.parametrize("srt", [True, False])
@pytest.mark.parametrize("enc", ["corner", "center"])
def test_older_versions_match_openvino(tmp_path, version, srt, enc):
    """The rows OpenVINO's CPU plugin gives, in -5's order, then rows of -1 up to the row count the
    IR declares where that is the spec's min(7, 5) * 2 * 3 = 30 (the plugin leaves a model output
    unpadded; OpenVINO 2026 declares the spec's count for -4 only)."""
    xml = _ir_indices_only(tmp_path, version, enc, srt, mob=5)
    assert f'type="NonMaxSuppression" version="{version}"' in xml.read_text()
    for seed in range(3):
        boxes, scores = _data(seed=seed, center=enc == "center")
        feeds = {"boxes": boxes, "scores": scores}
        want = run_openvino(xml, feeds)[0]
        got = run_onnx(xml, feeds)[0]
        layer = next(l for l in ir2onnx.load_ir(xml).order if l.type == "NonMaxSuppression")
        padded = layer.outputs[0].shape[0] == 30
        assert padded == (version == "opset4")
        assert got.dtype == np.int64 and got.shape == ((30, 3) if padded else want.shape) and 0 < len(want) < 30
        assert_bitexact(got[:len(want)], want, "openvino")
        assert (got[len(want):] == -1).all()
        assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")


def test_no_padding_without_a_static_count(tmp_path):
    """Dynamic boxes: no count to pad to; the rows are OpenVINO's."""
    boxes, scores = ov_parameter([1, None, 4], name="boxes"), ov_parameter([1, 3, None], name="scores")
    node = o3.non_max_suppression(boxes, scores, ops.constant(np.int64(5)), ops.constant(np.float32(0.3)),
                                  ops.constant(np.float32(0.25)))
    xml = ov_save(tmp_path / "nms.xml", [node.output(0)], [boxes, scores])
    b, s = _data(shape=(1, 7, 3))
    got = run_onnx(xml, {"boxes": b, "scores": s})[0]
    assert_bitexact(got, run_openvino(xml, {"boxes": b, "scores": s})[0], "openvino")


def test_older_versions_padded_rows_feed_a_static_reshape(tmp_path):
    """Open Model Zoo's face-detection-0105: Model Optimizer's Reshape to [-1, 1] and TopK of the
    declared 200 rows need the padded count; OpenVINO runs such a model (its outputs are static)."""
    boxes, scores = ov_parameter([1, 7, 4], name="boxes"), ov_parameter([1, 3, 7], name="scores")
    node = o4.non_max_suppression(boxes, scores, ops.constant(np.int64(3)), ops.constant(np.float32(0.3)),
                                  ops.constant(np.float32(0.25)), sort_result_descending=False)
    col = ops.reshape(ops.convert(ops.split(node.output(0), ops.constant(1), 3).output(2), np.float32),
                      ops.constant(np.array([-1, 1], np.int64)), True)
    xml = ov_save(tmp_path / "nms.xml", [ops.topk(ops.squeeze(col, ops.constant(1)), ops.constant(np.int64(9)), 0,
                                                  "max", "value").output(0)], [boxes, scores])
    b, s = _data(shape=(1, 7, 3))
    feeds = {"boxes": b, "scores": s}
    np.testing.assert_array_equal(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0])


def test_nms3_output_type_i32(tmp_path):
    xml = _ir_indices_only(tmp_path, "opset3", otype="i32")
    boxes, scores = _data()
    got = run_onnx(xml, {"boxes": boxes, "scores": scores})[0]
    want = run_openvino(xml, {"boxes": boxes, "scores": scores})[0]
    assert got.dtype == np.int32
    assert_bitexact(got[:len(want)], want, "openvino")
