"""Regenerate samples/grid_sample/: torch.nn.functional.grid_sample in all 18 combinations of
mode (bilinear, nearest, bicubic), padding_mode (zeros, border, reflection) and align_corners,
converted by OpenVINO's PyTorch frontend (``openvino.convert_model``, ``save_model`` defaults:
dynamic dims) into one IR (inputs ``in0`` data, ``in1`` grid; outputs ``out0`` ... ``out17`` in
the order of ``COMBOS``), with the inputs and torch eager's outputs as ``.npy``: the truth
tests/test_grid_sample.py compares ir2onnx with. ``random.xml``: a grid with points outside
[-1, 1] (OpenVINO agrees too); ``framework/ties.xml`` (the same model): a grid with points on
nearest's rounding ties, where OpenVINO's CPU plugin differs from torch (a ``framework`` folder,
as tests/test_harness.py expects for samples where the framework is the only truth). torch is not
a test dependency; run

    python samples/make_grid_sample.py
"""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "grid_sample"
COMBOS = list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True]))


def inputs():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((2, 3, 5, 6)) / 4).astype(np.float32)  # small: torch's f32 bicubic within 1e-6
    grid = rng.uniform(-1.5, 1.5, (2, 4, 7, 2)).astype(np.float32)
    ties = grid.copy()
    ties[0, 0, :, 0] = (np.arange(7) - 3) / 6 * 2  # unnormalized x at k + 0.5 (align_corners=False)
    ties[1, 1, :, 1] = np.linspace(-1, 1, 7)
    return {"random": (x, grid), "framework/ties": (x, ties)}


def main() -> None:
    import openvino as ov
    import torch

    class All(torch.nn.Module):
        def forward(self, x, grid):
            return tuple(torch.nn.functional.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=a)
                         for m, p, a in COMBOS)

    shutil.rmtree(HERE, ignore_errors=True)
    for name, (x, grid) in inputs().items():
        stem = HERE / name
        stem.parent.mkdir(parents=True, exist_ok=True)
        tensors = (torch.from_numpy(x), torch.from_numpy(grid))
        model = ov.convert_model(All(), example_input=tensors)
        for k, port in enumerate(model.inputs):
            port.get_tensor().set_names({f"in{k}"})
        for k, port in enumerate(model.outputs):
            port.get_tensor().set_names({f"out{k}"})
        ov.save_model(model, str(stem) + ".xml")
        np.save(str(stem) + "_in0.npy", x)
        np.save(str(stem) + "_in1.npy", grid)
        for k, out in enumerate(All()(*tensors)):
            np.save(str(stem) + f"_out{k}.npy", out.numpy())
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
