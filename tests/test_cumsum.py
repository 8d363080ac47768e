"""CumSum-3 on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime: integers
bit for bit, f32 within rtol 1e-5, atol 1e-5, f16 within 2e-3."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _ref(x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    c = np.cumsum(y, axis=axis, dtype=x.dtype)
    if exclusive:
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis)), np.take(c, range(x.shape[axis] - 1), axis)], axis)
    return np.flip(c, axis) if reverse else c


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float16])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum(tmp_path, axis, exclusive, reverse, dtype):
    x = ov_parameter([2, 3, 4], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", ops.cumsum(x, ops.constant(np.int64(axis)), exclusive, reverse), [x])
    data = np.random.default_rng(2).integers(-9, 10, (2, 3, 4)).astype(dtype)
    got = run_onnx(xml, {"x": data})[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values()))
    for other in (want, run_openvino(xml, {"x": data})[0], _ref(data, axis, exclusive, reverse)):
        assert_bitexact(got, other)  # small integers: exact in every type


def test_float_values(tmp_path):
    x = ov_parameter([3, 5], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.cumsum(x, ops.constant(np.int32(0))), [x])
    data = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    got = run_onnx(xml, {"x": data})[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=1e-5, atol=1e-5)


def test_default_axis(tmp_path):
    """The spec's optional axis (0 when absent); OpenVINO 2026.4 itself cannot read such a layer."""
    w = IRWriter()
    x = w.parameter([3, 2], "i32", "x")
    w.result(w.layer("CumSum", "opset3", [x], {}, [("i32", [3, 2])], out_names=["y"])[0])
    xml = w.save(tmp_path / "m.xml")
    data = np.arange(6, dtype=np.int32).reshape(3, 2)
    assert_bitexact(run_onnx(xml, {"x": data})[0], np.cumsum(data, 0, dtype=np.int32))
    assert_bitexact(next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), np.cumsum(data, 0, dtype=np.int32))


def test_axis_out_of_range(tmp_path):
    w = IRWriter()
    x = w.parameter([3, 2], "f32", "x")
    w.result(w.layer("CumSum", "opset3", [x, w.const(np.array(2, np.int64))], {}, [("f32", [3, 2])], name="cs")[0])
    with pytest.raises(InvalidLayer, match="cs.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("etype", [np.int32, np.int64])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_run_time_axis(tmp_path, etype, exclusive, reverse):
    """The axis fed at run time (negative ones too), on dynamic dims of two sizes."""
    x = ov_parameter([None, None, 3], np.float32, "x")
    a = ov_parameter([], etype, "a")
    xml = ov_save(tmp_path / "c.xml", ops.cumsum(x, a, exclusive, reverse), [x, a])
    for shape in ((2, 4, 3), (3, 1, 3)):
        data = np.random.default_rng(sum(shape)).integers(-9, 9, shape).astype(np.float32)
        for axis in (0, 1, -1, -3):
            feeds = {"x": data, "a": np.array(axis, etype)}
            got = run_onnx(xml, feeds)[0]
            want = np.flip(data, axis) if reverse else data
            want = np.cumsum(want, axis=axis) - (want if exclusive else 0)
            want = np.flip(want, axis) if reverse else want
            assert_bitexact(got, want.astype(np.float32), f"numpy axis {axis}")
            assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")
            assert_bitexact(got, run_openvino(xml, feeds)[0], "OpenVINO")
