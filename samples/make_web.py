"""Regenerate the model and the image of samples/web/ (run by hand; needs openvino, Pillow and
scikit-image).

    python samples/make_web.py

detector.xml/.bin: a face detector in the Open Model Zoo's SSD form (the head of
face-detection-retail-0004: PriorBoxClustered per feature map + DetectionOutput-1), whose weights
are set by hand instead of learned, so that the repository holds no downloaded model and the
boxes still land on a real face:

img[1, 3, 256, 256] (BGR, 0..255, as the zoo's models take it)
-> 1x1 Convolution to five margins of the YCrCb skin-tone box (Cr in 138..170, Cb in 80..125,
   R > 90) -> ReduceMin over them -> x0.5 -> Sigmoid: a skin map (1 on skin, 0 elsewhere)
-> AvgPool 4x4: the map in 4-pixel cells [1, 1, 64, 64]
-> per prior size (w, h) on two feature maps (stride 8 and 16), the mean of
   the map inside the prior's box (I) and inside the box twice its size (O), both by AvgPool
   (exclude-pad false: outside the image is not skin) centred where PriorBoxClustered centres the
   prior; the face logit is 20 (I - 2 R - 0.4), R = (4 O - I) / 3 the mean over the ring between
   the two boxes: a box full of skin with little skin around it;
-> conf [1, anchors x (background 0, face logit)] -> Softmax over the two classes; loc all zero
   (the boxes are the priors themselves); DetectionOutput with the zoo's attributes
   (CENTER_SIZE, NMS 0.45, top_k 400, keep_top_k 200, confidence 0.01) -> [1, 1, 200, 7].

astronaut.png: scikit-image's ``data.astronaut()`` (Eileen Collins, NASA; "No known copyright
restrictions, released into the public domain", https://flic.kr/p/r9qvLn), resized to 256x256
(Pillow, bilinear), written without a colour profile so that a browser's canvas reads the same
pixels as Pillow.

detector.inputs.npz: the same pixels as the model's input (img: [1, 3, 256, 256] BGR float32), which
``ir2onnx check samples/web/detector.xml`` and tests/test_web_sample.py (it has no image decoder) use.

On it the detector finds one box, on the face (score 0.91); the next best box (the model rocket's
tip) scores 0.16. tests/test_web_sample.py converts the IR, runs the page in headless chromium
with onnxruntime-web and compares its boxes with onnxruntime's CPU result on the same pixels.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset15 as ops

HERE = Path(__file__).resolve().parent / "web"
SIZE = 256
CELL = 4  # pixels per cell of the pooled skin map
# per feature map: its step in pixels and the (width, height) of its clustered priors, in pixels
MAPS = [(8, [(32, 40), (48, 56), (64, 80)]), (16, [(80, 96), (104, 128)])]
DETECTION = dict(num_classes=2, background_label_id=0, top_k=400, keep_top_k=[200],
                 code_type="caffe.PriorBoxParameter.CENTER_SIZE", share_location=True,
                 nms_threshold=0.45, confidence_threshold=0.01, variance_encoded_in_target=False,
                 normalized=True, clip_before_nms=False, clip_after_nms=False, decrease_label_id=False,
                 input_height=1, input_width=1, objectness_score=0.0)


def _i64(values):
    return ops.constant(np.array(values, np.int64))


def _f32(values):
    return ops.constant(np.array(values, np.float32))


def _skin(img):
    """Sigmoid(0.5 min(margins)) of the YCrCb skin box; channels of img are B, G, R."""
    # Cr = 0.5 R - 0.4187 G - 0.0813 B + 128, Cb = -0.1687 R - 0.3313 G + 0.5 B + 128
    cr, cb = np.array([-0.0813, -0.4187, 0.5]), np.array([0.5, -0.3313, -0.1687])
    weights = np.stack([cr, -cr, cb, -cb, [0.0, 0.0, 1.0]]).reshape(5, 3, 1, 1)
    bias = np.array([128 - 138, 170 - 128, 128 - 80, 125 - 128, -90.0]).reshape(1, 5, 1, 1)
    margins = ops.add(ops.convolution(img, _f32(weights), [1, 1], [0, 0], [0, 0], [1, 1]), _f32(bias))
    low = ops.reduce_min(margins, _i64([1]), True)
    return ops.sigmoid(ops.multiply(low, _f32(0.5)))


def _window_mean(cells, kernel_h, kernel_w, stride, grid):
    """Mean of ``cells`` over a kernel_h x kernel_w window (in cells) centred on each prior."""
    begin = [kernel_h // 2 - stride // 2, kernel_w // 2 - stride // 2]
    side = cells.get_output_partial_shape(0)[2].get_length()
    end = [(grid - 1) * stride + kernel_h - side - begin[0], (grid - 1) * stride + kernel_w - side - begin[1]]
    return o1.avg_pool(cells, [stride, stride], begin, end, [kernel_h, kernel_w], exclude_pad=False)


def _face(inner, outer):
    """The face logit 20 (I - 2 R - 0.4), R = (4 O - I) / 3 the mean over the ring between the boxes."""
    scaled = ops.subtract(ops.multiply(inner, _f32(100.0 / 3.0)), ops.multiply(outer, _f32(160.0 / 3.0)))
    return ops.add(scaled, _f32(-8.0))


def build() -> ov.Model:
    img = ops.parameter([1, 3, SIZE, SIZE], np.float32, name="img")
    img.output(0).get_tensor().set_names({"img"})
    cells = o1.avg_pool(_skin(img), [CELL, CELL], [0, 0], [0, 0], [CELL, CELL], exclude_pad=True)
    image_hw = ops.strided_slice(ops.shape_of(img), _i64([2]), _i64([4]), _i64([1]), [0], [0])
    locs, confs, priors = [], [], []
    for step, sizes in MAPS:
        grid, stride = SIZE // step, step // CELL
        logits = []
        for width, height in sizes:
            kh, kw = height // CELL, width // CELL
            inner = _window_mean(cells, kh, kw, stride, grid)
            outer = _window_mean(cells, 2 * kh, 2 * kw, stride, grid)
            face = _face(inner, outer)
            logits += [_f32(np.zeros((1, 1, grid, grid))), face]
        conf = ops.concat(logits, 1)  # [1, anchors x 2, grid, grid], class fastest
        confs.append(ops.reshape(ops.transpose(conf, _i64([0, 2, 3, 1])), _i64([0, -1]), True))
        locs.append(_f32(np.zeros((1, grid * grid * len(sizes) * 4))))
        attrs = dict(width=[float(w) for w, _ in sizes], height=[float(h) for _, h in sizes], clip=False,
                     step=float(step), offset=0.5, variance=[0.1, 0.1, 0.2, 0.2])
        map_hw = ops.strided_slice(ops.shape_of(conf), _i64([2]), _i64([4]), _i64([1]), [0], [0])
        priors.append(ops.unsqueeze(o1.prior_box_clustered(map_hw, image_hw, attrs), _i64([0])))
    conf = ops.reshape(ops.concat(confs, 1), _i64([0, -1, 2]), True)
    conf = ops.reshape(ops.softmax(conf, 2), _i64([0, -1]), True)
    det = o1.detection_output(ops.concat(locs, 1), conf, ops.concat(priors, 2), DETECTION)
    det.output(0).get_tensor().set_names({"detection_out"})
    return ov.Model([ops.result(det)], [img], "skin_face_detector")


def image() -> np.ndarray:
    """The bundled photograph, [256, 256, 3] RGB uint8."""
    from PIL import Image
    from skimage import data

    return np.asarray(Image.fromarray(data.astronaut()).resize((SIZE, SIZE), Image.BILINEAR))


def main() -> None:
    from PIL import Image

    HERE.mkdir(exist_ok=True)
    ov.save_model(build(), str(HERE / "detector.xml"), compress_to_fp16=False)
    rgb = image()
    Image.fromarray(rgb).save(HERE / "astronaut.png", optimize=True)
    x = np.ascontiguousarray(rgb[:, :, ::-1].transpose(2, 0, 1)[None], dtype=np.float32)
    np.savez_compressed(HERE / "detector.inputs.npz", img=x)
    compiled = ov.Core().compile_model(str(HERE / "detector.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    rows = compiled([x])[compiled.outputs[0]].reshape(-1, 7)
    for row in rows[rows[:, 2] > 0.3]:
        print("box", np.round(row, 3))
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
