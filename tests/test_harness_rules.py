"""The rule table of ``ir2onnx check`` (:mod:`ir2onnx.harness.rules`): detections matched box to
box, class vectors, attributes, embeddings and images judged at task level, the rule named in
each comparison; OpenVINO found by identity on an IR v10 f16 model (issue 31). The models are
small look-alikes of the Open Model Zoo's (docs/check.md), written by OpenVINO's opset builders
or, for IR v10, by IRWriter."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.harness import detections
from ir2onnx.harness.rules import Task, judge, tasks
from ir2onnx.ir.names import output_names
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

SSD7 = Task("detections", "ssd7", "det")


def _ssd_rows(rows, n=8):
    """[1, 1, n, 7] detections: the given (label, score, box) rows, then the -1 end marker."""
    out = np.zeros((1, 1, n, 7), np.float32)
    for i, (label, score, box) in enumerate(rows):
        out[0, 0, i] = [0, label, score, *box]
    out[0, 0, len(rows), 0] = -1
    return out


FACE = (1, 0.97, (0.30, 0.15, 0.66, 0.51))
CAR = (2, 0.62, (0.05, 0.40, 0.25, 0.55))


def _judge(a, b, task=SSD7, tolerant=False, **kw):
    return judge(task.boxes or "out", task, "ort:cpu", a, "oracle", b, tolerant=tolerant, **kw)


def test_detections_in_another_order_with_a_different_tail_agree():
    tail = (1, 0.05, (0.7, 0.7, 0.8, 0.8))  # below the threshold: may differ, or be missing
    a = {"det": _ssd_rows([FACE, CAR, tail])}
    b = {"det": _ssd_rows([CAR, FACE])}
    c = _judge(a, b)
    assert c.passed and c.rule == "detections" and c.max_abs > 0.5  # element-wise, far apart
    assert c.metrics["matched"] == 2 and c.metrics["unmatched"] == 0
    assert "2 matched, 0 unmatched of 2/2 above 0.3" in c.detail


def test_a_moved_relabelled_or_missing_box_fails():
    a = {"det": _ssd_rows([FACE, CAR])}
    moved = (2, 0.62, (0.45, 0.40, 0.65, 0.55))  # IoU 0 with the car
    c = _judge(a, {"det": _ssd_rows([FACE, moved])})
    assert not c.passed and c.metrics["unmatched"] == 2  # the car lacks a partner on both sides
    c = _judge(a, {"det": _ssd_rows([FACE, (1, *CAR[1:])])})
    assert not c.passed and c.metrics["unmatched"] == 2
    c = _judge(a, {"det": _ssd_rows([FACE])})
    assert not c.passed and c.metrics["unmatched"] == 1
    shifted = (2, 0.62, (0.065, 0.415, 0.265, 0.565))  # IoU 0.75, 7.5% of the box off: strict fails
    assert not _judge(a, {"det": _ssd_rows([FACE, shifted])}).passed
    assert _judge(a, {"det": _ssd_rows([FACE, shifted])}, tolerant=True).passed  # INT8: task level


def test_inverted_and_empty_boxes_match_their_equals():
    """DetectionOutput decodes corners without swapping them (a location offset gives x_max <
    x_min) and may give a box of no area: equal rows match, a moved one does not (the selftest's
    corner-code case once failed with three equal outputs)."""
    inverted = (1, 0.9, (0.60, 0.70, 0.15, 0.40))
    point = (2, 0.8, (0.5, 0.5, 0.5, 0.5))
    line = (2, 0.7, (0.1, 0.2, 0.1, 0.6))
    a = {"det": _ssd_rows([inverted, point, line])}
    c = _judge(a, {"det": _ssd_rows([line, inverted, point])})
    assert c.passed and c.metrics["matched"] == 3 and c.metrics["unmatched"] == 0, c.detail
    upright = (1, 0.9, (0.15, 0.40, 0.60, 0.70))  # the same region, corners in order
    c = _judge(a, {"det": _ssd_rows([upright, point, line])})
    assert c.metrics["unmatched"] == 0 and c.metrics["worst_iou"] == 1.0
    assert not c.passed  # IoU 1, but the coordinates are not the other backend's
    moved = (1, 0.9, (0.61, 0.70, 0.95, 0.40))
    assert _judge(a, {"det": _ssd_rows([moved, point, line])}).metrics["unmatched"] == 2
    assert _judge(a, {"det": _ssd_rows([inverted, (2, 0.8, (0.6, 0.5, 0.6, 0.5)), line])}).metrics["unmatched"] == 2


def test_a_row_near_the_threshold_and_the_score_limit():
    a = {"det": _ssd_rows([FACE, (2, 0.31, CAR[2])])}
    b = {"det": _ssd_rows([FACE, (2, 0.29, CAR[2])])}
    assert not _judge(a, b).passed  # a float IR: 0.02 is a real score error
    c = _judge(a, b, tolerant=True)
    assert c.passed and c.metrics["score_error"] == pytest.approx(0.02, abs=1e-6)
    assert _judge(a, b, score_threshold=0.5).passed  # only the face is compared


def test_box_score_rows_with_labels_and_a_different_row_count():
    """[N, 5] boxes (pixels) + labels: person-vehicle-bike-detection-2003's [9, 5] vs [8, 5]."""
    task = Task("detections", "box5", "boxes", "labels")
    boxes = np.array([[10, 20, 110, 220, 0.9], [300, 40, 380, 90, 0.5], [5, 5, 9, 9, 0.12]], np.float32)
    a = {"boxes": boxes, "labels": np.array([0, 1, 2])}
    b = {"boxes": boxes[[1, 0]] + [1, 0, 1, 0, 0.01], "labels": np.array([1, 0])}
    c = _judge(a, b, task, tolerant=True)
    assert c.passed and c.reason == "" and c.metrics["matched"] == 2
    assert judge("labels", task, "ort:cpu", a, "oracle", b, tolerant=True).passed
    b["labels"] = np.array([0, 1])
    assert not _judge(a, b, task, tolerant=True).passed


