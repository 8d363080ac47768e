"""Write the dynamic-dims samples in samples/dynamic/ (run by hand; needs torch and openvino).

    python samples/make_dynamic.py

Small torch.nn.Modules that reproduce the patterns of torchvision's squeezenet1_1, googlenet,
shufflenet_v2 and swin_t that OpenVINO's PyTorch frontend turns into run-time values (these are NOT
the torchvision models, which are not installed here; random weights), converted with
``openvino.convert_model`` defaults (every input dim dynamic) and saved with ``openvino.save_model``
defaults (f16-compressed weights):

* ``squeezenet``: Conv -> ReLU -> MaxPool2d(3, 2, ceil_mode=True) on dynamic H, W (MaxPool-14
  ceil_torch), fire modules (squeeze 1x1, expand 1x1 + 3x3, cat), Dropout, AdaptiveAvgPool2d(1);
* ``googlenet``: the transform_input slices and cat, MaxPool2d(3, 2, ceil_mode=True), an
  inception block whose pool branch is MaxPool2d(3, 1, padding=1, ceil_mode=True), AvgPool2d
  (ceil_mode=True, count_include_pad=False);
* ``shufflenet``: an InvertedResidual pair: ``x.chunk(2, dim=1)`` (VariadicSplit with split lengths
  computed from the run-time channel count), channel shuffle (view, transpose, view), a stride-2
  unit and MaxPool2d(3, 2, 1), then ``mean([2, 3])``;
* ``swin``: a window-attention block with swin's padding ``F.pad(x, (0, 0, 0, pad_r, 0, pad_b))``
  whose pads are computed from the run-time H, W (Pad-12 with run-time pads_end), torch.roll (the
  shifted window), window partition/reverse (view, permute), softmax attention, the crop back;
* ``topk``: ``torch.topk(x, k)`` with ``k = x.shape[-1] // 2`` (TopK-11 with a run-time k).

Each folder holds model.xml, model.bin and x.npy (the example input; tests/test_real_models.py
also feeds several other sizes and compares onnxruntime, the oracle interpreter and OpenVINO).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parent / "dynamic"


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.e1, self.e3 = nn.Conv2d(squeeze, expand, 1), nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.e1(x)), torch.relu(self.e3(x))], 1)


class Squeeze(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True), Fire(16, 4, 8), Fire(16, 4, 8),
            nn.MaxPool2d(3, 2, ceil_mode=True), Fire(16, 8, 16))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(32, 10, 1), nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


class Inception(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.b1 = nn.Conv2d(cin, 8, 1)
        self.b2 = nn.Sequential(nn.Conv2d(cin, 4, 1), nn.ReLU(), nn.Conv2d(4, 8, 3, padding=1))
        self.b3 = nn.Sequential(nn.Conv2d(cin, 4, 1), nn.ReLU(), nn.Conv2d(4, 8, 3, padding=1))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, padding=1, ceil_mode=True), nn.Conv2d(cin, 8, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


class Google(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 7, stride=2, padding=3)
        self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.inc = Inception(16)
        self.pool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.avg = nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x0 = torch.unsqueeze(x[:, 0], 1) * (0.229 / 0.5) + (0.485 - 0.5) / 0.5
        x1 = torch.unsqueeze(x[:, 1], 1) * (0.224 / 0.5) + (0.456 - 0.5) / 0.5
        x2 = torch.unsqueeze(x[:, 2], 1) * (0.225 / 0.5) + (0.406 - 0.5) / 0.5
        x = torch.cat((x0, x1, x2), 1)
        x = self.pool2(self.inc(self.pool1(torch.relu(self.conv1(x)))))
        x = self.avg(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def channel_shuffle(x, groups: int):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride, half = stride, cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin), nn.BatchNorm2d(cin),
                                         nn.Conv2d(cin, half, 1), nn.BatchNorm2d(half), nn.ReLU())
        self.branch2 = nn.Sequential(
            nn.Conv2d(cin if stride > 1 else half, half, 1), nn.BatchNorm2d(half), nn.ReLU(),
            nn.Conv2d(half, half, 3, stride, 1, groups=half), nn.BatchNorm2d(half),
            nn.Conv2d(half, half, 1), nn.BatchNorm2d(half), nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class Shuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.stage = nn.Sequential(InvertedResidual(8, 16, 2), InvertedResidual(16, 16, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stage(self.pool(self.conv1(x)))
        return self.fc(x.mean([2, 3]))


class SwinBlock(nn.Module):
    def __init__(self, dim=8, heads=2, window=4, shift=2):
        super().__init__()
        self.dim, self.heads, self.window, self.shift = dim, heads, window, shift
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.embed = nn.Conv2d(3, dim, 2, 2)

    def attention(self, x):
        b, h, w, c = x.shape
        ws = self.window
        pad_r = (ws - w % ws) % ws
        pad_b = (ws - h % ws) % ws
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        _, ph, pw, _ = x.shape
        x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        n = (ph // ws) * (pw // ws)
        x = x.view(b, ph // ws, ws, pw // ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b * n, ws * ws, c)
        qkv = self.qkv(x).reshape(x.size(0), x.size(1), 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.softmax(q.matmul(k.transpose(-2, -1)) * (c // self.heads) ** -0.5, dim=-1)
        x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), x.size(1), c)
        x = self.proj(x)
        x = x.view(b, ph // ws, pw // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, ph, pw, c)
        x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        return x[:, :h, :w, :].contiguous()

    def forward(self, x):
        x = self.embed(x).permute(0, 2, 3, 1)
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x.mean([1, 2])


class TopK(nn.Module):
    def forward(self, x):
        values, indices = torch.topk(x, x.shape[-1] // 2, dim=-1)
        return values, indices


MODELS = {
    "squeezenet": (Squeeze, (1, 3, 33, 35)),
    "googlenet": (Google, (1, 3, 35, 37)),
    "shufflenet": (Shuffle, (1, 3, 33, 31)),
    "swin": (SwinBlock, (1, 3, 14, 18)),
    "topk": (TopK, (2, 3, 9)),
}


def write(name: str, root: Path = ROOT) -> Path:
    cls, shape = MODELS[name]
    torch.manual_seed(0)
    model = cls().eval()
    example = torch.randn(*shape)
    ov_model = ov.convert_model(model, example_input=example)  # defaults: dynamic dims
    ov_model.inputs[0].get_tensor().set_names({"x"})
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov_model, folder / "model.xml")  # defaults: f16-compressed weights
    np.save(folder / "x.npy", example.numpy())  # the input `ir2onnx check` and the tests feed
    return folder / "model.xml"


if __name__ == "__main__":
    for name in MODELS:
        print(write(name))
