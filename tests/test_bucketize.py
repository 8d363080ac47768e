"""Bucketize-3 and SearchSorted-15 on OpenVINO-written IR against the oracle (a binary search),
numpy and the OpenVINO runtime, bit for bit: values on and between the boundaries, both bounds,
run-time boundaries and sequences, dynamic dims, mixed element types; NaN values against torch
(samples/make_bucketize.py: torch.bucketize and torch.searchsorted through convert_model)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere

RNG = np.random.default_rng(3)
SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "bucketize"


@pytest.mark.parametrize("right_bound", [True, False])
@pytest.mark.parametrize("dtype, btype", [(np.float32, np.float32), (np.float16, np.float16), (np.int32, np.int32),
                                          (np.int64, np.int64), (np.uint8, np.int32), (np.int32, np.float32),
                                          (np.float32, np.int64)])
def test_bucketize(tmp_path, right_bound, dtype, btype):
    x, b = ov_parameter([None, None], dtype, "x"), ov_parameter([None], btype, "b")
    xml = ov_save(tmp_path / "m.xml", ops.bucketize(x, b, "i32", right_bound), [x, b])
    bounds = np.array([1, 3, 4, 8, 20], btype)
    data = np.concatenate([bounds.astype(dtype), RNG.integers(0, 25, 7).astype(dtype)]).reshape(3, 4)
    if np.dtype(dtype).kind == "f":
        data[1] += np.asarray(0.5, dtype)
    want = np.searchsorted(bounds.astype(np.float64), data.astype(np.float64), side="left" if right_bound else "right")
    bitexact_everywhere(xml, {"x": data, "b": bounds}, want.astype(np.int32))


@pytest.mark.parametrize("right_mode", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float16])
def test_search_sorted(tmp_path, right_mode, dtype):
    s, v = ov_parameter([None, None, None], dtype, "s"), ov_parameter([None, None, None], dtype, "v")
    xml = ov_save(tmp_path / "m.xml", ops.search_sorted(s, v, right_mode), [s, v])
    seq = np.sort(RNG.integers(-6, 7, (2, 3, 5)), axis=-1).astype(dtype)
    values = np.concatenate([seq[..., :2], RNG.integers(-8, 9, (2, 3, 2))], axis=-1).astype(dtype)
    want = np.stack([np.stack([np.searchsorted(seq[i, j], values[i, j], side="right" if right_mode else "left")
                               for j in range(3)]) for i in range(2)])
    bitexact_everywhere(xml, {"s": seq, "v": values}, want.astype(np.int64))


def test_search_sorted_one_row_for_all(tmp_path):
    """A 1-D sequence serves values of any rank (torch's searchsorted allows it)."""
    s, v = ov_parameter([None], np.float32, "s"), ov_parameter([None, None], np.float32, "v")
    xml = ov_save(tmp_path / "m.xml", ops.search_sorted(s, v, False), [s, v])
    seq, values = np.array([0, 1, 2, 3], np.float32), np.array([[0.5, 3], [-1, 9]], np.float32)
    got = run_onnx(xml, {"s": seq, "v": values})[0]
    np.testing.assert_array_equal(got, [[1, 3], [0, 4]])


@pytest.mark.parametrize("stem", ["bucketize_left", "bucketize_right", "searchsorted_left", "searchsorted_right"])
def test_torch_round_trip_with_nan(stem):
    """torch puts NaN after every number (index n); OpenVINO 2026.4's runtime answers 0 there
    (except Bucketize with the left bound), measured; ir2onnx follows torch."""
    xml = SAMPLES / f"{stem}.xml"
    names = ["x", "boundaries"] if stem.startswith("bucketize") else ["sequence", "values"]
    searched, sorted_row = (names[0], names[1]) if stem.startswith("bucketize") else (names[1], names[0])
    feeds = {n: np.load(SAMPLES / f"{stem}_{n}.npy") for n in names}
    np.testing.assert_array_equal(run_onnx(xml, feeds)[0], np.load(SAMPLES / f"{stem}_y.npy"))
    nan = np.load(SAMPLES / f"{stem}_nan.npz")
    feeds = {n: nan[n] for n in names}
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_array_equal(got, nan["y"])
    assert (got[np.isnan(feeds[searched])] == feeds[sorted_row].shape[-1]).all()  # NaN: the last index
    if stem != "bucketize_right":
        assert not np.array_equal(run_openvino(xml, feeds)[0], nan["y"])  # the measured deviation
