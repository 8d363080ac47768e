"""Regenerate samples/unique/: ``torch.unique(x, sorted=True, return_inverse=True,
return_counts=True)`` on an i32 matrix and an f32 vector (with -0.0 and 0.0), converted by
OpenVINO's PyTorch frontend (``openvino.convert_model``, ``save_model`` defaults: dynamic dims;
Unique-10 on the flattened data, the inverse reshaped back), with the inputs and torch eager's
three outputs as ``NAME_in0.npy``, ``NAME_outK.npy``: the truth tests/test_unique.py compares
ir2onnx with. torch is not a test dependency; run

    python samples/make_unique.py
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "unique"


def main() -> None:
    import openvino as ov
    import torch

    class Unique(torch.nn.Module):
        def forward(self, x):
            return torch.unique(x, sorted=True, return_inverse=True, return_counts=True)

    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    rng = np.random.default_rng(3)
    sets = {"int_matrix": rng.integers(-3, 4, (4, 6)).astype(np.int32),
            "float_vector": np.array([2.5, -0.0, 1, 0.0, 2.5, -7, 1, 1], np.float32)}
    for name, x in sets.items():
        t = torch.from_numpy(x)
        model = ov.convert_model(Unique(), example_input=(t,))
        model.inputs[0].get_tensor().set_names({"in0"})
        for k, port in enumerate(model.outputs):
            port.get_tensor().set_names({f"out{k}"})
        ov.save_model(model, str(HERE / f"{name}.xml"))
        np.save(HERE / f"{name}_in0.npy", x)
        for k, out in enumerate(Unique()(t)):
            np.save(HERE / f"{name}_out{k}.npy", out.numpy())
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
