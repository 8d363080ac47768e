"""Split-1 and VariadicSplit-1 (several outputs) on OpenVINO-written IR: bit for bit against the
oracle and the OpenVINO runtime, static and dynamic split dims."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _check(xml, x, expected):
    got = run_onnx(xml, {"x": x})
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())
    ov_out = run_openvino(xml, {"x": x})
    assert len(got) == len(expected)
    for g, w, o, e in zip(got, want, ov_out, expected):
        assert_bitexact(g, e, "onnxruntime vs numpy")
        assert_bitexact(g, w, "onnxruntime vs oracle")
        assert_bitexact(g, o, "onnxruntime vs OpenVINO")


def _save(tmp_path, node, x):
    return ov_save(tmp_path / "s.xml", list(node.outputs()), [x])


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("shape,axis,parts", [((2, 6, 3), 1, 3), ((4, 5), -2, 2), ((2, 3, 4), 2, 1),
                                              ((None, 6), 1, 2), ((2, None), 1, 2)])
def test_split(tmp_path, shape, axis, parts, opset):
    x = ov_parameter(shape, np.float32, "x")
    xml = _save(tmp_path, ops.split(x, ops.constant(np.int64(axis)), parts), x)
    concrete = tuple(4 if d is None else d for d in shape)
    data = np.arange(np.prod(concrete), dtype=np.float32).reshape(concrete)
    _check(xml, data, np.split(data, parts, axis=axis))
    if opset == 18:
        got = run_onnx(xml, {"x": data}, opset=18)
        assert all(np.array_equal(g, e) for g, e in zip(got, np.split(data, parts, axis=axis)))


@pytest.mark.parametrize("shape,axis,lengths", [((2, 7), 1, [2, -1, 4]), ((5, 3), 0, [5, 0]),
                                                ((2, None, 3), 1, [1, -1]), ((None, 3), 1, [1, 2]),
                                                ((3, 4, 2), -1, [-1])])
def test_variadic_split(tmp_path, shape, axis, lengths):
    x = ov_parameter(shape, np.int32, "x")
    xml = _save(tmp_path, ops.variadic_split(x, ops.constant(np.int64(axis)), ops.constant(np.array(lengths))), x)
    concrete = tuple(5 if d is None else d for d in shape)
    data = np.arange(np.prod(concrete), dtype=np.int32).reshape(concrete)
    dim = concrete[axis]
    sizes = [dim - sum(n for n in lengths if n != -1) if n == -1 else n for n in lengths]
    _check(xml, data, np.split(data, np.cumsum(sizes)[:-1], axis=axis))


def test_constant_split_folds(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    a, b = ops.split(ops.constant(np.array([1, 2, 3, 4, 5, 6], np.float32)), ops.constant(np.int64(0)), 2).outputs()
    xml = ov_save(tmp_path / "f.xml", ops.add(ops.multiply(x, a), b), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Mul", "Add", "Identity"]
    assert_bitexact(run_onnx(xml, {"x": np.ones(3, np.float32)})[0], np.array([5, 7, 9], np.float32))


@pytest.mark.parametrize("op,attrs,extra,outs,match", [
    ("Split", {"num_splits": 4}, [], 4, "not divisible"),
    ("VariadicSplit", None, [[2, 2]], 2, "do not add up"),
    ("VariadicSplit", None, [[-1, -1]], 2, "at most one -1"),
])
def test_invalid(tmp_path, op, attrs, extra, outs, match):
    w = IRWriter()
    x = w.parameter([2, 6], "f32", "x")
    ins = [x, w.const(np.int64(1))] + [w.const(np.array(e)) for e in extra]
    for r in w.layer(op, "opset1", ins, attrs, [("f32", [2, None])] * outs, name="sp"):
        w.result(r)
    with pytest.raises(InvalidLayer, match=f"sp.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("etype", [np.int32, np.int64])
@pytest.mark.parametrize("lengths", [[2, 3, 1], [-1, 2, 1], [1, -1], [0, -1, 2]], ids=str)
def test_variadic_split_run_time_lengths(tmp_path, etype, lengths):
    """split_lengths fed at run time (a -1 takes the rest), along a dynamic dim of several sizes."""
    x = ov_parameter([2, None], np.float32, "x")
    n = ov_parameter([len(lengths)], etype, "n")
    node = ops.variadic_split(x, ops.constant(np.array(-1, np.int64)), n)
    xml = ov_save(tmp_path / "v.xml", [node.output(i) for i in range(len(lengths))], [x, n])
    for size in (6, 9):
        if -1 not in lengths and sum(lengths) != size:
            continue
        data = np.arange(2 * size, dtype=np.float32).reshape(2, size)
        feeds = {"x": data, "n": np.array(lengths, etype)}
        got = run_onnx(xml, feeds)
        rest = size - sum(v for v in lengths if v != -1)
        want = np.split(data, np.cumsum([rest if v == -1 else v for v in lengths])[:-1], axis=1)
        oracle = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
        for g, w_, o, v in zip(got, want, oracle, run_openvino(xml, feeds)):
            assert_bitexact(g, w_, f"numpy {lengths} at {size}")
            assert_bitexact(g, o, "oracle")
            assert_bitexact(g, v, "OpenVINO")


def test_run_time_split_axis_is_refused(tmp_path):
    x = ov_parameter([2, 4], np.float32, "x")
    a = ov_parameter([], np.int64, "a")
    xml = ov_save(tmp_path / "a.xml", [o for o in ops.split(x, a, 2).outputs()], [x, a])
    with pytest.raises(InvalidLayer, match="ONNX's Split takes the axis as an attribute"):
        convert(xml)
