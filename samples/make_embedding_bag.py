"""Regenerate samples/embedding_bag/: torch.nn.EmbeddingBag through openvino.convert_model (the
PyTorch frontend writes EmbeddingBagOffsets-15) and openvino.save_model's defaults (f16 weights,
dynamic dims unless given), with torch's outputs beside each IR (``<stem>_y.npy``) for the inputs
saved there (``<stem>_<input>.npy``), which `ir2onnx check` and tests/test_embedding.py compare.

    sum_weighted: mode="sum", per_sample_weights; static input shapes (OpenVINO 2026.4's CPU
                  plugin compiles no weighted bag with dynamic indices)
    mean:         mode="mean", 1-D indices and offsets of dynamic length, an empty bag in the middle
    packed:       mode="sum", 2-D indices [batch, per_bag] of dynamic dims (the frontend flattens
                  them and makes the offsets with Range)

The tables are rounded to f16 first, so torch computes with the weights the IR holds. Needs torch
(not a test dependency).

    python samples/make_embedding_bag.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "embedding_bag"


class Bag(torch.nn.Module):
    def __init__(self, mode: str, weighted: bool = False):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(10, 4, mode=mode)
        self.weighted = weighted

    def forward(self, indices, offsets, weights):
        return self.bag(indices, offsets, per_sample_weights=weights)


class Mean(Bag):
    def forward(self, indices, offsets):
        return self.bag(indices, offsets)


class Packed(Bag):
    def forward(self, indices):
        return self.bag(indices)


def _save(stem, module, feeds: dict, shapes):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(p.half().float())
        args = tuple(torch.from_numpy(v) for v in feeds.values())
        want = module(*args).numpy()
    model = ov.convert_model(module, example_input=args, input=shapes)
    for port, name in zip(model.inputs, feeds):
        port.get_tensor().set_names({name})
    model.outputs[0].get_tensor().set_names({"y"})
    ov.save_model(model, str(HERE / f"{stem}.xml"))
    for name, value in feeds.items():
        np.save(HERE / f"{stem}_{name}.npy", value)
    np.save(HERE / f"{stem}_y.npy", want)


def main() -> None:
    torch.manual_seed(0)
    HERE.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9], np.int64)
    weights = rng.choice([-1.5, -0.5, 0.25, 1.0, 2.0], 8).astype(np.float32)
    _save("sum_weighted", Bag("sum", True).eval(),
          {"indices": idx, "offsets": np.array([0, 3, 3], np.int64), "weights": weights},
          [ov.PartialShape([8]), ov.PartialShape([3]), ov.PartialShape([8])])
    _save("mean", Mean("mean").eval(), {"indices": idx, "offsets": np.array([0, 2, 2, 5], np.int64)},
          [ov.PartialShape([-1]), ov.PartialShape([-1])])
    _save("packed", Packed("sum").eval(), {"indices": rng.integers(0, 10, (3, 4)).astype(np.int64)},
          [ov.PartialShape([-1, -1])])


if __name__ == "__main__":
    main()
