"""Regenerate samples/grid_sample/: torch.nn.functional.grid_sample in all 18 combinations of
mode (bilinear, nearest, bicubic), padding_mode (zeros, border, reflection) and align_corners,
converted by OpenVINO's PyTorch frontend (``openvino.convert_model``, ``save_model`` defaults:
dynamic dims) into one IR ``all.xml`` (inputs ``in0`` data, ``in1`` grid; outputs ``out0`` ...
``out17`` in the order of ``COMBOS``), with the inputs and torch eager's outputs as ``.npy``:
the truth tests/test_grid_sample.py compares ir2onnx with. The grid holds points outside [-1, 1]
and points on nearest's rounding ties. torch is not a test dependency; run

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
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1.5, 1.5, (2, 4, 7, 2)).astype(np.float32)
    grid[0, 0, :, 0] = (np.arange(7) - 3) / 6 * 2  # ties: unnormalized x at k + 0.5 (align_corners=False)
    grid[1, 1, :, 1] = np.linspace(-1, 1, 7)
    return x, grid


def main() -> None:
    import openvino as ov
    import torch

    class All(torch.nn.Module):
        def forward(self, x, grid):
            return tuple(torch.nn.functional.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=a)
                         for m, p, a in COMBOS)

    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    x, grid = inputs()
    tensors = (torch.from_numpy(x), torch.from_numpy(grid))
    model = ov.convert_model(All(), example_input=tensors)
    for k, port in enumerate(model.inputs):
        port.get_tensor().set_names({f"in{k}"})
    for k, port in enumerate(model.outputs):
        port.get_tensor().set_names({f"out{k}"})
    ov.save_model(model, str(HERE / "all.xml"))
    np.save(HERE / "all_in0.npy", x)
    np.save(HERE / "all_in1.npy", grid)
    for k, out in enumerate(All()(*tensors)):
        np.save(HERE / f"all_out{k}.npy", out.numpy())
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
