"""Regenerate samples/bucketize/: torch.bucketize and torch.searchsorted (right=False and True)
through openvino.convert_model (the PyTorch frontend writes Bucketize-3 and SearchSorted-15) and
openvino.save_model's defaults (dynamic dims), with torch's outputs beside each IR.

``<stem>_<input>.npy`` / ``<stem>_y.npy``: inputs without NaN and torch's outputs (`ir2onnx check`
compares them, OpenVINO included); ``<stem>_nan.npz``: inputs with NaN values and torch's output
(NaN sorts after every number in torch; OpenVINO's runtime gives index 0 there), which
tests/test_bucketize.py compares. Needs torch (not a test dependency).

    python samples/make_bucketize.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "bucketize"


class Bucketize(torch.nn.Module):
    def __init__(self, right: bool):
        super().__init__()
        self.right = right

    def forward(self, x, boundaries):
        return torch.bucketize(x, boundaries, right=self.right)


class SearchSorted(torch.nn.Module):
    def __init__(self, right: bool):
        super().__init__()
        self.right = right

    def forward(self, sequence, values):
        return torch.searchsorted(sequence, values, right=self.right)


def _save(stem, module, feeds: dict, nan_feeds: dict):
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    model = ov.convert_model(module, example_input=args)
    for port, name in zip(model.inputs, feeds):
        port.get_tensor().set_names({name})
    model.outputs[0].get_tensor().set_names({"y"})
    ov.save_model(model, str(HERE / f"{stem}.xml"))
    for name, value in feeds.items():
        np.save(HERE / f"{stem}_{name}.npy", value)
    np.save(HERE / f"{stem}_y.npy", module(*args).numpy())
    nan_args = tuple(torch.from_numpy(v) for v in nan_feeds.values())
    np.savez(HERE / f"{stem}_nan.npz", y=module(*nan_args).numpy(), **nan_feeds)


def main() -> None:
    HERE.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    boundaries = np.array([-1.5, 0.0, 0.5, 2.0, 3.0], np.float32)
    x = np.concatenate([boundaries, rng.uniform(-3, 4, 7)]).astype(np.float32).reshape(3, 4)
    x_nan = x.copy()
    x_nan[0, 1] = x_nan[2, 3] = np.nan
    sequence = np.sort(rng.integers(-5, 6, (2, 6)), axis=1).astype(np.float32)
    values = np.concatenate([sequence[:, :3], rng.integers(-6, 7, (2, 3))], axis=1).astype(np.float32)
    values_nan = values.copy()
    values_nan[1, 0] = np.nan
    for right in (False, True):
        tag = "right" if right else "left"
        _save(f"bucketize_{tag}", Bucketize(right).eval(), {"x": x, "boundaries": boundaries},
              {"x": x_nan, "boundaries": boundaries})
        _save(f"searchsorted_{tag}", SearchSorted(right).eval(), {"sequence": sequence, "values": values},
              {"sequence": sequence, "values": values_nan})


if __name__ == "__main__":
    main()
