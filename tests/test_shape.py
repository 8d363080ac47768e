"""ShapeOf, Concat, Squeeze, Unsqueeze: alone and as the shape subgraphs OpenVINO writes (Gather
is tested in test_indexing.py).
Data movement, so onnxruntime, OpenVINO and the oracle must agree bit for bit."""
from __future__ import annotations


import numpy as np
import onnx
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.runtime import sessions as runtime
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, run_onnx, run_openvino

from util import all_outputs_bitexact, const, iota, node_types, save_model


_param = ov_parameter


# -- ShapeOf -------------------------------------------------------------------------------------
@pytest.mark.parametrize("version,out_type", [("opset1", "i64"), ("opset3", "i64"), ("opset3", "i32")])
def test_shape_of_static_folds(tmp_path, version, out_type):
    x = _param([2, 0, 5])
    y = ops1.shape_of(x) if version == "opset1" else ops.shape_of(x, out_type)
    xml = save_model(tmp_path, [y], [x])
    assert f'type="ShapeOf" version="{version}"' in xml.read_text()
    got = all_outputs_bitexact(xml, {"x": np.zeros((2, 0, 5), np.float32)})[0]
    assert got.dtype == (np.int32 if out_type == "i32" else np.int64)
    assert "Shape" not in node_types(ir2onnx.convert(xml))


@pytest.mark.parametrize("out_type", ["i64", "i32"])
def test_shape_of_dynamic(tmp_path, out_type):
    x = _param([None, 3, None], np.uint8)
    xml = save_model(tmp_path, [ops.shape_of(x, out_type)], [x])
    for shape in [(1, 3, 2), (7, 3, 0)]:
        assert all_outputs_bitexact(xml, {"x": np.zeros(shape, np.uint8)})[0].tolist() == list(shape)


# -- Concat ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(tmp_path, axis):
    a, b = _param([2, 3], np.int32, "a"), _param([2, 3], np.int32, "b")
    c = ops.constant(np.full((2, 3), 7, np.int32))
    xml = save_model(tmp_path, [ops.concat([a, c, b], axis)], [a, b])
    all_outputs_bitexact(xml, {"a": iota((2, 3), np.int32), "b": -iota((2, 3), np.int32)})


def test_concat_dynamic_and_empty(tmp_path):
    a, b = _param([None, 2], np.bool_, "a"), _param([None, 2], np.bool_, "b")
    xml = save_model(tmp_path, [ops.concat([a, b], 0)], [a, b])
    all_outputs_bitexact(xml, {"a": np.ones((0, 2), bool), "b": np.array([[True, False]])})


def test_concat_mismatch_is_invalid(tmp_path):
    w = IRWriter("bad")
    a, b = w.parameter([2, 3], "f32", "a"), w.parameter([2, 4], "f32", "b")
    y = w.layer("Concat", "opset1", [a, b], {"axis": 0}, [("f32", [4, 3])], name="cat", out_names=["y"])[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="cat"):
        ir2onnx.convert(w.save(tmp_path / "bad.xml"))


# -- Squeeze / Unsqueeze ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape,axes", [([1, 3, 1, 2], [0, 2]), ([3, 1], [-1]), ([1, 3, 1], [0, 0]),
                                        ([1, 3, 1], [1]), ([1], [0]), ([1, 3, 1], None), ([2, 3], None)])
def test_squeeze_static(tmp_path, shape, axes):
    x = _param(shape)
    y = ops1.squeeze(x, const(axes)) if axes is not None else ops.squeeze(x)
    xml = save_model(tmp_path, [y], [x])
    all_outputs_bitexact(xml, {"x": iota(shape)})


