"""Regenerate samples/reshape/: the five worked examples of specs/Reshape.md, written by OpenVINO.

For each example N: ``exampleN.xml`` + ``.bin`` (data -> Reshape(constant pattern) -> y),
``exampleN_data.npy`` (the input, 1, 2, 3 ... in row-major order) and ``exampleN_y.npy`` (the
expected output: the same values in the spec's published shape).

    python samples/make_reshape.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "reshape"

# (data shape, pattern, special_zero, published output shape), as in the spec.
EXAMPLES = [
    ((2, 5, 5, 0), [0, 4], False, (0, 4)),
    ((2, 5, 5, 24), [0, -1, 4], True, (2, 150, 4)),
    ((2, 2, 3), [0, 0, 1, -1], True, (2, 2, 1, 3)),
    ((3, 1, 1), [-1, 0], True, (3, 1)),
    ((3, 1, 1), [0, -1], True, (3, 1)),
]


def build(shape, pattern, special_zero):
    import openvino as ov
    import openvino.opset15 as ops

    x = ops.parameter(list(shape), np.float32, name="data")
    y = ops.reshape(x, ops.constant(np.array(pattern, np.int64)), special_zero)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([ops.result(y)], [x], "reshape")


def main() -> None:
    import openvino as ov

    HERE.mkdir(exist_ok=True)
    for n, (shape, pattern, special_zero, out_shape) in enumerate(EXAMPLES, 1):
        ov.save_model(build(shape, pattern, special_zero), str(HERE / f"example{n}.xml"), compress_to_fp16=False)
        data = (np.arange(int(np.prod(shape))) + 1).astype(np.float32).reshape(shape)
        np.save(HERE / f"example{n}_data.npy", data)
        np.save(HERE / f"example{n}_y.npy", data.reshape(out_shape))
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
