"""Regenerate samples/col2im/: torch.nn.functional.fold through openvino.convert_model (the
PyTorch frontend writes Col2Im-15) and openvino.save_model's defaults (dynamic dims), with torch's
output beside the IR (``fold_x.npy`` in, ``fold_y.npy`` out) for `ir2onnx check` and
tests/test_patches.py. Needs torch (not a test dependency).

    fold(x[?, 12, 6], output_size=(5, 6), kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))

    python samples/make_col2im.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

HERE = Path(__file__).resolve().parent / "col2im"


class Fold(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))


def main() -> None:
    HERE.mkdir(exist_ok=True)
    x = np.random.default_rng(0).standard_normal((2, 12, 6)).astype(np.float32)
    module = Fold().eval()
    model = ov.convert_model(module, example_input=(torch.from_numpy(x),), input=[ov.PartialShape([-1, 12, 6])])
    model.inputs[0].get_tensor().set_names({"x"})
    model.outputs[0].get_tensor().set_names({"y"})
    ov.save_model(model, str(HERE / "fold.xml"))
    np.save(HERE / "fold_x.npy", x)
    np.save(HERE / "fold_y.npy", module(torch.from_numpy(x)).numpy())


if __name__ == "__main__":
    main()
