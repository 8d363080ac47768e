"""Regenerate samples/torch_if/: a torch module with a data-dependent branch, scripted with
torch.jit.script and converted by openvino.convert_model into an If-8 (defaults: f16 weights).

    forward(x[?, 4]): a(x).relu() if x.sum() > 0 else b(x) * 2     (a, b: Linear(4, 3))

The weights are rounded to f16 first, so torch's outputs (saved beside the IR for an input of
each sign) are what the f16-compressed IR computes. Needs torch (not a test dependency).

    python samples/make_torch_if.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "torch_if"


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 3)
        self.b = torch.nn.Linear(4, 3)

    def forward(self, x):
        if x.sum() > 0:
            y = self.a(x).relu()
        else:
            y = self.b(x) * 2
        return y


def main() -> None:
    torch.manual_seed(0)
    module = Branchy().eval()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(p.half().float())
    scripted = torch.jit.script(module)
    model = ov.convert_model(scripted, example_input=torch.randn(2, 4), input=[ov.PartialShape([-1, 4])])
    model.outputs[0].get_tensor().set_names({"y"})
    HERE.mkdir(exist_ok=True)
    ov.save_model(model, str(HERE / "torch_if.xml"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for sign, xs in (("pos", np.abs(x)), ("neg", -np.abs(x))):
        np.save(HERE / f"x_{sign}.npy", xs)
        with torch.no_grad():
            np.save(HERE / f"y_{sign}.npy", scripted(torch.from_numpy(xs)).numpy())


if __name__ == "__main__":
    main()