def _heads(tmp_path):
    """An OMZ-like model with one output of each kind the rule table knows."""
    x = ov_parameter([1, 3, 48, 48], name="data")
    rng = np.random.default_rng(0)
    conv = lambda y, c: ops.convolution(y, ops.constant(rng.standard_normal((c, y.get_output_partial_shape(0)[1].get_length(), 3, 3)).astype(np.float32) * 0.1), [2, 2], [1, 1], [1, 1], [1, 1])
    f = ops.relu(conv(x, 8))
    pooled = ops.reduce_mean(f, ops.constant(np.array([2, 3])), True)  # [1, 8, 1, 1]
    cls = ops.softmax(conv(pooled, 4), 1)  # [1, 4, 1, 1]: vehicle "type"
    attrs = ops.sigmoid(conv(pooled, 6))  # person attributes
    emb = ops.reshape(conv(pooled, 256), ops.constant(np.array([1, 256])), False)  # re-identification
    image = conv(ops.relu(conv(x, 8)), 3)  # [1, 3, 12, 12] is too small: an image needs 32
    sr = ops.add(x, ops.constant(np.float32(1)))  # [1, 3, 48, 48]
    row = ops.reshape(conv(pooled, 5), ops.constant(np.array([1, 5])), False)  # a box+score row
    labels = ops.convert(ops.reduce_max(ops.reshape(row, ops.constant(np.array([-1])), False),
                                        ops.constant(np.array([0])), True), "i64")
    outs = {"type": cls, "attributes": attrs, "reid_embedding": emb, "small": image, "sr": sr,
            "boxes": row, "labels": labels}
    for name, node in outs.items():
        node.output(0).get_tensor().set_names({name})
    return ov_save(tmp_path / "heads.xml", list(outs.values()), [x])


def test_each_output_is_recognised_by_its_task(tmp_path):
    graph = ir2onnx.load_ir(_heads(tmp_path))
    result = ir2onnx.check(graph, oracle=False, openvino=False)
    sample = result.backend("ort:cpu").outputs
    found = {n: t.kind for n, t in tasks(graph, output_names(graph), sample, tolerant=True).items()}
    assert found == {"type": "class", "attributes": "attributes", "reid_embedding": "embedding",
                     "sr": "image", "boxes": "detections", "labels": "detections"}
    assert tasks(graph, output_names(graph), sample, tolerant=False) == {  # a float IR: element-wise
        n: t for n, t in tasks(graph, output_names(graph), sample, tolerant=True).items() if t.kind == "detections"}


