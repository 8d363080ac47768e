"""Write the YOLO-style "real model" sample in samples/real/detector/ (run by hand; needs torch
and openvino).

    python samples/make_real_detector.py

A tiny two-scale detector, converted by OpenVINO's own PyTorch frontend
(``openvino.convert_model``) with a static input shape and saved as IR with f32 weights:
a stride-2 Conv2d + LeakyReLU(0.1) stem (OpenVINO writes PReLU), a stride-2 stage (SiLU:
Swish), a deeper stride-2 stage whose features go up again with ``nn.Upsample(scale_factor=2,
mode="nearest")`` (Interpolate-11, nearest) and are concatenated with the shallower ones (the
FPN/PAN neck of YOLO), a side branch upsampled with ``F.interpolate(mode="bilinear")``
(Interpolate-11, linear_onnx), then a 1x1 head and a sigmoid over the objectness/class channels.

The folder holds model.xml, model.bin and input.npy (a fixed input). CI has no torch:
tests/test_real_models.py reads the committed files and compares onnxruntime, the oracle
interpreter and the OpenVINO runtime.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch
from torch import nn
from torch.nn import functional as F

FOLDER = Path(__file__).resolve().parent / "real" / "detector"


class TinyDetector(nn.Module):
    def __init__(self, anchors: int = 2, classes: int = 3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.stage1 = nn.Sequential(nn.Conv2d(8, 12, 3, stride=2, padding=1), nn.SiLU())
        self.stage2 = nn.Sequential(nn.Conv2d(12, 16, 3, stride=2, padding=1), nn.SiLU())
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.side = nn.Conv2d(16, 4, 1)
        self.fuse = nn.Sequential(nn.Conv2d(16 + 12 + 4, 16, 3, padding=1), nn.LeakyReLU(0.1))
        self.head = nn.Conv2d(16, anchors * (5 + classes), 1)

    def forward(self, x):
        p3 = self.stage1(self.stem(x))           # stride 4
        p4 = self.stage2(p3)                     # stride 8
        side = F.interpolate(self.side(p4), size=p3.shape[-2:], mode="bilinear", align_corners=False)
        y = self.head(self.fuse(torch.cat([self.up(p4), p3, side], dim=1)))
        return torch.sigmoid(y)


def main() -> None:
    torch.manual_seed(0)
    model = TinyDetector().eval()
    example = torch.randn(1, 3, 32, 32)
    FOLDER.mkdir(parents=True, exist_ok=True)
    ov_model = ov.convert_model(model, example_input=example, input=[list(example.shape)])
    ov_model.inputs[0].get_tensor().set_names({"x"})
    ov.save_model(ov_model, str(FOLDER / "model.xml"), compress_to_fp16=False)
    np.save(FOLDER / "input.npy", example.numpy())
    size = sum(p.stat().st_size for p in FOLDER.iterdir())
    types = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id}" for op in ov_model.get_ordered_ops()})
    print(f"{FOLDER}: {size} bytes; {', '.join(types)}")


if __name__ == "__main__":
    main()
