"""Convert torchvision models through OpenVINO and ir2onnx and compare onnxruntime with OpenVINO
(run by hand; needs torch and torchvision, which are not test dependencies).

    python samples/check_torchvision.py [squeezenet1_1 googlenet shufflenet_v2_x1_0 swin_t]
    python samples/check_torchvision.py ssdlite320_mobilenet_v3_large   # a detector (issue 14)

Each model (random weights) goes through ``openvino.convert_model`` and ``openvino.save_model``
with their defaults (dynamic batch and spatial dims, f16-compressed weights), then
``ir2onnx.convert_file``; onnxruntime on the result is compared with OpenVINO on the IR at two
input sizes. Their IRs are 5 to 56 MB, too large to commit, hence a script rather than a test.

torchvision's PyPI wheel is a CUDA build whose C++ ops do not load beside a CPU build of torch;
the classifiers need none of them, so their schemas are declared here only so that torchvision
imports (``pip install --no-deps torchvision==<the release matching torch>`` and Pillow). The
detectors need ``nms``: a plain greedy one is registered for tracing (OpenVINO's frontend turns
the traced op into NonMaxSuppression); they are wrapped to return (boxes, scores, labels) of one
3x320x320 image. Measured 2026-11-24: ssdlite320_mobilenet_v3_large converts (If-8, Loop, NMS),
but with random weights its scores are nearly all equal, so onnxruntime and OpenVINO keep
different tied detections: a meaningful comparison needs weights with distinct scores.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov
import torch

import ir2onnx
from ir2onnx.testing import run_onnx, run_openvino

MODELS = ["squeezenet1_1", "googlenet", "shufflenet_v2_x1_0", "swin_t"]
SHAPES = [(1, 3, 224, 224), (2, 3, 160, 192)]


def _greedy_nms(dets, scores, iou_threshold):
    order = torch.argsort(scores, descending=True, stable=True)
    x1, y1, x2, y2 = dets.unbind(1)
    area = (x2 - x1) * (y2 - y1)
    keep, dropped = [], torch.zeros(len(order), dtype=torch.bool)
    for k in range(len(order)):
        if dropped[k]:
            continue
        i, rest = order[k], order[k + 1:]
        keep.append(int(i))
        w = (torch.minimum(x2[i], x2[rest]) - torch.maximum(x1[i], x1[rest])).clamp(min=0)
        h = (torch.minimum(y2[i], y2[rest]) - torch.maximum(y1[i], y1[rest])).clamp(min=0)
        dropped[k + 1:] |= w * h / (area[i] + area[rest] - w * h) > iou_threshold
    return torch.tensor(keep, dtype=torch.long)


def _has_ops():
    return True


def _import_torchvision():
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.impl("nms", _greedy_nms, "CPU")
    import torchvision
    import torchvision.extension

    torchvision.extension._has_ops = _has_ops  # scripted helpers check it before calling nms
    return torchvision, lib


class _Detections(torch.nn.Module):
    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, image):
        found = self.detector([image])[0]
        return found["boxes"], found["scores"], found["labels"]


def _detector(torchvision, name: str) -> int:
    torch.manual_seed(0)
    model = _Detections(getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None).eval())
    image = torch.rand(3, 320, 320)
    folder = Path(tempfile.mkdtemp(prefix=f"ir2onnx-{name}-"))
    xml = folder / "model.xml"
    ov.save_model(ov.convert_model(model.eval(), example_input=(image,)), str(xml))
    ir2onnx.convert_file(xml, folder / "model.onnx")
    got, want = run_onnx(xml, [image.numpy()]), run_openvino(xml, [image.numpy()])
    worst = 0.0
    for what, g, w in zip(("boxes", "scores", "labels"), got, want):
        same = g.shape == w.shape
        rel = float(np.abs(g.astype(np.float64) - w).max() / max(np.abs(w).max(), 1e-6)) if same and w.size else 0.0
        worst = max(worst, rel if same else np.inf)
        print(f"{name} {what}: onnxruntime {g.shape}, OpenVINO {w.shape}, relative {rel:.2e}; "
              f"{len(np.unique(w))} distinct values")
    return 0 if worst < 1e-3 else 1


def main(names: list[str]) -> int:
    torchvision, _lib = _import_torchvision()
    worst, failed = 0.0, 0
    for name in [n for n in names if hasattr(torchvision.models.detection, n)]:
        failed |= _detector(torchvision, name)
    for name in [n for n in names if not hasattr(torchvision.models.detection, n)]:
        torch.manual_seed(0)
        extra = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        model = getattr(torchvision.models, name)(weights=None, **extra).eval()
        folder = Path(tempfile.mkdtemp(prefix=f"ir2onnx-{name}-"))
        xml = folder / "model.xml"
        ov.save_model(ov.convert_model(model, example_input=torch.randn(1, 3, 224, 224)), str(xml))
        ir2onnx.convert_file(xml, folder / "model.onnx")
        for shape in SHAPES:
            x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
            got, want = run_onnx(xml, [x])[0], run_openvino(xml, [x])[0]
            rel = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6))
            worst = max(worst, rel)
            print(f"{name:20s} {str(shape):18s} max |onnxruntime - OpenVINO| / max |OpenVINO| = {rel:.2e}")
    print("PASS" if worst < 1e-3 and not failed else "FAIL", f"(worst {worst:.2e}, limit 1e-3)")
    return 0 if worst < 1e-3 and not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or MODELS))
