"""Regenerate samples/ssd/: a small SSD-style detector written by OpenVINO's own opset builders,
with the head of the Open Model Zoo's face-detection-retail-0004 and person-detection-retail-0013
IRs (PriorBoxClustered + DetectionOutput).

img[?, 3, 64, 64] -> 3x3 convs (stride 2) + ReLU: 8x32x32 -> 16x16x16 -> 16x8x8 (feature map 1)
-> 32x4x4 (feature map 2). Per map, 3x3 Convolutions to loc (anchors x 4) and conf (anchors x 3
classes) -> Transpose to NHWC -> Reshape [0, -1]; the maps' loc and conf are concatenated; conf
-> Reshape [0, -1, 3] -> Softmax(2) -> Reshape [0, -1]. Per map a PriorBoxClustered (3 and 2
clustered sizes, an explicit step on one map, step_w/step_h on the other, variances 0.1 0.1 0.2
0.2, no clip) fed by ShapeOf of the map and of the image, each sliced [2:4] by StridedSlice; the
priors -> Unsqueeze(0) -> Concat(axis 2) -> [1, 2, 4 * 224]. DetectionOutput-1 with the zoo's
attributes: CENTER_SIZE, share_location, background_label_id 0, top_k 400, keep_top_k 200,
nms_threshold 0.45, confidence_threshold 0.01, normalized -> detections [1, 1, 200 * N, 7].
Weights FP16-compressed (openvino.save_model's default), dynamic batch.

    python samples/make_ssd.py

The folder holds ssd.xml, ssd.bin, img.npy (a fixed input, batch 2) and detections.npy (OpenVINO's
output for it); tests/test_ssd_sample.py converts and checks the committed files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset15 as ops

HERE = Path(__file__).resolve().parent / "ssd"
CLASSES = 3
# per feature map: (widths, heights, step attributes) of PriorBoxClustered, in pixels
PRIORS = [
    ([6.0, 12.0, 20.0], [8.0, 15.0, 26.0], dict(step=8.0)),
    ([24.0, 40.0], [32.0, 52.0], dict(step_w=16.0, step_h=16.0)),
]
DETECTION = dict(num_classes=CLASSES, background_label_id=0, top_k=400, keep_top_k=[200],
                 code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=True,
                 nms_threshold=0.45, confidence_threshold=0.01, variance_encoded_in_target=False,
                 normalized=True, clip_before_nms=False, clip_after_nms=False, decrease_label_id=False,
                 input_height=1, input_width=1, objectness_score=0.0)


def _i64(values):
    return ops.constant(np.array(values, np.int64))


def _conv(x, cin, cout, stride, rng, relu=True):
    w = ops.constant((rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(cin * 9)).astype(np.float32))
    y = ops.convolution(x, w, [stride, stride], [1, 1], [1, 1], [1, 1])
    y = ops.add(y, ops.constant((rng.standard_normal((1, cout, 1, 1)) * 0.1).astype(np.float32)))
    return ops.relu(y) if relu else y


def _hw(node):
    """[H, W] of an NCHW tensor as the zoo's IRs compute it: ShapeOf, StridedSlice [2:4]."""
    return ops.strided_slice(ops.shape_of(node), _i64([2]), _i64([4]), _i64([1]), [0], [0])


def _flat_nhwc(x):
    return ops.reshape(ops.transpose(x, _i64([0, 2, 3, 1])), _i64([0, -1]), True)


def build(**detection) -> ov.Model:
    """The sample's model; ``detection`` replaces DetectionOutput attributes (tests vary them)."""
    rng = np.random.default_rng(4)
    img = ops.parameter([-1, 3, 64, 64], np.float32, name="img")
    img.output(0).get_tensor().set_names({"img"})
    x = _conv(_conv(img, 3, 8, 2, rng), 8, 16, 2, rng)
    map1 = _conv(x, 16, 16, 2, rng)
    map2 = _conv(map1, 16, 32, 2, rng)
    locs, confs, priors = [], [], []
    for fmap, cin, (widths, heights, steps) in ((map1, 16, PRIORS[0]), (map2, 32, PRIORS[1])):
        anchors = len(widths)
        locs.append(_flat_nhwc(_conv(fmap, cin, anchors * 4, 1, rng, relu=False)))
        confs.append(_flat_nhwc(_conv(fmap, cin, anchors * CLASSES, 1, rng, relu=False)))
        attrs = dict(width=widths, height=heights, clip=False, offset=0.5, variance=[0.1, 0.1, 0.2, 0.2],
                     **steps)
        priors.append(ops.unsqueeze(o1.prior_box_clustered(_hw(fmap), _hw(img), attrs), _i64([0])))
    loc = ops.concat(locs, 1)
    conf = ops.reshape(ops.concat(confs, 1), _i64([0, -1, CLASSES]), True)
    conf = ops.reshape(ops.softmax(conf, 2), _i64([0, -1]), True)
    det = o1.detection_output(loc, conf, ops.concat(priors, 2), dict(DETECTION, **detection))
    det.output(0).get_tensor().set_names({"detections"})
    return ov.Model([ops.result(det)], [img], "ssd")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    ov.save_model(build(), str(HERE / "ssd.xml"))  # defaults: FP16-compressed weights
    x = np.random.default_rng(0).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32)
    np.save(HERE / "img.npy", x)
    compiled = ov.Core().compile_model(str(HERE / "ssd.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.save(HERE / "detections.npy", compiled([x])[compiled.outputs[0]])
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
