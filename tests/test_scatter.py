"""GatherND-8 and ScatterNDUpdate-3 (IR version opset4) on OpenVINO-written IR against the oracle, numpy and the
OpenVINO runtime, bit for bit (data movement)."""
from __future__ import annotations

import numpy as np
import openvino.opset4 as o4
import openvino.opset8 as o8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _check(xml, feeds, expected=None):
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")
    assert_bitexact(got, run_openvino(xml, feeds)[0], "openvino")
    if expected is not None:
        assert_bitexact(got, expected, "numpy")
    return got


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather_nd_spec_example(tmp_path, itype):
    """GatherND-8: data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]] -> [1, 3]."""
    x = ov_parameter([2, 2], np.int32, "x")
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, ops.constant(np.array([[0, 0], [1, 0]], itype))), [x])
    _check(xml, {"x": np.array([[1, 2], [3, 4]], np.int32)}, np.array([1, 3], np.int32))


def test_gather_nd_slices_negative(tmp_path):
    x = ov_parameter([3, 4, 2], np.float32, "x")
    idx = np.array([[[2], [-1]], [[0], [1]]], np.int64)  # [2, 2, 1]: slices [4, 2]
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, ops.constant(idx)), [x])
    data = np.random.default_rng(1).standard_normal((3, 4, 2)).astype(np.float32)
    _check(xml, {"x": data}, data[idx[..., 0] % 3])


@pytest.mark.parametrize("bd", [1, 2])
def test_gather_nd_batch_dims(tmp_path, bd):
    x = ov_parameter([2, 3, 4, 5], np.float32, "x")
    rng = np.random.default_rng(9)
    shape = [2, 3][:bd] + [2, 1]
    idx = rng.integers(0, 3 if bd == 1 else 4, shape).astype(np.int32)
    i = ov_parameter(shape, np.int32, "i")
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, i, bd), [x, i])
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = _check(xml, {"x": data, "i": idx})
    assert got.shape == tuple(shape[:-1]) + data.shape[bd + 1:]


def test_scatter_nd_update_spec_example(tmp_path):
    """ScatterNDUpdate-3: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]."""
    x = ov_parameter([8], np.int32, "x")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[4], [3], [1], [7]], np.int64)),
                                ops.constant(np.array([9, 10, 11, 12], np.int32)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    _check(xml, {"x": np.arange(1, 9, dtype=np.int32)}, np.array([1, 11, 3, 10, 9, 6, 7, 12], np.int32))


def test_scatter_nd_update_slices_runtime_updates(tmp_path):
    x, u = ov_parameter([4, 3, 2], np.float32, "x"), ov_parameter([2, 3, 2], np.float32, "u")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[2], [0]], np.int32)), u)
    xml = ov_save(tmp_path / "m.xml", node, [x, u])
    rng = np.random.default_rng(7)
    data, upd = rng.standard_normal((4, 3, 2)).astype(np.float32), rng.standard_normal((2, 3, 2)).astype(np.float32)
    want = data.copy()
    want[[2, 0]] = upd
    _check(xml, {"x": data, "u": upd}, want)


def test_scatter_nd_update_bad_updates(tmp_path):
    w = IRWriter()
    x = w.parameter([4, 3], "f32", "x")
    out = w.layer("ScatterNDUpdate", "opset4", [x, w.const(np.array([[1]], np.int64)),
                                                w.const(np.zeros((1, 3, 1), np.float32))],
                  {}, [("f32", [4, 3])], name="snu")[0]
    w.result(out)
    with pytest.raises(InvalidLayer, match="snu.*updates"):
        convert(w.save(tmp_path / "bad.xml"))


def test_scatter_nd_update_negative_index(tmp_path):
    x = ov_parameter([4], np.float32, "x")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[-1]], np.int64)), ops.constant(np.array([5], np.float32)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    _check(xml, {"x": np.zeros(4, np.float32)}, np.array([0, 0, 0, 5], np.float32))
