"""Regenerate samples/rcnn/: small two-stage detectors written by OpenVINO's own opset builders,
shaped like the Open Model Zoo's Caffe- and TensorFlow-derived Faster R-CNN and R-FCN IRs.

Every model: img[N, 3, 64, 64] and im_info[1, 3] (height, width, scale) at run time; a backbone of
three 3x3 Convolutions (stride 2) + ReLU -> feat[N, 16, 8, 8] (stride 8); the RPN: 3x3 Conv + ReLU,
a 1x1 Conv to 2K scores -> Reshape [0, 2, -1, 0] -> Softmax(1) -> Reshape [0, 2K, -1, 0] (Caffe's
rpn_cls_prob_reshape), a 1x1 Conv to 4K deltas; Proposal-4 (K = 9 anchors: ratios 0.5 1 2,
scales 2 4 8, base_size 8, feat_stride 8, min_size 2, pre_nms_topn 120, post_nms_topn R = 16,
nms_thresh 0.7, clip_before_nms) with im_info Reshape'd to [3]. DetectionOutput-1 always has
CENTER_SIZE, background_label_id 0, top_k 50, keep_top_k 30, nms_threshold 0.3 and
confidence_threshold 0.2. Then, per model:

- faster_rcnn (Caffe): Proposal framework "" -> rois [N * R, 5] -> ROIPooling-2 max 3x3 at
  1/8 -> Reshape [-1, 144] -> MatMul (transpose_b) + Add + ReLU (fc 48) -> cls_score MatMul ->
  Softmax(1) over C = 4 classes; bbox_pred MatMul [R, 4C]. DetectionOutput-1 as the zoo's Caffe
  Faster R-CNN: box_logits Reshape [-1, R * 4C], class_preds Reshape [-1, R * C], proposals =
  rois Reshape [-1, 1, R * 5] (image id + corners, not normalized: input_width/height 64,
  variance_encoded_in_target, share_location false), -> detections [1, 1, N * 30, 7]. Dynamic
  batch.
- faster_rcnn_tf (TensorFlow Object Detection API as MO converts it): Proposal framework
  "tensorflow", normalize -> ROIPooling-2 bilinear 3x3 on the normalized rois ->
  the same fc head; proposals = rois Reshape [1, R, 5] -> StridedSlice [:, :, 1:5] -> Reshape
  [1, 1, R * 4] -> Concat with a variance row (0.1 0.1 0.2 0.2) -> [1, 2, R * 4]; normalized
  DetectionOutput, share_location false, clip_after_nms. Batch 1.
- rfcn (Caffe R-FCN): Proposal "" -> position-sensitive maps: 1x1 Conv to C * 3 * 3 scores and
  8 * 3 * 3 class-agnostic boxes -> PSROIPooling-1 average (group 3, 1/8) -> AvgPool 3x3
  (the vote) -> Reshape [R, C] -> Softmax / Reshape [R, 8] -> StridedSlice [4:8] (the
  foreground box); DetectionOutput not normalized, share_location true. Batch 1 (OpenVINO's
  PSROIPooling needs static shapes).
- rfcn_tf: Proposal "tensorflow" normalized -> PSROIPooling-1 bilinear (group 3, 3x3 spatial bins)
  on C * 9 and 4 * 9 channel maps -> ReduceMean(2, 3) -> Softmax; normalized DetectionOutput with
  variances, share_location true. Batch 1.

Weights are random (seeded, distinct values) and FP16-compressed (openvino.save_model's
default); the class logits' weights are scaled up (CLS_SCALE) and the background gets a bias
(BACKGROUND) so that each image has several detections of distinct scores. Each IR is < 2 MB.
``build(name, count=150)`` gives Proposal more rows than survive its NMS (the -1 end row and
zeros then reach ROI pooling and DetectionOutput; the tests use it).

    python samples/make_rcnn.py

The folder holds NAME.xml/.bin, img.npy and im_info.npy (a fixed input) and NAME_detections.npy
(OpenVINO's output for it); tests/test_rcnn_samples.py converts and checks the committed files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset2 as o2
import openvino.opset4 as o4
import openvino.opset15 as ops

HERE = Path(__file__).resolve().parent / "rcnn"
NAMES = ("faster_rcnn", "faster_rcnn_tf", "rfcn", "rfcn_tf")
SIZE, STRIDE, CLASSES, ROIS, GROUP, FC = 64, 8, 4, 16, 3, 48
RATIOS, SCALES = [0.5, 1.0, 2.0], [2.0, 4.0, 8.0]
K = len(RATIOS) * len(SCALES)
BACKGROUND = 1.0  # the background bias: most rois are background
CLS_SCALE = 12.0  # the class logits weights scale: distinct, well-spread scores
U = np.uint32
PROPOSAL = dict(base_size=U(8), pre_nms_topn=U(120), post_nms_topn=U(ROIS), nms_thresh=0.7,
                feat_stride=U(STRIDE), min_size=U(2), ratio=RATIOS, scale=SCALES, clip_before_nms=True,
                clip_after_nms=False, normalize=False, box_size_scale=1.0, box_coordinate_scale=1.0,
                framework="")
DETECTION = dict(num_classes=CLASSES, background_label_id=0, top_k=50, keep_top_k=[30],
                 code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=False,
                 nms_threshold=0.3, confidence_threshold=0.2, variance_encoded_in_target=True,
                 normalized=False, clip_before_nms=False, clip_after_nms=False, decrease_label_id=False,
                 input_height=SIZE, input_width=SIZE, objectness_score=0.0)


def _i64(values):
    return ops.constant(np.array(values, np.int64))


def _f32(array):
    return ops.constant(np.asarray(array, np.float32))


def _conv(x, cin, cout, k, stride, rng, relu=True, scale=1.0):
    w = rng.standard_normal((cout, cin, k, k)) * scale / np.sqrt(cin * k * k)
    y = ops.convolution(x, _f32(w), [stride, stride], [k // 2] * 2, [k // 2] * 2, [1, 1])
    y = ops.add(y, _f32(rng.standard_normal((1, cout, 1, 1)) * 0.1))
    return ops.relu(y) if relu else y


def _fc(x, cin, cout, rng, scale=1.0, bias=None):
    w = _f32(rng.standard_normal((cout, cin)) * scale / np.sqrt(cin))
    b = rng.standard_normal(cout) * 0.1 if bias is None else bias
    return ops.add(ops.matmul(x, w, False, True), _f32(b))


def _slice(x, begin, end, axes_mask):
    """StridedSlice with begin/end masks 1 except on the axes flagged in ``axes_mask``."""
    mask = [0 if a else 1 for a in axes_mask]
    return ops.strided_slice(x, _i64(begin), _i64(end), _i64([1] * len(begin)), mask, mask)


def _rpn(img, im_info, rng, tf: bool, count: int):
    """The backbone and the RPN: (feat [N, 16, 8, 8], rois [N * R, 5])."""
    x = _conv(_conv(_conv(img, 3, 8, 3, 2, rng), 8, 16, 3, 2, rng), 16, 16, 3, 2, rng)
    rpn = _conv(x, 16, 16, 3, 1, rng)
    score = _conv(rpn, 16, 2 * K, 1, 1, rng, relu=False, scale=3.0)
    prob = ops.reshape(ops.softmax(ops.reshape(score, _i64([0, 2, -1, 0]), True), 1), _i64([0, 2 * K, -1, 0]), True)
    deltas = _conv(rpn, 16, 4 * K, 1, 1, rng, relu=False, scale=0.3)
    attrs = dict(PROPOSAL, post_nms_topn=U(count))
    if tf:
        attrs.update(framework="tensorflow", normalize=True)
    rois = o4.proposal(prob, deltas, ops.reshape(im_info, _i64([3]), False), attrs).output(0)
    return x, rois


def _classes_head(pooled, cin, rng):
    """fc + ReLU -> (Softmax over the classes [R, C], bbox_pred [R, 4C])."""
    hidden = ops.relu(_fc(ops.reshape(pooled, _i64([-1, cin]), False), cin, FC, rng))
    bias = np.r_[BACKGROUND, np.zeros(CLASSES - 1)] + rng.uniform(0, 0.05, CLASSES)
    cls = ops.softmax(_fc(hidden, FC, CLASSES, rng, scale=CLS_SCALE, bias=bias), 1)
    return cls, _fc(hidden, FC, 4 * CLASSES, rng, scale=0.5)


def _proposals(rois, tf: bool, count: int):
    """DetectionOutput's third input from the rois, as the zoo's IRs make it."""
    if not tf:
        return ops.reshape(rois, _i64([-1, 1, count * 5]), True)
    corners = _slice(ops.reshape(rois, _i64([1, count, 5]), False), [0, 0, 1], [0, 0, 5], [0, 0, 1])
    variances = _f32(np.tile([0.1, 0.1, 0.2, 0.2], count).reshape(1, 1, -1))
    return ops.concat([ops.reshape(corners, _i64([1, 1, count * 4]), False), variances], 1)


def _detect(loc, conf, rois, tf: bool, count: int, **attrs):
    attrs = dict(DETECTION, **attrs)
    if tf:
        attrs.update(normalized=True, input_height=1, input_width=1, variance_encoded_in_target=False,
                     clip_after_nms=True)
    per = 4 * (1 if attrs["share_location"] else CLASSES)
    det = o1.detection_output(ops.reshape(loc, _i64([-1, count * per]), False),
                              ops.reshape(conf, _i64([-1, count * CLASSES]), False), _proposals(rois, tf, count), attrs)
    det.output(0).get_tensor().set_names({"detections"})
    return det


def _inputs(batch):
    img = ops.parameter([batch, 3, SIZE, SIZE], np.float32, name="img")
    img.output(0).get_tensor().set_names({"img"})
    im_info = ops.parameter([1, 3], np.float32, name="im_info")
    im_info.output(0).get_tensor().set_names({"im_info"})
    return img, im_info


def faster_rcnn(tf: bool = False, seed: int = 1, count: int = ROIS, **detection) -> ov.Model:
    rng = np.random.default_rng(seed)
    img, im_info = _inputs(1 if tf else -1)
    feat, rois = _rpn(img, im_info, rng, tf, count)
    if tf:
        pooled = o2.roi_pooling(feat, rois, [3, 3], 1.0, "bilinear")
    else:
        pooled = o2.roi_pooling(feat, rois, [3, 3], 1.0 / STRIDE, "max")
    cls, box = _classes_head(pooled, 16 * 9, rng)
    det = _detect(box, cls, rois, tf, count, **detection)
    return ov.Model([ops.result(det)], [img, im_info], "faster_rcnn_tf" if tf else "faster_rcnn")


def rfcn(tf: bool = False, seed: int = 2, count: int = ROIS, **detection) -> ov.Model:
    rng = np.random.default_rng(seed)
    img, im_info = _inputs(1)
    feat, rois = _rpn(img, im_info, rng, tf, count)
    cells = GROUP * GROUP
    cls_maps = _conv(feat, 16, CLASSES * cells, 1, 1, rng, relu=False, scale=CLS_SCALE)
    cls_maps = ops.add(cls_maps, _f32(np.repeat(np.r_[BACKGROUND, np.zeros(CLASSES - 1)], cells).reshape(1, -1, 1, 1)))
    box_dim = 4 if tf else 8
    box_maps = _conv(feat, 16, box_dim * cells, 1, 1, rng, relu=False, scale=0.5)
    if tf:
        def pool(maps, dim):
            pooled = o1.psroi_pooling(maps, rois, dim, GROUP, 1.0, GROUP, GROUP, "bilinear")
            return ops.reduce_mean(pooled, _i64([2, 3]), False)
        cls, box = ops.softmax(pool(cls_maps, CLASSES), 1), pool(box_maps, 4)
    else:
        def pool(maps, dim):
            pooled = o1.psroi_pooling(maps, rois, dim, GROUP, 1.0 / STRIDE, 1, 1, "average")
            vote = ops.avg_pool(pooled, [1, 1], [0, 0], [0, 0], [GROUP, GROUP], True)
            return ops.reshape(vote, _i64([-1, dim]), False)
        cls = ops.softmax(pool(cls_maps, CLASSES), 1)
        box = _slice(pool(box_maps, 8), [0, 4], [0, 8], [0, 1])  # the foreground's class-agnostic box
    det = _detect(box, cls, rois, tf, count, share_location=True, **detection)
    return ov.Model([ops.result(det)], [img, im_info], "rfcn_tf" if tf else "rfcn")


def build(name: str, count: int = ROIS, **detection) -> ov.Model:
    """A sample's model; ``count`` is Proposal's post_nms_topn (R), ``detection`` replaces
    DetectionOutput attributes (tests vary them)."""
    make = faster_rcnn if name.startswith("faster_rcnn") else rfcn
    return make(name.endswith("_tf"), count=count, **detection)


def image(seed: int, batch: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 1, (batch, 3, SIZE, SIZE)).astype(np.float32)


IM_INFO = np.array([[SIZE, SIZE, 1.0]], np.float32)


def main() -> None:
    HERE.mkdir(exist_ok=True)
    img = image(0)
    np.save(HERE / "img.npy", img)
    np.save(HERE / "im_info.npy", IM_INFO)
    core = ov.Core()
    for name in NAMES:
        xml = HERE / f"{name}.xml"
        ov.save_model(build(name), str(xml))  # defaults: FP16-compressed weights
        compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        np.save(HERE / f"{name}_detections.npy", compiled([img, IM_INFO])[compiled.outputs[0]])
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
