"""Regenerate samples/depth_to_space/: the spec's TensorFlow NHWC worked examples and one
OpenVINO-written DepthToSpace per mode, each with its input and expected output.

* ``tf_nhwc_example{1,2,3}``: specs/DepthToSpace.md's worked examples (NHWC, block_size 2),
  written with ir2onnx.testing.IRWriter (OpenVINO's API has no ``data_format``); the expected
  outputs are the spec's published values, typed in here.
* ``ov_blocks_first``: ``x[?, 8, 2, 3] -> DepthToSpace(blocks_first, 2)`` (4-D, dynamic batch) and
  ``ov_depth_first``: ``x[1, 16, 2, 1, 3] -> DepthToSpace(depth_first, 2)`` (5-D), both written by
  ``openvino.save_model``; the expected outputs are OpenVINO's own results on the inputs.

Files: ``NAME.xml``, ``NAME.bin``, ``NAME_x.npy`` (input ``x``), ``NAME_y.npy`` (output ``y``).

    python samples/make_depth_to_space.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "depth_to_space"
sys.path.insert(0, str(HERE.parents[1]))

from ir2onnx.testing import IRWriter, run_openvino  # noqa: E402

# (input shape, published output) of the spec's TensorFlow NHWC examples; inputs hold 1..N
TF_EXAMPLES = {
    "tf_nhwc_example1": ((1, 1, 1, 4), [[[[1], [2]], [[3], [4]]]]),
    "tf_nhwc_example2": ((1, 1, 1, 12), [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]]),
    "tf_nhwc_example3": ((1, 2, 2, 4), np.array([[1, 2, 5, 6], [3, 4, 7, 8], [9, 10, 13, 14],
                                                 [11, 12, 15, 16]]).reshape(1, 4, 4, 1)),
}


def write_tf_example(name: str, shape, expected) -> None:
    expected = np.asarray(expected, np.float32)
    w = IRWriter(name)
    x = w.parameter(list(shape), "f32", "x")
    (y,) = w.layer("DepthToSpace", "opset1", [x], {"block_size": 2, "mode": "blocks_first", "data_format": "NHWC"},
                   [("f32", expected.shape)], out_names=["y"])
    w.result(y, "y")
    w.save(HERE / f"{name}.xml")
    np.save(HERE / f"{name}_x.npy", np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape))
    np.save(HERE / f"{name}_y.npy", expected)


def write_ov_example(name: str, param_shape, mode: str, x: np.ndarray) -> None:
    import openvino as ov
    import openvino.opset15 as ops

    p = ops.parameter(param_shape, ov.Type.f32, name="x")
    d2s = ops.depth_to_space(p, mode, 2)
    d2s.output(0).get_tensor().set_names({"y"})
    xml = HERE / f"{name}.xml"
    ov.save_model(ov.Model([ops.result(d2s)], [p], name), str(xml), compress_to_fp16=False)
    (y,) = run_openvino(xml, [x])
    np.save(HERE / f"{name}_x.npy", x)
    np.save(HERE / f"{name}_y.npy", y)


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, (shape, expected) in TF_EXAMPLES.items():
        write_tf_example(name, shape, expected)
    iota = lambda shape: np.arange(np.prod(shape), dtype=np.float32).reshape(shape)  # noqa: E731
    write_ov_example("ov_blocks_first", [-1, 8, 2, 3], "blocks_first", iota((2, 8, 2, 3)))
    write_ov_example("ov_depth_first", [1, 16, 2, 1, 3], "depth_first", iota((1, 16, 2, 1, 3)))
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
