"""Regenerate samples/batch_to_space/: the two worked examples of ../shared/specs/BatchToSpace.md
as IR files written by OpenVINO, with their input and expected output.

    python samples/make_batch_to_space.py

For each example NAME: NAME.xml + NAME.bin (data -> BatchToSpace-2 with i64 Const block/crops ->
y), NAME.data.npy (the input "data", f32 0, 1, 2 ...) and NAME.expected.npy (the output, from the
spec's element-wise definition; OpenVINO's output is checked to be the same, bit for bit).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

OUT = Path(__file__).resolve().parent / "batch_to_space"

EXAMPLES = {  # name: data shape, block_shape, crops_begin, crops_end, output shape (from the spec)
    "example1": ([10, 2], [1, 5], [0, 2], [0, 0], (2, 8)),
    "example2": ([48, 3, 3, 1, 3], [1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], (2, 6, 10, 3, 3)),
}


def expected_output(x: np.ndarray, block, cb, ce) -> np.ndarray:
    """The spec's element-wise view, written out independently of ir2onnx."""
    k, bp = x.ndim - 1, x.shape[0] // int(np.prod(block))
    out = np.empty([bp] + [x.shape[i] * block[i] - cb[i] - ce[i] for i in range(1, k + 1)], x.dtype)
    for index in np.ndindex(*out.shape):
        b, src = 0, []
        for i in range(1, k + 1):
            z = index[i] + cb[i]
            b = b * block[i] + z % block[i]
            src.append(z // block[i])
        out[index] = x[(b * bp + index[0], *src)]
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    core = ov.Core()
    for name, (shape, block, cb, ce, out_shape) in EXAMPLES.items():
        param = ops.parameter(shape, ov.Type.f32, name="data")
        node = ops.batch_to_space(param, *(np.array(v, np.int64) for v in (block, cb, ce)))
        node.output(0).get_tensor().set_names({"y"})
        model = ov.Model([node], [param], name=f"batch_to_space_{name}")
        ov.save_model(model, OUT / f"{name}.xml", compress_to_fp16=False)
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        y = expected_output(x, block, cb, ce)
        assert y.shape == out_shape, (name, y.shape)
        got = core.compile_model(core.read_model(OUT / f"{name}.xml"), "CPU")([x])[0]
        assert np.asarray(got).tobytes() == y.tobytes(), f"{name}: OpenVINO disagrees"
        np.save(OUT / f"{name}.data.npy", x)
        np.save(OUT / f"{name}.expected.npy", y)
        print(f"{name}: data {shape} -> {list(out_shape)}")


if __name__ == "__main__":
    main()
