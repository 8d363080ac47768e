"""Regenerate samples/torch_adaptive_pooling/: torch's adaptive pooling through
openvino.convert_model (defaults: every input dim dynamic) and save_model, with torch's outputs.

    forward(x[?, ?, ?, ?]): AdaptiveAvgPool2d((3, 4))(x), AdaptiveMaxPool2d((2, 3), return_indices)(x),
                            AdaptiveAvgPool2d(1)(x)

OpenVINO writes AdaptiveAvgPool-8 and AdaptiveMaxPool-8 (index_element_type i32, then Convert
to torch's i64) with constant output sizes over dynamic spatial dims. Inputs of two shapes are
saved: x.npy (1, 2, 7, 9: overlapping bins of unequal length) and x_b.npy (2, 2, 5, 6), each with
torch's outputs (avg, max, indices, global; the second set suffixed _b). Needs torch (not a
test dependency).

    python samples/make_torch_adaptive_pooling.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "torch_adaptive_pooling"
OUTPUTS = ("avg", "max", "indices", "global")


class Adaptive(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.avg = torch.nn.AdaptiveAvgPool2d((3, 4))
        self.max = torch.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
        self.glob = torch.nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        values, indices = self.max(x)
        return self.avg(x), values, indices, self.glob(x)


def main() -> None:
    module = Adaptive().eval()
    model = ov.convert_model(module, example_input=torch.randn(1, 2, 7, 9))
    model.inputs[0].get_tensor().set_names({"x"})
    for out, name in zip(model.outputs, OUTPUTS):
        out.get_tensor().set_names({name})
    HERE.mkdir(exist_ok=True)
    ov.save_model(model, str(HERE / "adaptive.xml"))
    rng = np.random.default_rng(0)
    for suffix, shape in (("", (1, 2, 7, 9)), ("_b", (2, 2, 5, 6))):
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(HERE / f"x{suffix}.npy", x)
        with torch.no_grad():
            for name, y in zip(OUTPUTS, module(torch.from_numpy(x))):
                np.save(HERE / f"{name}{suffix}.npy", y.numpy())


if __name__ == "__main__":
    main()
