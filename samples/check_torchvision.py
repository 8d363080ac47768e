"""Convert torchvision classifiers through OpenVINO and ir2onnx and compare onnxruntime with
OpenVINO (run by hand; needs torch and torchvision, which are not test dependencies).

    python samples/check_torchvision.py [squeezenet1_1 googlenet shufflenet_v2_x1_0 swin_t]

Each model (random weights) goes through ``openvino.convert_model`` and ``openvino.save_model``
with their defaults (dynamic batch and spatial dims, f16-compressed weights), then
``ir2onnx.convert_file``; onnxruntime on the result is compared with OpenVINO on the IR at two
input sizes. Their IRs are 5 to 56 MB, too large to commit, hence a script rather than a test.

torchvision's PyPI wheel is a CUDA build whose C++ ops do not load beside a CPU build of torch;
the classifiers need none of them, so their schemas are declared here only so that torchvision
imports (``pip install --no-deps torchvision==<the release matching torch>`` and Pillow).
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


def _import_torchvision():
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    import torchvision

    return torchvision, lib


def main(names: list[str]) -> int:
    torchvision, _lib = _import_torchvision()
    worst = 0.0
    for name in names:
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
    print("PASS" if worst < 1e-3 else "FAIL", f"(worst {worst:.2e}, limit 1e-3)")
    return 0 if worst < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or MODELS))
