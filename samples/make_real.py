"""Write the two "real model" samples in samples/real/ (run by hand; needs torch and openvino).

    python samples/make_real.py

Two tiny PyTorch models, converted by OpenVINO's own PyTorch frontend
(``openvino.convert_model(model, example_input=..., input=...)``) with static input shapes, and
saved as IR with f32 weights:

* ``cnn``: Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d(ceil_mode) -> Conv2d(groups=2) -> ReLU6 ->
  AvgPool2d -> flatten -> Linear -> ReLU -> Linear (the IR keeps Convolution, GroupConvolution,
  MaxPool-14, AvgPool-14, Clamp, Reshape, MatMul, Add ...);
* ``attention``: a two-head self-attention block: Linear q/k/v -> reshape to heads -> transpose ->
  q @ k^T * scale -> tanh logit soft-capping (as in Gemma 2) -> softmax -> @ v -> transpose ->
  reshape -> Linear, plus a GELU MLP and residual Adds. Without the soft-capping OpenVINO fuses
  the block into ScaledDotProductAttention-13 (covered by make_real_transformer.py); the
  soft-capping keeps the unfused MatMul/Softmax chain under test here.

Each sample folder holds model.xml, model.bin and input.npy (a fixed input). CI has no torch:
tests/test_real_models.py reads the committed files and compares onnxruntime, the oracle
interpreter and the OpenVINO runtime.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent / "real"


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2, ceil_mode=True)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.pool2 = nn.AvgPool2d(2)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn(self.conv1(x))))
        x = self.pool2(nn.functional.relu6(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc2(torch.relu(self.fc1(x)))


class TinyAttention(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2):
        super().__init__()
        self.heads, self.head_dim, self.cap = heads, dim // heads, 5.0
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp1, self.mlp2 = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim ** -0.5)
        scores = torch.tanh(scores / self.cap) * self.cap  # logit soft-capping
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.proj(out)
        return x + self.mlp2(nn.functional.gelu(self.mlp1(x)))


def _save(name: str, model: nn.Module, example: torch.Tensor) -> None:
    folder = ROOT / name
    folder.mkdir(parents=True, exist_ok=True)
    model.eval()
    ov_model = ov.convert_model(model, example_input=example, input=[list(example.shape)])
    ov_model.inputs[0].get_tensor().set_names({"x"})
    ov.save_model(ov_model, str(folder / "model.xml"), compress_to_fp16=False)
    np.save(folder / "input.npy", example.numpy())
    size = sum(p.stat().st_size for p in folder.iterdir())
    types = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id}" for op in ov_model.get_ordered_ops()})
    print(f"{folder}: {size} bytes; {', '.join(types)}")


def main() -> None:
    torch.manual_seed(0)
    cnn = TinyCNN()
    with torch.no_grad():  # non-trivial batch-norm statistics
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 2.0)
        cnn.bn.weight.uniform_(0.5, 1.5)
        cnn.bn.bias.uniform_(-0.2, 0.2)
    _save("cnn", cnn, torch.randn(1, 3, 15, 15))
    _save("attention", TinyAttention(), torch.randn(1, 6, 16))


if __name__ == "__main__":
    main()