def test_squeeze_1_without_axes(tmp_path):
    """Squeeze-1 with no second input (OpenVINO's Python API cannot write it)."""
    w = IRWriter("sq")
    x = w.parameter([1, 3, 1], "f32", "x")
    y = w.layer("Squeeze", "opset1", [x], None, [("f32", [3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "sq.xml")
    got = all_outputs_bitexact(xml, {"x": iota((1, 3, 1))})[0]
    assert got.shape == (3,)


def test_squeeze_dynamic(tmp_path):
    x = _param([None, 3, None])
    xml = save_model(tmp_path, [ops1.squeeze(x, const([0]))], [x])
    for shape in [(1, 3, 2), (1, 3, 0)]:
        all_outputs_bitexact(xml, {"x": iota(shape)})


def test_squeeze_15_allow_axis_skip(tmp_path):
    """The output rank depends on the run-time dim (OpenVINO's CPU plugin cannot run it: oracle)."""
    x = _param([None, 3])
    xml = save_model(tmp_path, [ops.squeeze(x, const([0]), allow_axis_skip=True)], [x])
    model = ir2onnx.convert(xml)
    sess = runtime.session(model.SerializeToString())
    for n, shape in [(1, (3,)), (4, (4, 3))]:
        got = next(iter(runtime.run(sess, {"x": iota((n, 3))}).values()))
        assert got.shape == shape
        assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": iota((n, 3))}).values())))


@pytest.mark.parametrize("shape,axes", [([3], [0]), ([3], [-1]), ([3], [0, 0]), ([], [0]), ([2, 3], [1, 0, -1]),
                                        ([None, 3], [1])])
def test_unsqueeze(tmp_path, shape, axes):
    x = _param(shape, np.int16)
    xml = save_model(tmp_path, [ops.unsqueeze(x, const(axes))], [x])
    run_shape = tuple(2 if d is None else d for d in shape)
    all_outputs_bitexact(xml, {"x": iota(run_shape, np.int16)})


# -- shape subgraphs ----------------------------------------------------------------------------------
def test_flatten_with_reduce_prod_stays_one_reshape(tmp_path):
    """x[?,3,4,4] -> Reshape(Concat(Gather(ShapeOf, 0), ReduceProd(Gather(ShapeOf, [1,2,3]))))."""
    x = _param([None, 3, 4, 4])
    shape = ops.shape_of(x)
    batch = ops.gather(shape, const([0]), const(0))
    rest = ops.reduce_prod(ops.gather(shape, const([1, 2, 3]), const(0)), const([0]), keep_dims=True)
    y = ops.reshape(x, ops.concat([batch, rest], 0), False)
    xml = save_model(tmp_path, [y], [x])
    model = ir2onnx.convert(xml)
    assert node_types(model) == ["Reshape", "Identity"]
    assert onnx.numpy_helper.to_array(model.graph.initializer[0]).tolist() == [0, 48]
    for n in (1, 7, 0):
        assert all_outputs_bitexact(xml, {"x": iota((n, 3, 4, 4))})[0].shape == (n, 48)


def test_shape_arithmetic_at_run_time(tmp_path):
    """Half the batch, computed from ShapeOf at run time: x[?,4] -> Reshape [b // 2, -1]."""
    x = _param([None, 4])
    batch = ops.gather(ops.shape_of(x), const(0), const(0))
    half = ops.unsqueeze(ops.divide(batch, const(2)), const([0]))
    y = ops.reshape(x, ops.concat([half, const([-1])], 0), True)
    xml = save_model(tmp_path, [y], [x])
    for n in (2, 6):
        assert all_outputs_bitexact(xml, {"x": iota((n, 4))})[0].shape == (n // 2, 8)


def test_static_shape_subgraph_folds(tmp_path):
    x = _param([2, 3, 4])
    s = ops.shape_of(x)
    target = ops.concat([ops.gather(s, const([2]), const(0)), ops.multiply(ops.gather(s, const([0]), const(0)), const([3]))], 0)
    xml = save_model(tmp_path, [ops.reshape(x, target, False)], [x])
    model = ir2onnx.convert(xml)
    assert node_types(model) == ["Reshape", "Identity"]
    assert all_outputs_bitexact(xml, {"x": iota((2, 3, 4))})[0].shape == (4, 6)


def test_shape_vector_as_output(tmp_path):
    """A lazily emitted shape vector still becomes a graph output when a Result asks for it."""
    x = _param([None, 5])
    s = ops.shape_of(x)
    xml = save_model(tmp_path, [ops.concat([s, ops.gather(s, const([1]), const(0))], 0)], [x])
    assert all_outputs_bitexact(xml, {"x": iota((3, 5))})[0].tolist() == [3, 5, 5]


def test_scalar_batch_through_reshape_and_unsqueeze(tmp_path):
    """Gather(ShapeOf, 0) is a scalar; Reshape-to-[1], Squeeze and Unsqueeze keep what it is."""
    x = _param([None, 2, 3])
    batch = ops.gather(ops.shape_of(x), const(0), const(0))
    as_vector = ops.unsqueeze(ops.squeeze(ops.reshape(batch, const([1]), False), const([0])), const([0]))
    xml = save_model(tmp_path, [ops.reshape(x, ops.concat([as_vector, const([-1])], 0), True)], [x])
    assert node_types(ir2onnx.convert(xml)) == ["Reshape", "Identity"]
    (tmp_path / "b").mkdir()
    target = ops.concat([as_vector, as_vector, const([-1])], 0)
    y = ops.reshape(x, ops.divide(target, ops.concat([as_vector, as_vector, const([1])], 0)), False)
    xml_b = save_model(tmp_path / "b", [y], [x])
    for n in (1, 3):
        assert all_outputs_bitexact(xml, {"x": iota((n, 2, 3))})[0].shape == (n, 6)
        assert all_outputs_bitexact(xml_b, {"x": iota((n, 2, 3))})[0].shape == (1, 1, 6 * n)


# -- axes fed at run time --------------------------------------------------------------------------
def _run_time_axes_ir(tmp_path, make, count):
    x = _param([None, None, None])
    a = ops.parameter([count], np.int64, name="a")
    a.output(0).get_tensor().set_names({"a"})
    return save_model(tmp_path, [make(x, a)], [x, a])


def _oracle_and_onnx(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), f"oracle {feeds['a']}")
    return got


@pytest.mark.parametrize("axes", [[0], [-1], [2]])
def test_squeeze_run_time_axes(tmp_path, axes):
    xml = _run_time_axes_ir(tmp_path, lambda x, a: ops1.squeeze(x, a), 1)
    for shape in ((1, 3, 1), (1, 2, 1)):
        feeds = {"x": iota(shape), "a": np.array(axes)}
        got = _oracle_and_onnx(xml, feeds)
        assert_bitexact(got, np.squeeze(feeds["x"], axis=axes[0]), "numpy")
        assert_bitexact(got, run_openvino(xml, feeds)[0], "OpenVINO")


def test_squeeze_15_run_time_axes_with_skip(tmp_path):
    """(OpenVINO's CPU plugin cannot compile it: dynamic output rank; oracle and numpy.)"""
    xml = _run_time_axes_ir(tmp_path, lambda x, a: ops.squeeze(x, a, allow_axis_skip=True), 2)
    for shape, axes, want in (((1, 3, 1), [0, -1], (3,)), ((2, 3, 1), [0, 2], (2, 3)), ((1, 3, 4), [2, 0], (3, 4)),
                              ((2, 1, 4), [0, 0], (2, 1, 4))):
        got = _oracle_and_onnx(xml, {"x": iota(shape), "a": np.array(axes)})
        assert got.shape == want
        assert_bitexact(got, iota(shape).reshape(want), "numpy")


@pytest.mark.parametrize("axes", [[0, 1], [-1, 0], [3, -3]])
def test_unsqueeze_run_time_axes(tmp_path, axes):
    """(OpenVINO's CPU plugin cannot compile it: dynamic output rank; oracle and numpy.)"""
    xml = _run_time_axes_ir(tmp_path, lambda x, a: ops.unsqueeze(x, a), 2)
    for shape in ((2, 3, 1), (1, 4, 2)):
        got = _oracle_and_onnx(xml, {"x": iota(shape), "a": np.array(axes)})
        assert_bitexact(got, np.expand_dims(iota(shape), [a % 5 for a in axes]), "numpy")
