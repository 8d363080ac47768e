"""Write samples/real/conv_transpose_output_size/ (run by hand; needs torch and openvino).

    python samples/make_conv_transpose_output_size.py

``nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)(x, output_size=...)`` for three output sizes,
converted by OpenVINO's PyTorch frontend with ``openvino.convert_model``'s defaults (dynamic dims)
and saved with ``openvino.save_model``'s (f16-compressed weights). The frontend writes explicit pads
with an ``output_padding`` chosen for the requested size. The weights are rounded to f16 first, so
compression changes nothing and the saved torch output is the truth for the converted model
(tests/test_convolution_backprop_roundtrip.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch
from torch import nn

FOLDER = Path(__file__).resolve().parent / "real" / "conv_transpose_output_size"
SIZES = [(7, 9), (8, 10), (7, 10)]


class ConvTransposeToSize(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
        self.size = list(size)

    def forward(self, x):
        return self.up(x, output_size=self.size)


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(1, 4, 4, 5)
    np.save(FOLDER / "x.npy", x.numpy())
    for size in SIZES:
        model = ConvTransposeToSize(size).eval()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.half().float())
            y = model(x).numpy()
        tag = f"{size[0]}x{size[1]}"
        ov.save_model(ov.convert_model(model, example_input=x), str(FOLDER / f"model_{tag}.xml"))
        np.save(FOLDER / f"y_{tag}.npy", y)


if __name__ == "__main__":
    main()
