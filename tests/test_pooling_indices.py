"""MaxPool-8/-14's indices output on OpenVINO-written IR: both outputs of onnxruntime equal the
oracle's and OpenVINO's bit for bit (ONNX's whole-tensor Indices taken modulo the element count
of the dims from ``axis`` on), and an ONNX MaxPool with Indices read by OpenVINO round-trips to
onnxruntime's own result on the original model."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset8 as ops8
import openvino.opset14 as ops14
import pytest
from onnx import TensorProto, helper

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _ir(tmp_path, shape, kernel, strides, pads_begin, pads_end, dilations, axis, rounding="floor",
        index_type="i64", dtype=np.float32, opset=8, param_shape=None):
    x = ov_parameter(param_shape or shape, dtype, "x")
    mod = ops8 if opset == 8 else ops14
    node = mod.max_pool(x, strides, dilations, pads_begin, pads_end, kernel, rounding, None, index_type, axis)
    return ov_save(tmp_path / "mp.xml", list(node.outputs()), [x])


def _data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.permutation(np.arange(int(np.prod(shape))) % 250).reshape(shape).astype(dtype)


def _both_bitexact(xml, x, openvino=True):
    got = run_onnx(xml, {"x": x})
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())
    others = [want] + ([run_openvino(xml, {"x": x})] if openvino else [])
    for other, what in zip(others, ("oracle", "openvino")):
        assert len(got) == 2
        for g, o in zip(got, other):
            assert_bitexact(g, o, what)
    return got


@pytest.mark.parametrize("axis", [0, 1, 2, -2, -3])
@pytest.mark.parametrize("opset", [8, 14])
def test_max_pool_indices_axis(tmp_path, axis, opset):
    xml = _ir(tmp_path, (2, 3, 7, 6), [3, 2], [2, 2], [1, 0], [1, 1], [1, 1], axis, opset=opset)
    values, indices = _both_bitexact(xml, _data((2, 3, 7, 6)))
    assert indices.dtype == np.int64 and indices.shape == values.shape
    limit = {0: 2 * 3 * 42, 1: 3 * 42, 2: 42}[axis % 4]
    assert indices.max() < limit and (axis % 4 == 2 or indices.max() >= 42)


@pytest.mark.parametrize("rounding", ["ceil", "ceil_torch"])
def test_max_pool_indices_ceil_dilated_i32(tmp_path, rounding):
    xml = _ir(tmp_path, (1, 2, 9, 8), [2, 3], [2, 2], [0, 1], [0, 1], [2, 1], 2, rounding, "i32", opset=14)
    values, indices = _both_bitexact(xml, _data((1, 2, 9, 8), seed=1))
    assert indices.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint8])
def test_max_pool_indices_types(tmp_path, dtype):
    """Integer data with repeated values: ties resolve to the first index in both runtimes."""
    xml = _ir(tmp_path, (1, 2, 6, 6), [2, 2], [1, 1], [0, 0], [0, 0], [1, 1], 1, dtype=dtype)
    x = _data((1, 2, 6, 6), dtype, seed=2)
    if np.dtype(dtype).kind != "f":
        x = (x % 4).astype(dtype)  # many ties
    _both_bitexact(xml, x, openvino=dtype != np.float64)


def test_max_pool_indices_dynamic_dims_1d_3d(tmp_path):
    xml = _ir(tmp_path, (2, 3, 10), [3], [2], [1], [1], [1], 1, param_shape=(None, 3, None))
    for length in (10, 7):
        _both_bitexact(xml, _data((2, 3, length), seed=length))
    assert "ReduceProd" in [n.op_type for n in convert(xml).graph.node]
    (tmp_path / "d3").mkdir()
    xml3 = _ir(tmp_path / "d3", (1, 2, 4, 5, 6), [2, 2, 2], [2, 2, 2], [0] * 3, [0] * 3, [1] * 3, 2)
    _both_bitexact(xml3, _data((1, 2, 4, 5, 6), seed=3))


def test_max_pool_indices_unused_and_refused(tmp_path):
    x = ov_parameter((1, 1, 5), np.float32, "x")
    node = ops8.max_pool(x, [1], [1], [2], [2], [2], "floor", None, "i64", 0)
    values_only = ov_save(tmp_path / "v.xml", node.output(0), [x])
    assert [n.op_type for n in convert(values_only).graph.node].count("MaxPool") == 1
    both = ov_save(tmp_path / "b.xml", list(node.outputs()), [x])  # pads >= kernel: the Pad form
    with pytest.raises(UnsupportedLayer, match="indices output with pads computed at run time or past"):
        convert(both)


def test_max_pool_indices_onnx_round_trip(tmp_path):
    """ONNX MaxPool with Indices (the framework: onnxruntime on that model) read by OpenVINO,
    saved and converted back: the same values and indices bit for bit."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 9, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    x = _data((2, 3, 9, 8), seed=4)
    framework = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    xml = tmp_path / "mp.xml"
    ov.save_model(ov.Core().read_model(model.SerializeToString(), b""), str(xml))
    got = _both_bitexact(xml, x)
    for g, f in zip(got, framework):
        assert_bitexact(g, f, "onnxruntime on the original ONNX model")
