"""Regenerate samples/decoder/: a small decoder written by OpenVINO itself (the README's sample).

x[?, 8, 6, 6] -> ConvolutionBackpropData (stride 2, pads 1/1, output_padding 1, FP16-compressed
weights) -> Add bias -> DepthToSpace(2, depth_first) -> Reshape "flatten, keep the batch"
(ShapeOf -> Gather -> Concat -> Reshape) -> y[?, 2*24*24].

    python samples/make_decoder.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

HERE = Path(__file__).resolve().parent / "decoder"


def build() -> ov.Model:
    rng = np.random.default_rng(7)
    x = ops.parameter([-1, 8, 6, 6], np.float32, name="x")
    w = ops.constant(rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2)
    up = ops.convolution_backprop_data(x, w, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                       output_padding=[1, 1])
    bias = ops.constant(rng.standard_normal((1, 8, 1, 1)).astype(np.float32))
    act = ops.add(up, bias)
    d2s = ops.depth_to_space(act, "depth_first", 2)
    batch = ops.gather(ops.shape_of(d2s), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
    pattern = ops.concat([batch, ops.constant(np.array([-1], np.int64))], 0)
    y = ops.reshape(d2s, pattern, special_zero=False)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([ops.result(y)], [x], "decoder")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    ov.save_model(build(), str(HERE / "decoder.xml"), compress_to_fp16=True)
    x = np.random.default_rng(0).standard_normal((2, 8, 6, 6)).astype(np.float32)
    np.save(HERE / "x.npy", x)
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
