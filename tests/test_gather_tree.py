"""GatherTree-1 on OpenVINO-written IR against the oracle (the spec's pseudocode) and the OpenVINO
runtime, bit for bit: random beams with end tokens, dynamic MAX_TIME/batch/width, lengths past
MAX_TIME and zero, integer and float element types."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import pytest

from ir2onnx.testing import ov_parameter, ov_save, run_onnx

from util import bitexact_everywhere

RNG = np.random.default_rng(1)


def _model(tmp_path, dtype):
    names = ("s", "p", "n")
    shapes = ([None, None, None], [None, None, None], [None])
    params = [ov_parameter(shape, dtype, n) for shape, n in zip(shapes, names)]
    end = ov_parameter([], dtype, "e")
    return ov_save(tmp_path / "m.xml", o1.gather_tree(*params, end), params + [end])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_random_beams(tmp_path, dtype):
    xml = _model(tmp_path, dtype)
    for time, batch, width in [(5, 3, 4), (1, 1, 1), (7, 2, 3)]:
        steps = RNG.integers(0, 4, (time, batch, width)).astype(dtype)  # end token 2 appears often
        parents = RNG.integers(0, width, (time, batch, width)).astype(dtype)
        lengths = RNG.integers(1, time + 3, batch).astype(dtype)
        feeds = {"s": steps, "p": parents, "n": lengths, "e": np.array(2, dtype)}
        bitexact_everywhere(xml, feeds)


def test_zero_length_is_all_end_tokens(tmp_path):
    """max_seq_len 0: nothing decoded, every step end_token (TensorFlow's gather_tree, which the
    spec names; the pseudocode's Python would index step -1). OpenVINO 2026.4's CPU plugin returns
    uninitialized memory for such a batch (measured), so it is compared with the oracle only."""
    xml = _model(tmp_path, np.int32)
    steps = RNG.integers(0, 4, (3, 2, 2)).astype(np.int32)
    feeds = {"s": steps, "p": np.zeros((3, 2, 2), np.int32), "n": np.array([0, 3], np.int32), "e": np.array(7, np.int32)}
    got = bitexact_everywhere(xml, feeds, openvino=False)
    assert (got[:, 0] == 7).all() and (got[:, 1] != 7).all()


def test_hand_worked_beam(tmp_path):
    """Beam 0 walks back through parents 1 then 0; after its first end token (9) all is 9."""
    xml = _model(tmp_path, np.int32)
    steps = np.array([[[1, 2]], [[3, 9]], [[5, 6]], [[7, 8]]], np.int32)  # [T=4, B=1, W=2]
    parents = np.array([[[0, 0]], [[0, 0]], [[1, 0]], [[0, 1]]], np.int32)
    feeds = {"s": steps, "p": parents, "n": np.array([4], np.int32), "e": np.array(9, np.int32)}
    # beam 0: t3 7, parent 0 -> t2 5, parent 1 -> t1 9 (end), parent 0 -> t0 1; after the end: 9
    # beam 1: t3 8, parent 1 -> t2 6, parent 0 -> t1 3, parent 0 -> t0 1
    want = np.array([[[1, 1]], [[9, 3]], [[9, 6]], [[9, 8]]], np.int32)
    bitexact_everywhere(xml, feeds, want)


def test_static_and_scan_reverses_time(tmp_path):
    """A constant end token and lengths, static dims: one Scan, and its output in time order."""
    s, p = ov_parameter([3, 1, 2], np.int64, "s"), ov_parameter([3, 1, 2], np.int64, "p")
    node = o1.gather_tree(s, p, o1.constant(np.array([3], np.int64)), o1.constant(np.int64(-1)))
    xml = ov_save(tmp_path / "m.xml", node, [s, p])
    steps = np.arange(6, dtype=np.int64).reshape(3, 1, 2)
    feeds = {"s": steps, "p": np.zeros((3, 1, 2), np.int64)}
    got = bitexact_everywhere(xml, feeds)
    np.testing.assert_array_equal(got[:, 0, 0], [0, 2, 4])
    assert run_onnx(xml, feeds)[0].shape == (3, 1, 2)
