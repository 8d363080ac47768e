"""SliceScatter-15 on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime, bit
for bit: constant and run-time start/stop/step/axes, negative steps and axes, clamping, dynamic
dims, several element types."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

from util import bitexact_everywhere, random_data

RNG = np.random.default_rng(15)


def _numpy(data, upd, start, stop, step, axes):
    out = data.copy()
    index = [slice(None)] * data.ndim
    for b, e, s, a in zip(start, stop, step, axes):
        index[a] = slice(b, e, s)
    out[tuple(index)] = upd
    return out


CASES = [  # start, stop, step, axes on a [4, 5, 6] tensor
    ([1], [3], [1], [0]),
    ([-1, 0], [-6, 100], [-2, 3], [2, -2]),
    ([10], [-10], [-1], [1]),
    ([0, 1, 5], [4, 4, 0], [2, 1, -2], [0, 1, 2]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64, np.bool_])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_runtime_everything_dynamic(tmp_path, dtype, case):
    start, stop, step, axes = CASES[case]
    x, u = ov_parameter([None, 5, None], dtype, "x"), ov_parameter([None, None, None], dtype, "u")
    params = [ov_parameter([len(start)], np.int64, n) for n in ("b", "e", "s", "a")]
    xml = ov_save(tmp_path / "m.xml", ops.slice_scatter(x, u, *params), [x, u] + params)
    data = random_data(RNG, (4, 5, 6), dtype) if dtype != np.bool_ else RNG.random((4, 5, 6)) > 0.5
    upd_shape = data[tuple(_numpy_index(data.ndim, start, stop, step, axes))].shape
    upd = random_data(RNG, upd_shape, dtype) if dtype != np.bool_ else RNG.random(upd_shape) > 0.5
    feeds = {"x": data, "u": upd, **{n: np.array(v, np.int64) for n, v in zip("besa", (start, stop, step, axes))}}
    bitexact_everywhere(xml, feeds, _numpy(data, upd, start, stop, step, [a % 3 for a in axes]))


def _numpy_index(rank, start, stop, step, axes):
    index = [slice(None)] * rank
    for b, e, s, a in zip(start, stop, step, axes):
        index[a] = slice(b, e, s)
    return index


@pytest.mark.parametrize("case", range(len(CASES)))
def test_constant_slices_i32(tmp_path, case):
    start, stop, step, axes = CASES[case]
    data = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    upd = -1 - np.arange(data[tuple(_numpy_index(3, start, stop, step, axes))].size, dtype=np.float32)
    upd = upd.reshape(data[tuple(_numpy_index(3, start, stop, step, axes))].shape)
    x = ov_parameter([4, 5, 6], np.float32, "x")
    c = lambda v: ops.constant(np.array(v, np.int32))  # noqa: E731
    xml = ov_save(tmp_path / "m.xml", ops.slice_scatter(x, ops.constant(upd), c(start), c(stop), c(step), c(axes)), [x],
                  compress_to_fp16=True)
    bitexact_everywhere(xml, {"x": data}, _numpy(data, upd, start, stop, step, [a % 3 for a in axes]))


def test_without_axes(tmp_path):
    x, u = ov_parameter([None, None], np.float32, "x"), ov_parameter([None, None], np.float32, "u")
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    xml = ov_save(tmp_path / "m.xml", ops.slice_scatter(x, u, c([0, 1]), c([3, 5]), c([2, 2])), [x, u])
    data, upd = np.arange(15, dtype=np.float32).reshape(3, 5), np.array([[50, 60], [70, 80]], np.float32)
    want = np.array([[0, 50, 2, 60, 4], [5, 6, 7, 8, 9], [10, 70, 12, 80, 14]], np.float32)
    bitexact_everywhere(xml, {"x": data, "u": upd}, want)


def test_zero_step_refused(tmp_path):
    w = IRWriter()
    x = w.parameter([4], "f32", "x")
    c = lambda v: w.const(np.array(v, np.int64))  # noqa: E731
    out = w.layer("SliceScatter", "opset15", [x, w.const(np.zeros(2, np.float32)), c([0]), c([2]), c([0])],
                  {}, [("f32", [4])], name="ss")[0]
    w.result(out)
    with pytest.raises(InvalidLayer, match="ss.*step"):
        convert(w.save(tmp_path / "bad.xml"))
