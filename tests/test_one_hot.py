"""OneHot-1/-16 on OpenVINO-written IR: onnxruntime, the oracle, OpenVINO and numpy agree bit for
bit over index and value types, axes, run-time depth/on/off values and both negative-index modes."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset15 as ops
import openvino.opset16 as ops16
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

from util import bitexact_everywhere

INDICES = np.array([[0, 2, -1, 4], [-4, 3, 1, -2]], np.int64)  # depth 4: -1, -2, -4 wrap; none is 4


def _numpy(indices, depth, on, off, axis, normalize=False):
    idx = indices.astype(np.int64)
    if normalize:
        idx = np.where((idx < 0) & (idx >= -depth), idx + depth, idx)
    hot = np.moveaxis(idx[..., None] == np.arange(depth), -1, axis)
    return np.where(hot, on, off)


def _ir(tmp_path, version, axis, depth=4, on=7, off=-2, dtype=np.float32, index_type=np.int64,
        shape=(None, 4), mode=None, compress=False):
    x = ov_parameter(shape, index_type, "x")
    mod = ops16 if version == 16 else ops1
    kw = {"negative_indices_mode": mode} if mode else {}
    y = mod.one_hot(x, ops.constant(np.int64(depth)), ops.constant(np.asarray(on, dtype)),
                    ops.constant(np.asarray(off, dtype)), axis, **kw)
    return ov_save(tmp_path / "oh.xml", y, [x], compress_to_fp16=compress)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("version, mode", [(1, None), (16, "ignore_negative"), (16, "normalize")])
def test_one_hot_axes_and_modes(tmp_path, axis, version, mode):
    xml = _ir(tmp_path, version, axis, mode=mode)
    want = _numpy(INDICES, 4, 7, -2, axis, mode == "normalize").astype(np.float32)
    got = bitexact_everywhere(xml, {"x": INDICES}, want)
    assert (got == 7).sum() == (7 if mode == "normalize" else 4)  # -1, -2, -4 wrap only in normalize


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64, bool])
def test_one_hot_value_types(tmp_path, dtype):
    on, off = (True, False) if dtype is bool else (3, 1)
    xml = _ir(tmp_path, 16, -1, on=on, off=off, dtype=dtype, mode="normalize")
    got = bitexact_everywhere(xml, {"x": INDICES}, _numpy(INDICES, 4, on, off, -1, True).astype(dtype))
    assert got.dtype == np.dtype(dtype)


def test_one_hot_large_u64_and_bf16_values(tmp_path):
    """u64 values above 2^63 and bf16 values pass through the wider Where unchanged (no OpenVINO:
    its CPU plugin computes u64 in 32 bits)."""
    big = np.uint64(2 ** 64 - 3)
    xml = _ir(tmp_path, 1, 1, on=big, off=np.uint64(2 ** 63 + 1), dtype=np.uint64)
    bitexact_everywhere(xml, {"x": INDICES}, _numpy(INDICES, 4, big, np.uint64(2 ** 63 + 1), 1).astype(np.uint64),
                        openvino=False)
    w = IRWriter("bf16")
    x = w.parameter((2, 4), "i64", "x")
    y = w.layer("OneHot", "opset1", [x, w.const(np.array(4, np.int64)), w.const(np.array(1.5, np.float32), "bf16"),
                                     w.const(np.array(-3.0, np.float32), "bf16")], {"axis": -1},
                [("bf16", (2, 4, 4))])[0]
    y = w.layer("Convert", "opset1", [y], {"destination_type": "f32"}, [("f32", (2, 4, 4))], out_names=["y"])[0]
    w.result(y, "y")
    got = bitexact_everywhere(w.save(tmp_path / "bf16.xml"), {"x": INDICES}, openvino=False)
    assert got.tolist() == _numpy(INDICES, 4, 1.5, -3.0, -1).tolist()


@pytest.mark.parametrize("index_type", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.uint64])
def test_one_hot_index_types(tmp_path, index_type):
    """(OpenVINO's CPU plugin refuses i8/u8 indices: "Only I32 is supported".)"""
    idx = np.array([[0, 2, 1, 5], [3, 3, 1, 0]], index_type)
    xml = _ir(tmp_path, 16, 1, index_type=index_type, mode="normalize")
    bitexact_everywhere(xml, {"x": idx}, _numpy(idx, 4, 7, -2, 1).astype(np.float32),
                        openvino=np.dtype(index_type).itemsize > 1)


def test_one_hot_run_time_depth_and_values(tmp_path):
    x = ov_parameter((2, 4), np.int32, "x")
    depth = ov_parameter((), np.int32, "depth")
    on, off = ov_parameter((), np.float32, "on"), ov_parameter((), np.float32, "off")
    xml = ov_save(tmp_path / "oh.xml", ops16.one_hot(x, depth, on, off, 1, negative_indices_mode="normalize"),
                  [x, depth, on, off])
    idx = INDICES.astype(np.int32)
    for d in (4, 6, 2):
        feeds = {"x": idx, "depth": np.array(d, np.int32), "on": np.array(9, np.float32), "off": np.array(0.5, np.float32)}
        got = bitexact_everywhere(xml, feeds, _numpy(idx, d, 9, 0.5, 1, True).astype(np.float32))
        assert got.shape == (2, d, 4)


def test_one_hot_f16_constant_values_and_scalar_indices(tmp_path):
    """on/off values as f16 Consts + Convert to f32 (the form of OpenVINO's f16 compression), and
    0-D indices."""
    x = ov_parameter((None, 4), np.int64, "x")
    on, off = (ops.convert(ops.constant(np.float16(v)), "f32") for v in (0.1, 0.3))
    xml = ov_save(tmp_path / "oh.xml", ops1.one_hot(x, ops.constant(np.int64(4)), on, off, 1), [x])
    want = np.where(_numpy(INDICES, 4, 1, 0, 1) == 1, np.float16(0.1), np.float16(0.3)).astype(np.float32)
    bitexact_everywhere(xml, {"x": INDICES}, want)
    scalar = _ir(tmp_path, 1, 0, shape=())
    bitexact_everywhere(scalar, {"x": np.array(2, np.int64)}, np.array([-2, -2, 7, -2], np.float32))


def test_one_hot_errors(tmp_path):
    def model(depth, on="f32", off="f32"):
        w = IRWriter("oh")
        x = w.parameter((3,), "i64", "x")
        y = w.layer("OneHot", "opset1", [x, w.const(np.array(depth, np.int64)), w.const(np.array(1, np.float32), on),
                                         w.const(np.array(0, np.float32), off)], {"axis": 0},
                    [(on, (max(depth, 0), 3))])[0]
        w.result(y)
        return w.save(tmp_path / "oh.xml")
    with pytest.raises(InvalidLayer, match="depth must be >= 0"):
        convert(model(-1))
    with pytest.raises(InvalidLayer, match="differ in type"):  # as written (f32 compute would unify)
        convert(model(3, off="f16"), precision="ir")
    w = IRWriter("ohf")
    x = w.parameter((3,), "f32", "x")
    y = w.layer("OneHot", "opset1", [x, w.const(np.array(3, np.int64)), w.const(np.array(1, np.float32)),
                                     w.const(np.array(0, np.float32))], {"axis": 0}, [("f32", (3, 3))])[0]
    w.result(y)
    with pytest.raises(UnsupportedLayer, match="indices of type f32"):
        convert(w.save(tmp_path / "ohf.xml"))
