"""ShuffleChannels-1 on OpenVINO-written IR: bit for bit against the index-arithmetic oracle and
the OpenVINO runtime, for any rank and axis (negative too), several element types and dynamic
dims; Transpose-1 (constant order, empty order = reversed axes) below."""
from __future__ import annotations

import numpy as np
import onnx
import openvino.opset15 as ops
import pytest
from hypothesis import given, settings, strategies as st

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere, first_outputs, save_model


def _ir(path, shape, axis, group, dtype=np.float32):
    p = ov_parameter(shape, dtype, "x")
    return ov_save(path / "sc.xml", [ops.shuffle_channels(p, axis, group)], [p])


def _data(shape, dtype=np.float32):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) % 120 - 60).astype(dtype).reshape(shape)


def test_spec_example(tmp_path):
    """axis 1, group 3 on [1, 6, 2, 2]: channels come out as 0, 2, 4, 1, 3, 5."""
    x = np.arange(24, dtype=np.float32).reshape(1, 6, 2, 2)
    got = bitexact_everywhere(_ir(tmp_path, [1, 6, 2, 2], 1, 3), {"x": x})
    assert_bitexact(got, x[:, [0, 2, 4, 1, 3, 5]])


@pytest.mark.parametrize("shape,axis,group", [
    ([12], 0, 4), ([3, 8], -1, 2), ([2, 6, 5], 0, 2), ([4, 3, 2], -3, 2), ([2, 3, 12, 2, 1], 2, 3),
    ([2, 12, 2], -2, 6), ([1, 6, 1, 1], 1, 6), ([2, 6, 3], 1, 1),
])
def test_ranks_and_axes(tmp_path, shape, axis, group):
    bitexact_everywhere(_ir(tmp_path, shape, axis, group), {"x": _data(shape)})


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.uint8, np.int32, np.int64, np.float64])
def test_element_types(tmp_path, dtype):
    got = bitexact_everywhere(_ir(tmp_path, [2, 8, 3], -2, 4, dtype), {"x": _data([2, 8, 3], dtype)})
    assert got.dtype == dtype


def test_f16_nan_payloads_are_kept(tmp_path):
    x = np.arange(8, dtype=np.uint16).reshape(1, 8) | 0x7E00  # quiet NaNs with distinct payloads
    got = bitexact_everywhere(_ir(tmp_path, [1, 8], 1, 2, np.float16), {"x": x.view(np.float16)})
    assert_bitexact(got.view(np.uint16), x[:, [0, 4, 1, 5, 2, 6, 3, 7]])


@pytest.mark.parametrize("shape", [[None, 6, 2], [2, None, 3], [None, None, None]])
def test_dynamic_dims(tmp_path, shape):
    xml = _ir(tmp_path, shape, 1, 3)
    for fill in ([2, 6, 3], [1, 12, 1], [3, 0, 2]):
        bitexact_everywhere(xml, {"x": _data([f if d is None else d for d, f in zip(shape, fill)])})


def test_group_one_is_identity(tmp_path):
    model = convert(_ir(tmp_path, [2, 6], 1, 1))
    assert [n.op_type for n in model.graph.node] == ["Identity"]


def test_constant_is_folded(tmp_path):
    p = ov_parameter([6], np.int32, "x")
    c = ops.constant(np.arange(6, dtype=np.int32))
    xml = ov_save(tmp_path / "fold.xml", [ops.add(p, ops.shuffle_channels(c, 0, 2))], [p])
    assert "Transpose" not in {n.op_type for n in convert(xml).graph.node}
    got = bitexact_everywhere(xml, {"x": np.zeros(6, np.int32)})
    assert got.tolist() == [0, 3, 1, 4, 2, 5]


@pytest.mark.parametrize("attrs,match", [({"axis": 1, "group": 4}, "group 4 does not divide"),
                                         ({"axis": 2, "group": 2}, "axis 2 is out of range"),
                                         ({"axis": 1, "group": 0}, "group must be a positive")])
def test_invalid(tmp_path, attrs, match):
    w = IRWriter()
    x = w.parameter([2, 6], "f32", "x")
    y = w.layer("ShuffleChannels", "opset1", [x], attrs, [("f32", [2, 6])], name="sc")[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match=f"sc.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


@settings(max_examples=25)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_property_matches_oracle(tmp_path_factory, dims, data):
    axis = data.draw(st.integers(-len(dims), len(dims) - 1))
    group = data.draw(st.sampled_from([1, 2, 3]))
    dims[axis] *= group
    path = tmp_path_factory.mktemp("p")
    xml = _ir(path, dims, axis, group, np.int16)
    x = _data(dims, np.int16)
    assert_bitexact(run_onnx(xml, {"x": x})[0], list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())[0])


# -- Transpose-1 -----------------------------------------------------------------------------
# Data movement: bit for bit against the oracle and OpenVINO.
_param = ov_parameter


TRANSPOSE = [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), []), ((5,), [0]), ((2, 1, 3, 2), [3, 1, 0, 2])]


@pytest.mark.parametrize("shape,order", TRANSPOSE)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_transpose_orders_and_types(tmp_path, shape, order, dtype):
    x = _param(shape, dtype, "x")
    xml = save_model(tmp_path, ops.transpose(x, ops.constant(np.array(order, np.int64))), [x])
    data = (np.arange(np.prod(shape)) % 7 - 3).astype(dtype).reshape(shape)
    got, want, ov_out = first_outputs(xml, {"x": data})
    expected = np.transpose(data, order or None)
    assert_bitexact(got, expected, "onnxruntime")
    assert_bitexact(want, expected, "oracle")
    assert_bitexact(ov_out, expected, "OpenVINO")


def test_transpose_of_a_constant_is_folded(tmp_path):
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = _param((3, 2), np.float32, "x")
    xml = save_model(tmp_path, ops.add(x, ops.transpose(ops.constant(c), ops.constant(np.array([1, 0])))), [x])
    model = convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Add", "Identity"]
    onnx.checker.check_model(model, full_check=True)


@pytest.mark.parametrize("order", [[0, 0, 1], [0, 1], [0, 1, 3]])
def test_transpose_bad_order(tmp_path, order):
    w = IRWriter()
    x = w.parameter([2, 3, 4], "f32", "x")
    o = w.const(np.array(order, np.int64))
    w.result(w.layer("Transpose", "opset1", [x, o], None, [("f32", None)])[0])
    with pytest.raises(InvalidLayer, match="not a permutation"):
        convert(w.save(tmp_path / "bad.xml"))


def test_transpose_of_a_scalar_constant_stays_0_d(tmp_path):
    """Transpose of a 0-d constant with an empty input_order folds to a 0-d constant (the fold
    once made it shape (1,), which failed the next layer's declared port)."""
    import openvino as ov

    p = ov_parameter([], np.int32, "p")
    order = ov.op.Constant(ov.Type.i64, ov.Shape([0]), [])
    out = ops.add(ops.transpose(ops.constant(np.array(7, np.int32)), order), p)
    xml = ov_save(tmp_path / "t.xml", [out], [p])
    feed = {"p": np.array(3, np.int32)}
    got = run_onnx(xml, feed)[0]
    assert_bitexact(got, np.array(10, np.int32), "numpy")
    assert_bitexact(got, run_openvino(xml, feed)[0], "openvino")