def test_class_attribute_embedding_and_image_rules():
    rng = np.random.default_rng(1)
    probs = np.array([[[[0.1]], [[0.6]], [[0.25]], [[0.05]]]], np.float32)  # [1, 4, 1, 1]
    cls = Task("class", "softmax")
    assert _judge({"out": probs}, {"out": probs + np.float32([[[[0.02]], [[-0.02]], [[0]], [[0]]]])}, cls, True).passed
    c = _judge({"out": probs}, {"out": probs[:, [1, 0, 2, 3]]}, cls, True)
    assert not c.passed and c.rule == "class" and c.metrics["argmax_agreement"] == 0
    attrs = Task("attributes")
    a = np.array([[0.9, 0.2, 0.48]], np.float32)
    assert _judge({"out": a}, {"out": a + np.float32([[0.04, -0.04, 0.04]])}, attrs, True).passed  # 0.48 -> 0.52: a near-tie
    assert not _judge({"out": a}, {"out": a + np.float32([[-0.45, 0, 0]])}, attrs, True).passed
    emb = rng.standard_normal((2, 256)).astype(np.float32)
    c = _judge({"out": emb}, {"out": emb + 0.05 * rng.standard_normal(emb.shape).astype(np.float32)},
               Task("embedding"), True)
    assert c.passed and c.rule == "embedding" and 0.99 < c.metrics["cosine"] < 1
    assert not _judge({"out": emb}, {"out": emb[::-1]}, Task("embedding"), True).passed
    img = rng.uniform(0, 255, (1, 3, 32, 32)).astype(np.float32)
    c = _judge({"out": img}, {"out": img + rng.normal(0, 0.5, img.shape).astype(np.float32)}, Task("image"), True)
    assert c.passed and 45 < c.metrics["psnr"] < 60
    assert not _judge({"out": img}, {"out": img + np.float32(20)}, Task("image"), True).passed
    masks = rng.dirichlet(np.ones(3), (1, 20, 20)).transpose(0, 3, 1, 2).astype(np.float32)  # [1, 3, 20, 20]
    flipped = masks.copy()
    flipped[0, :, 0, :2] = flipped[0, ::-1, 0, :2]  # 2 pixels of 400 (0.5%) relabelled
    c = _judge({"out": masks}, {"out": flipped}, Task("labels", "argmax"), True)
    assert c.rule == "labels" and c.metrics["agreement"] >= 0.99 and c.passed
    flipped[0, :, 1, :] = flipped[0, ::-1, 1, :]  # a whole row more: 5%
    assert not _judge({"out": masks}, {"out": flipped}, Task("labels", "argmax"), True).passed


def _tiny_detector(tmp_path, int8: bool):
    """An SSD head as face-detection-retail-0004 has it: conv loc/conf, Softmax, fixed priors,
    DetectionOutput-1 [1, 1, 50, 7]; ``int8``: FakeQuantize (256 levels) before each conv."""
    rng = np.random.default_rng(3)
    x = ov_parameter([1, 3, 16, 16], name="data")
    fq = lambda y: ops.fake_quantize(y, *(ops.constant(np.float32(v)) for v in (-3, 3, -3, 3)), 256) if int8 else y
    feat = ops.relu(ops.convolution(fq(x), ops.constant(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3),
                                    [4, 4], [1, 1], [1, 1], [1, 1]))  # [1, 8, 4, 4]
    head = lambda c: ops.reshape(ops.transpose(ops.convolution(
        fq(feat), ops.constant(rng.standard_normal((c, 8, 1, 1)).astype(np.float32) * 0.5), [1, 1], [0, 0], [0, 0],
        [1, 1]), ops.constant(np.array([0, 2, 3, 1]))), ops.constant(np.array([1, -1])), False)
    loc, conf = head(4), head(2)  # one prior per cell, 2 classes
    conf = ops.add(ops.reshape(conf, ops.constant(np.array([1, -1, 2])), False), ops.constant(np.float32([0, 1.5])))
    conf = ops.reshape(ops.softmax(conf, 2),
                       ops.constant(np.array([1, -1])), False)
    cx, cy = np.meshgrid((np.arange(4) + 0.5) / 4, (np.arange(4) + 0.5) / 4)
    boxes = np.stack([cx - 0.2, cy - 0.2, cx + 0.2, cy + 0.2], -1).reshape(1, 1, -1)
    priors = np.concatenate([boxes, np.full_like(boxes, 0.1)], 1).astype(np.float32)
    det = o1.detection_output(loc, conf, ops.constant(priors), dict(
        num_classes=2, background_label_id=0, top_k=20, keep_top_k=[50], nms_threshold=0.45,
        confidence_threshold=0.01, code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=True,
        variance_encoded_in_target=False, normalized=True))
    det.output(0).get_tensor().set_names({"detection_out"})
    return ov_save(tmp_path / f"det{int(int8)}.xml", det, [x])


