"""ReverseSequence-1 on OpenVINO-written IR: onnxruntime, the oracle, OpenVINO and numpy agree bit
for bit over axis pairs (Transposes around ONNX's batch/time axes 0 and 1), element and length
types, run-time and constant lengths, dynamic dims."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

from util import bitexact_everywhere, iota, node_types


def _numpy(x, lens, batch, seq):
    out = np.moveaxis(x, (batch, seq), (0, 1)).copy()
    for b, n in enumerate(lens):
        n = max(int(n), 1)
        out[b, :n] = out[b, :n][::-1]
    return np.moveaxis(out, (0, 1), (batch % x.ndim, seq % x.ndim))


def _ir(tmp_path, shape, batch, seq, dtype=np.float32, len_type=np.int32, const_lens=None):
    x = ov_parameter(shape, dtype, "x")
    if const_lens is None:
        lens = ov_parameter((shape[batch] if shape[batch] is not None else None,), len_type, "lens")
        params = [x, lens]
    else:
        lens, params = ops.constant(np.asarray(const_lens, len_type)), [x]
    return ov_save(tmp_path / "rs.xml", ops.reverse_sequence(x, lens, batch, seq), params)


@pytest.mark.parametrize("batch, seq", [(0, 1), (1, 0), (2, 1), (0, 2), (-1, -3), (3, 1), (1, 3)])
def test_reverse_sequence_axes(tmp_path, batch, seq):
    shape = (3, 4, 3, 4)
    xml = _ir(tmp_path, shape, batch, seq)
    x = iota(shape)
    lens = np.minimum([4, 0, 2, 3][:shape[batch]], shape[seq]).astype(np.int32)
    got = bitexact_everywhere(xml, {"x": x, "lens": lens}, _numpy(x, lens, batch, seq))
    assert not np.array_equal(got, x)
    ops_ = node_types(convert(xml))
    assert ops_.count("Transpose") == (0 if {batch % 4, seq % 4} == {0, 1} else 2)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64,
                                   np.uint64, bool])
def test_reverse_sequence_types(tmp_path, dtype):
    xml = _ir(tmp_path, (None, 5), 0, 1, dtype=dtype, len_type=np.int64)
    x = (iota((3, 5)) % 7 > 2) if dtype is bool else iota((3, 5), dtype)
    lens = np.array([5, 2, 1], np.int64)
    bitexact_everywhere(xml, {"x": x, "lens": lens}, _numpy(x, lens, 0, 1),
                        openvino=np.dtype(dtype).itemsize < 8 or dtype == np.float64)


def test_reverse_sequence_f16_nan_bits_and_float_lengths(tmp_path):
    """f16 signalling NaN payloads move unchanged (no OpenVINO: it quiets them); f32 lengths
    truncate to integers, as OpenVINO's reference casts them."""
    xml = _ir(tmp_path, (2, 4), 0, 1, dtype=np.float16, len_type=np.float32)
    x = np.arange(8, dtype=np.float16).reshape(2, 4)
    x.view(np.uint16)[0, 0] = 0x7D01
    lens = np.array([3.7, 2.0], np.float32)
    got = bitexact_everywhere(xml, {"x": x, "lens": lens}, _numpy(x, [3, 2], 0, 1), openvino=False)
    assert got.view(np.uint16)[0, 2] == 0x7D01


def test_reverse_sequence_constant_lengths_dynamic_dims(tmp_path):
    xml = _ir(tmp_path, (None, 3, None), 1, 2, const_lens=[2, 0, 4])
    x = iota((2, 3, 4))
    bitexact_everywhere(xml, {"x": x}, _numpy(x, [2, 0, 4], 1, 2))


def test_reverse_sequence_errors(tmp_path):
    def model(shape, batch, seq, len_type="i32", dtype="f32"):
        w = IRWriter("rs")
        x = w.parameter(shape, dtype, "x")
        lens = w.parameter((shape[0],), len_type, "lens")
        y = w.layer("ReverseSequence", "opset1", [x, lens], {"batch_axis": batch, "seq_axis": seq},
                    [(dtype, shape)])[0]
        w.result(y)
        return w.save(tmp_path / "rs.xml")
    with pytest.raises(InvalidLayer, match="same axis"):
        convert(model((2, 3), 0, -2))
    with pytest.raises(InvalidLayer, match="seq_axis 2 is out of range"):
        convert(model((2, 3), 0, 2))
    with pytest.raises(InvalidLayer, match="rank >= 2"):
        convert(model((2,), 0, 0))
    with pytest.raises(UnsupportedLayer, match="seq_lengths of type boolean"):
        convert(model((2, 3), 0, 1, "boolean"))
    with pytest.raises(UnsupportedLayer, match="ReverseSequence on bf16"):
        convert(model((2, 3), 0, 1, dtype="bf16"))
