"""Regenerate samples/yolo/: a small YOLO v2-style detector written by OpenVINO's own opset
builders (the Open Model Zoo's yolo-v2 IRs have this head).

img[?, 3, 32, 32] -> 3x3 conv (stride 2) + LeakyReLU(0.1) -> 3x3 conv (stride 2) + LeakyReLU
(the passthrough, 16x8x8) -> 3x3 conv (stride 2) + LeakyReLU (32x4x4); the passthrough goes
through a 1x1 conv and ReorgYolo(stride 2) (4x8x8 -> 16x4x4) and is concatenated with the deep
features; a 1x1 conv to 5 anchors x (4 coords + 1 objectness + 3 classes) = 40 channels;
RegionYolo (do_softmax, the 5 anchors) -> regions[?, 640]. Weights FP16-compressed.

    python samples/make_yolo.py

The folder holds yolo.xml, yolo.bin, img.npy (a fixed input) and regions.npy (OpenVINO's output
for it); tests/test_region_yolo.py and tests/test_harness.py convert and check the committed files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset2 as o2
import openvino.opset15 as ops

HERE = Path(__file__).resolve().parent / "yolo"
ANCHORS = [1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52]


def _conv(x, cin, cout, k, stride, rng, leaky=True):
    w = ops.constant((rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32))
    pad = k // 2
    y = ops.convolution(x, w, [stride, stride], [pad, pad], [pad, pad], [1, 1])
    y = ops.add(y, ops.constant(rng.standard_normal((1, cout, 1, 1)).astype(np.float32) * 0.1))
    return ops.prelu(y, ops.constant(np.array([0.1], np.float32))) if leaky else y


def build() -> ov.Model:
    rng = np.random.default_rng(15)
    img = ops.parameter([-1, 3, 32, 32], np.float32, name="img")
    img.output(0).get_tensor().set_names({"img"})
    x = _conv(img, 3, 8, 3, 2, rng)
    passthrough = _conv(x, 8, 16, 3, 2, rng)
    deep = _conv(passthrough, 16, 32, 3, 2, rng)
    reorg = o2.reorg_yolo(_conv(passthrough, 16, 4, 1, 1, rng), [2])
    head = _conv(ops.concat([reorg, deep], 1), 16 + 32, 5 * (4 + 1 + 3), 1, 1, rng, leaky=False)
    regions = o1.region_yolo(head, 4, 3, 5, True, [0, 1, 2, 3, 4], 1, 3, ANCHORS)
    regions.output(0).get_tensor().set_names({"regions"})
    return ov.Model([ops.result(regions)], [img], "yolo")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    model = build()
    ov.save_model(model, str(HERE / "yolo.xml"), compress_to_fp16=True)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.save(HERE / "img.npy", x)
    compiled = ov.Core().compile_model(str(HERE / "yolo.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.save(HERE / "regions.npy", compiled([x])[compiled.outputs[0]])
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
