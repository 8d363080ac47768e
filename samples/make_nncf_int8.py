"""Write the NNCF INT8 samples in samples/real/nncf_resnet{1,3}/ (run by hand; needs torch,
openvino and nncf, none of which CI installs).

    pip install nncf==3.4.0 && python samples/make_nncf_int8.py

A ResNet-style PyTorch model (Conv-BN-ReLU stem, 1 or 3 basic residual blocks of 32 channels,
global average pool, Linear head) with BatchNorm statistics measured on random images (so the
activations have realistic ranges), converted by OpenVINO's PyTorch frontend
(``openvino.convert_model``, dynamic batch), quantized by NNCF's post-training quantization
(``nncf.quantize`` on the ``ov.Model``, 30 random calibration images, its defaults: the CPU
hardware config, per-tensor u8/i8 activations, per-channel symmetric i8 weights stored as
``Const i8 -> Convert -> Multiply``, fast bias correction) and saved with ``openvino.save_model``.

That is how Open Model Zoo's FP16-INT8 IRs and NNCF users' IRs are made. NNCF quantizes both
inputs of each residual Add with their own ranges. The IR gets a second Result: the quantized
feature map that enters the pooling (the output of NNCF's FakeQuantize there), so a test can count
quantization steps; the first output is the logits. Both files are < 150 KB.
"""
from __future__ import annotations

from pathlib import Path

import nncf
import numpy as np
import openvino as ov
import torch
from torch import nn

FOLDER = Path(__file__).resolve().parent / "real"


class Block(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))


class ResNet(nn.Module):
    def __init__(self, blocks: int, c: int = 32, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(c) for _ in range(blocks)])
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


def resnet(blocks: int) -> ov.Model:
    torch.manual_seed(blocks)
    net = ResNet(blocks)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None  # cumulative average: the statistics of the batches below
    net.train()
    with torch.no_grad():
        for _ in range(10):
            net(torch.randn(8, 3, 32, 32))
    net.eval()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):  # a trained net's affine parameters are not 1 and 0
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.normal_(0, 0.2)
    model = ov.convert_model(net, example_input=torch.randn(1, 3, 32, 32), input=[(-1, 3, 32, 32)])
    rng = np.random.default_rng(1)
    calibration = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(30)]
    model = nncf.quantize(model, nncf.Dataset(calibration), subset_size=len(calibration))
    pooled = next(op for op in model.get_ordered_ops() if op.get_type_name() == "FakeQuantize" and any(
        i.get_node().get_type_name() == "ReduceMean" for i in op.output(0).get_target_inputs()))
    return ov.Model([model.get_results()[0].input_value(0), pooled.output(0)], model.get_parameters())


def main() -> None:
    for blocks in (1, 3):
        folder = FOLDER / f"nncf_resnet{blocks}"
        folder.mkdir(parents=True, exist_ok=True)
        model = resnet(blocks)
        model.inputs[0].get_tensor().set_names({"x"})
        ov.save_model(model, folder / "model.xml")
        print(folder, sum(f.stat().st_size for f in folder.iterdir()), "bytes")


if __name__ == "__main__":
    main()
