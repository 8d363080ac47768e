"""TopK-11 on OpenVINO-written IR against the oracle and the OpenVINO runtime, bit for bit
(values and indices), for both modes, the three sort modes and both index types."""
from __future__ import annotations

import numpy as np
import openvino.opset11 as o11
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _ir(tmp_path, shape, k, axis, mode, sort, itype="i32", dtype=np.float32, stable=False):
    x = ov_parameter(shape, dtype, "x")
    t = o11.topk(x, ops.constant(np.int64(k)), axis, mode, sort, itype, stable=stable)
    t.output(0).get_tensor().set_names({"values"})
    t.output(1).get_tensor().set_names({"indices"})
    return ov_save(tmp_path / "t.xml", [t.output(0), t.output(1)], [x])


def _check(xml, x, sort):
    got = run_onnx(xml, {"x": x})
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())
    ov_out = run_openvino(xml, {"x": x})
    for g, w, o, what in zip(got, want, ov_out, ("values", "indices")):
        assert_bitexact(g, w, f"oracle {what}")
        if sort != "none":  # 'none' leaves the order to the implementation
            assert_bitexact(g, o, f"openvino {what}")
    return got


def _data(shape, dtype=np.float32):
    rng = np.random.default_rng(11)
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype)  # no ties


@pytest.mark.parametrize("sort", ["value", "index", "none"])
@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("axis,k", [(1, 3), (-1, 2), (0, 1)])
def test_modes(tmp_path, mode, sort, axis, k):
    xml = _ir(tmp_path, [3, 5, 4], k, axis, mode, sort)
    x = _data((3, 5, 4))
    values, indices = _check(xml, x, sort)
    assert indices.dtype == np.int32
    ref = np.take_along_axis(x, indices.astype(np.int64), axis=axis)
    assert_bitexact(values, ref)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16])
def test_types_and_i64_indices(tmp_path, dtype):
    xml = _ir(tmp_path, [2, 6], 3, 1, "max", "value", "i64", dtype)
    values, indices = _check(xml, _data((2, 6), dtype), "value")
    assert indices.dtype == np.int64 and values.dtype == dtype


def test_stable_ties(tmp_path):
    """Equal values come out in index order (stable=true)."""
    xml = _ir(tmp_path, [1, 6], 4, 1, "max", "value", stable=True)
    x = np.array([[1, 3, 3, 0, 3, 1]], np.float32)
    values, indices = _check(xml, x, "value")
    assert indices.tolist() == [[1, 2, 4, 0]]


def test_dynamic_dim(tmp_path):
    x = ov_parameter([None, 5], np.float32, "x")
    t = o11.topk(x, ops.constant(np.int64(2)), 1, "min", "index", "i32")
    xml = ov_save(tmp_path / "t.xml", [t.output(0), t.output(1)], [x])
    _check(xml, _data((3, 5)), "index")


def test_k_too_large(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    outs = w.layer("TopK", "opset11", [x, w.const(np.array(4, np.int64))],
                   {"axis": 1, "mode": "max", "sort": "value"}, [("f32", [2, 4]), ("i32", [2, 4])], name="tk")
    w.result(outs[0])
    w.result(outs[1])
    with pytest.raises(InvalidLayer, match="tk.*k=4 exceeds"):
        convert(w.save(tmp_path / "bad.xml"))
