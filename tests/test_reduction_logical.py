"""ReduceLogicalAnd-1 and ReduceLogicalOr-1 on OpenVINO-written IR: onnxruntime, the oracle,
OpenVINO and numpy agree bit for bit (constant and run-time axes, keep_dims, dynamic dims, the
empty slice's identities)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

from util import bitexact_everywhere

LOGICAL = {"and": (ops.reduce_logical_and, np.all), "or": (ops.reduce_logical_or, np.any)}


def _data(shape, p=0.8, seed=1):
    return np.random.default_rng(seed).random(shape) < p


@pytest.mark.parametrize("kind", ["and", "or"])
@pytest.mark.parametrize("axes, keep", [([1], False), ([0, 2], True), ([-1], False), ([2, 0, 1], False),
                                        ([], True)])
def test_logical_reduce(tmp_path, kind, axes, keep):
    make, ref = LOGICAL[kind]
    x = ov_parameter((None, 3, None), bool, "x")
    xml = ov_save(tmp_path / "r.xml", make(x, ops.constant(np.array(axes, np.int64)), keep), [x])
    # p = 0.8 for and (some all-true slices), 0.2 for or (some all-false slices)
    data = _data((4, 3, 5), 0.5)
    data[:, 0, :] = data[0, :, :] = kind == "and"  # slices that are all true (and) / all false (or)
    want = ref(data, axis=tuple(axes), keepdims=keep) if axes else data
    got = bitexact_everywhere(xml, {"x": data}, np.asarray(want))
    if 0 < len(axes) < 3:
        assert got.dtype == np.bool_ and got.any() and not got.all()


@pytest.mark.parametrize("kind", ["and", "or"])
def test_logical_reduce_run_time_axes(tmp_path, kind):
    """Axes fed at run time (OpenVINO's CPU plugin refuses them: 'Second tensor is not constant')."""
    make, ref = LOGICAL[kind]
    x = ov_parameter((2, 3, 4), bool, "x")
    axes = ov_parameter((2,), np.int32, "axes")
    xml = ov_save(tmp_path / "r.xml", make(x, axes, True), [x, axes])
    data = _data((2, 3, 4), 0.7 if kind == "and" else 0.3, seed=4)
    for picked in ([0, 2], [-1, 1]):
        feeds = {"x": data, "axes": np.array(picked, np.int32)}
        bitexact_everywhere(xml, feeds, ref(data, axis=tuple(picked), keepdims=True), openvino=False)


@pytest.mark.parametrize("kind, identity", [("and", True), ("or", False)])
def test_logical_reduce_empty_slice(tmp_path, kind, identity):
    """A zero-sized reduced dim gives the identity (true for and, false for or), where ReduceMin /
    ReduceMax of a Cast would give the integer extremes. OpenVINO cannot compile a zero-sized
    Parameter, so onnxruntime is checked against the oracle and numpy."""
    make, _ = LOGICAL[kind]
    x = ov_parameter((2, None, 3), bool, "x")
    xml = ov_save(tmp_path / "r.xml", make(x, ops.constant(np.array([1], np.int64)), False), [x])
    got = bitexact_everywhere(xml, {"x": np.zeros((2, 0, 3), bool)}, np.full((2, 3), identity), openvino=False)
    assert got.shape == (2, 3)


def test_logical_reduce_constant_is_folded(tmp_path):
    data = _data((3, 4), 0.5, seed=7)
    x = ov_parameter((3,), bool, "x")
    folded = ops.reduce_logical_or(ops.constant(data), ops.constant(np.array([1], np.int64)), False)
    xml = ov_save(tmp_path / "r.xml", ops.logical_and(x, folded), [x])
    assert "ReduceSum" not in [n.op_type for n in convert(xml).graph.node]
    feeds = {"x": np.array([True, True, False])}
    bitexact_everywhere(xml, feeds, feeds["x"] & data.any(1))


def test_logical_reduce_errors(tmp_path):
    w = IRWriter("bad_axis")
    p = w.parameter((2, 3), "boolean", "x")
    y = w.layer("ReduceLogicalAnd", "opset1", [p, w.const(np.array([2], np.int64))], {"keep_dims": False},
                [("boolean", (2,))])[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="out of range"):
        convert(w.save(tmp_path / "a.xml"))
    w = IRWriter("not_bool")
    p = w.parameter((2, 3), "f32", "x")
    y = w.layer("ReduceLogicalOr", "opset1", [p, w.const(np.array([1], np.int64))], {"keep_dims": False},
                [("f32", (2,))])[0]
    w.result(y)
    with pytest.raises(UnsupportedLayer, match="boolean only"):
        convert(w.save(tmp_path / "f.xml"))
    x = ov_parameter((2, 3), bool, "x")
    axes = ov_parameter((None,), np.int64, "axes")
    xml = ov_save(tmp_path / "b.xml", ops.reduce_logical_or(x, axes, False), [x, axes])
    with pytest.raises(UnsupportedLayer, match="static, non-zero count"):
        convert(xml)
