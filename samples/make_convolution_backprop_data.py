"""Regenerate samples/convolution_backprop_data/: the spec's three worked examples
(../shared/specs/ConvolutionBackpropData.md) as IR written by OpenVINO itself.

Filters come from a fixed seed and are stored as OpenVINO stores them by default (f16 Const ->
Convert). Inputs are not stored (examples 1 and 3 take 224x224x20 tensors): ``example_input``
makes them from a fixed seed. Run: ``python samples/make_convolution_backprop_data.py``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

OUT_DIR = Path(__file__).resolve().parent / "convolution_backprop_data"

# name -> data shape, filters shape, attributes, output_shape input (or None), expected output shape
EXAMPLES = {
    "example1": dict(data=(1, 20, 224, 224), filters=(20, 10, 3, 3), strides=[2, 2], pads_begin=[1, 1],
                     pads_end=[1, 1], dilations=[1, 1], auto_pad="explicit", output_padding=[0, 0],
                     output_shape=None, expected=(1, 10, 447, 447)),
    "example2": dict(data=(1, 20, 2, 2), filters=(20, 10, 3, 3), strides=[3, 3], pads_begin=[0, 0],
                     pads_end=[0, 0], dilations=[1, 1], auto_pad="explicit", output_padding=[2, 2],
                     output_shape=None, expected=(1, 10, 8, 8)),
    "example3": dict(data=(1, 20, 224, 224), filters=(20, 10, 3, 3), strides=[1, 1], pads_begin=[0, 0],
                     pads_end=[0, 0], dilations=[1, 1], auto_pad="valid", output_padding=[0, 0],
                     output_shape=[450, 450], expected=(1, 10, 450, 450)),
}
SEEDS = {"example1": 1, "example2": 2, "example3": 3}


def example_filters(name: str) -> np.ndarray:
    spec = EXAMPLES[name]
    return np.random.default_rng(SEEDS[name]).standard_normal(spec["filters"]).astype(np.float32)


def example_input(name: str) -> np.ndarray:
    """The input the tests and benchmarks feed to ``name`` (fixed seed)."""
    spec = EXAMPLES[name]
    return np.random.default_rng(100 + SEEDS[name]).standard_normal(spec["data"]).astype(np.float32)


def build(name: str):
    """The OpenVINO model of one worked example."""
    import openvino as ov
    import openvino.opset15 as ops

    spec = EXAMPLES[name]
    data = ops.parameter(spec["data"], np.float32, name="data")
    out_shape = None
    if spec["output_shape"] is not None:
        out_shape = ops.constant(np.array(spec["output_shape"], np.int64), name="output_shape")
    node = ops.convolution_backprop_data(
        data, ops.constant(example_filters(name), name="filters"), spec["strides"], out_shape,
        spec["pads_begin"], spec["pads_end"], spec["dilations"], spec["auto_pad"],
        spec["output_padding"], name=name)
    node.output(0).get_tensor().set_names({"output"})
    return ov.Model([node], [data], name)


def main(out_dir: Path = OUT_DIR) -> list[Path]:
    import openvino as ov

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in EXAMPLES:
        path = out_dir / f"{name}.xml"
        ov.save_model(build(name), str(path), compress_to_fp16=True)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT_DIR):
        print(p)
