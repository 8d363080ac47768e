"""Regenerate samples/torch_loop/: a scripted torch recurrence whose loop runs x.shape[1] times and
holds a data-dependent branch, converted by openvino.convert_model into a Loop-5 whose body holds
an If-8 (defaults: f16 weights).

    h = 0; for t in range(x.shape[1]): h = tanh(cell(x[:, t]) + h); if h.sum() > 0: h = h * 0.5
    returns h and every h stacked on axis 1                  (cell: Linear(4, 4); x: [?, ?, 4])

The weights are rounded to f16 first, so torch's outputs (saved beside the IR) are what the
f16-compressed IR computes. Needs torch (not a test dependency).

    python samples/make_torch_loop.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "torch_loop"


class Recurrence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 4)
        outs = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.cell(x[:, t]) + h)
            if h.sum() > 0:
                h = h * 0.5
            outs.append(h)
        return h, torch.stack(outs, 1)


def main() -> None:
    torch.manual_seed(0)
    module = Recurrence().eval()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(p.half().float())
    scripted = torch.jit.script(module)
    model = ov.convert_model(scripted, example_input=torch.randn(2, 3, 4),
                             input=[ov.PartialShape([-1, -1, 4])])
    model.outputs[0].get_tensor().set_names({"h"})
    model.outputs[1].get_tensor().set_names({"every"})
    HERE.mkdir(exist_ok=True)
    ov.save_model(model, str(HERE / "torch_loop.xml"))
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    np.save(HERE / "x.1.npy", x)  # named like the input: tests/test_harness.py feeds it
    with torch.no_grad():
        h, every = scripted(torch.from_numpy(x))
    np.save(HERE / "h.npy", h.numpy())
    np.save(HERE / "every.npy", every.numpy())


if __name__ == "__main__":
    main()