@pytest.mark.parametrize("int8", [False, True])
def test_a_detector_is_judged_by_the_detections_rule(tmp_path, int8):
    xml = _tiny_detector(tmp_path, int8)
    img = np.random.default_rng(5).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    result = ir2onnx.check(xml, inputs={"data": img}, score_threshold=0.3)
    assert result.ok, result.failures()
    assert [b.name for b in result.backends if b.status == "ok"] == ["ort:cpu", "oracle", "openvino"]
    (out,) = result.outputs
    assert {c.rule for c in out.comparisons} == {"detections"}
    assert all(c.metrics["unmatched"] == 0 for c in out.comparisons)
    assert sum(c.metrics["above"][0] for c in out.comparisons) > 0  # it found something to compare


def _v10_f16_softmax(tmp_path):
    """An IR v10 f16 model as Model Optimizer wrote the zoo's FP16 IRs: the Result's producer,
    SoftMax 'prob', is the layer OpenVINO renames when it inserts its output Convert; a MaxPool-1
    writes MaxPool-8's attributes at their defaults."""
    w = IRWriter("v10", version=10)
    x = w.parameter([1, 4, 4, 4], "f16", "data")
    scale = w.const(np.full((1, 4, 1, 1), 1.5, np.float16))
    y = w.layer("Multiply", "opset1", [x, scale], {"auto_broadcast": "numpy"}, [("f16", (1, 4, 4, 4))])[0]
    y = w.layer("MaxPool", "opset1", [y], {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "kernel": "2,2",
                                             "rounding_type": "floor", "auto_pad": "explicit", "axis": "0",
                                             "dilations": "1,1", "index_element_type": "i64"},
                [("f16", (1, 4, 3, 3))])[0]
    y = w.layer("SoftMax", "opset1", [y], {"axis": 1}, [("f16", (1, 4, 3, 3))], name="prob")[0]
    w.result(y, "prob/sink_port_0")
    return w.save(tmp_path / "v10.xml")


def test_openvino_compares_an_ir_v10_f16_model_and_its_in_memory_model(tmp_path):
    xml = _v10_f16_softmax(tmp_path)
    x = np.random.default_rng(2).uniform(0.1, 0.9, (1, 4, 4, 4)).astype(np.float32)  # not f16 values
    from_file = ir2onnx.check(xml, inputs={"data": x})
    assert from_file.backend("openvino").status == "ok", from_file.backend("openvino").message
    assert from_file.ok, from_file.failures()
    in_memory = ir2onnx.check(ov.Core().read_model(xml), inputs={"data": x}, oracle=False)
    assert in_memory.ok, in_memory.failures()
    (c,) = in_memory.outputs[0].comparisons
    assert c.max_abs < 1e-6  # the input is not rounded to f16 on the way in: OpenVINO does not


def test_yolo_regions_are_decoded_in_an_f16_check():
    """samples/yolo at --precision f16: the RegionYolo maps are judged as decoded detections."""
    from pathlib import Path

    yolo = Path(__file__).resolve().parents[1] / "samples" / "yolo"
    img = np.load(yolo / "img.npy")
    result = ir2onnx.check(yolo / "yolo.xml", inputs={"img": img}, precision="f16", openvino=False)
    assert result.ok, result.failures()
    (c,) = result.outputs[0].comparisons
    assert c.rule == "detections" and c.metrics["matched"] >= 1 and c.metrics["unmatched"] == 0
    float_check = ir2onnx.check(yolo / "yolo.xml", inputs={"img": img}, openvino=False)
    assert [c.rule for c in float_check.outputs[0].comparisons] == [""]  # f32: the maps element-wise


def test_an_attribute_openvino_drops_matters_only_off_its_default():
    from ir2onnx.harness.openvino_attributes import _at_default

    assert _at_default("MaxPool", "opset1", "index_element_type", "i64")  # MaxPool-8's default
    assert _at_default("MaxPool", "opset1", "dilations", "1,1") and not _at_default("MaxPool", "opset1", "dilations", "2,2")
    assert _at_default("Convolution", "opset1", "output_padding", "0,0")  # ConvolutionBackpropData's: []
    assert not _at_default("Convolution", "opset1", "output_padding", "1,0")
    assert not _at_default("DepthToSpace", "opset1", "data_format", "NHWC")
    assert not _at_default("Foo", "opset1", "unheard_of", "0")
