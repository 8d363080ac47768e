"""SegmentMax-16 on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime, bit for
bit: both fill modes, run-time segment ids and counts, dynamic dims, several element types, NaN and
-inf as OpenVINO's reference counts them, ids past num_segments, and the opset it needs."""
from __future__ import annotations

import numpy as np
import openvino.opset16 as o16
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.testing import ov_parameter, ov_save, run_openvino

from util import bitexact_everywhere, random_data

RNG = np.random.default_rng(16)


def _numpy(data, ids, num, fill):
    lowest = np.iinfo(data.dtype).min if data.dtype.kind in "iu" else np.finfo(data.dtype).min
    out = np.full((num,) + data.shape[1:], 0 if fill == "zero" else lowest, data.dtype)
    for k in range(num):
        rows = data[np.asarray(ids) == k]
        if len(rows):
            out[k] = rows.max(axis=0)
    return out


@pytest.mark.parametrize("fill", ["zero", "lowest"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int32, np.int64])
def test_runtime_ids_and_count(tmp_path, fill, dtype):
    """OpenVINO 2026.4's CPU plugin fills empty f16 segments with -inf for "lowest" (the f32
    lowest value converted), not f16's -65504, and i64 ones with the i32 minimum (it computes i64
    in 32 bits): those two are compared with the oracle and numpy only."""
    x, s, n = ov_parameter([None, 3], dtype, "x"), ov_parameter([None], np.int32, "s"), ov_parameter([], np.int64, "n")
    xml = ov_save(tmp_path / "m.xml", o16.segment_max(x, s, n, fill), [x, s, n])
    for ids, num in [([0, 0, 2, 2, 2, 5], 7), ([1], 2), ([0, 1, 2, 3], 4)]:
        data = random_data(RNG, (len(ids), 3), dtype) - (50 if np.dtype(dtype).kind == "i" else 0)
        data = data.astype(dtype)
        feeds = {"x": data, "s": np.array(ids, np.int32), "n": np.array(num, np.int64)}
        ov_deviates = fill == "lowest" and dtype in (np.float16, np.int64) and len(set(ids)) < num
        bitexact_everywhere(xml, feeds, _numpy(data, ids, num, fill), opset=18, openvino=not ov_deviates)
        if ov_deviates and dtype == np.float16:
            empty = min(set(range(num)) - set(ids))
            assert np.isneginf(run_openvino(xml, feeds)[0][empty]).all()  # the measured deviation


@pytest.mark.parametrize("fill", ["zero", "lowest"])
def test_without_num_segments_3d(tmp_path, fill):
    x, s = ov_parameter([None, 2, 2], np.float32, "x"), ov_parameter([None], np.int64, "s")
    xml = ov_save(tmp_path / "m.xml", o16.segment_max(x, s, None, fill), [x, s])
    ids = [0, 0, 3, 3, 3]
    data = RNG.standard_normal((5, 2, 2)).astype(np.float32)
    bitexact_everywhere(xml, {"x": data, "s": np.array(ids, np.int64)}, _numpy(data, ids, 4, fill), opset=18)


def test_nan_skipped_and_minus_inf_lowest(tmp_path):
    """The spec is silent; OpenVINO's reference and CPU plugin start at the lowest value and keep
    it unless a value is greater: NaN is skipped, an all -inf (or all NaN) segment gives lowest."""
    x = ov_parameter([6], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", o16.segment_max(x, o16.constant(np.array([0, 0, 1, 1, 2, 3])), o16.constant(np.int64(5)),
                                                      "zero"), [x])
    nan, inf, low = np.nan, np.inf, np.finfo(np.float32).min
    data = np.array([nan, 1, -inf, -inf, nan, inf], np.float32)
    bitexact_everywhere(xml, {"x": data}, np.array([1, low, low, inf, 0], np.float32), opset=18)


def test_ids_past_num_segments_are_ignored(tmp_path):
    x = ov_parameter([5], np.int32, "x")
    node = o16.segment_max(x, o16.constant(np.array([0, 1, 1, 2, 4])), o16.constant(np.int64(2)), "zero")
    xml = ov_save(tmp_path / "m.xml", node, [x])
    bitexact_everywhere(xml, {"x": np.array([4, 1, 3, 9, 8], np.int32)}, np.array([4, 3], np.int32), opset=18)


def test_needs_opset_18(tmp_path):
    x = ov_parameter([4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", o16.segment_max(x, o16.constant(np.array([0, 0, 1, 1])), None, "zero"), [x])
    with pytest.raises(UnsupportedLayer, match="opset >= 18"):
        convert(xml, opset=17)
