"""Add, Subtract, Multiply, Divide, Maximum, Minimum, ReduceProd, ReduceSum: float results within
tolerance of OpenVINO and the oracle, integer results exact (wrapping like OpenVINO)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.errors import InvalidLayer
from ir2onnx.ir.element_types import element_type
from ir2onnx.lowering.builder import Builder, Value
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.ops import elementwise
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino, ov_parameter, ov_save

BINARY = {"Add": ops.add, "Subtract": ops.subtract, "Multiply": ops.multiply, "Divide": ops.divide,
          "Maximum": ops.maximum, "Minimum": ops.minimum}
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


_param = ov_parameter


def _save(tmp_path, outputs, params, name="m") -> Path:
    return ov_save(tmp_path / f"{name}.xml", outputs, params)


def _binary_ir(tmp_path, op, a_shape, b_shape, dtype):
    a, b = _param(a_shape, dtype, "a"), _param(b_shape, dtype, "b")
    return _save(tmp_path, [BINARY[op](a, b)], [a, b])


def _oracle(xml, feeds):
    return next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))


def _small_ints(rng, shape, dtype, nonzero=False):
    low = 0 if np.dtype(dtype).kind == "u" else -9
    values = rng.integers(low, 10, size=shape)
    if nonzero:
        values[values == 0] = 3
    return values.astype(dtype)


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-6), (np.float16, 1e-3), (np.float64, 1e-12)])
def test_float_binary_broadcast(tmp_path, op, dtype, tol):
    rng = np.random.default_rng(1)
    xml = _binary_ir(tmp_path, op, [2, 1, 4], [3, 1], dtype)
    feeds = {"a": rng.standard_normal((2, 1, 4)).astype(dtype), "b": (rng.random((3, 1)) + 0.5).astype(dtype)}
    got = run_onnx(xml, feeds)[0]
    assert got.shape == (2, 3, 4) and got.dtype == dtype
    np.testing.assert_allclose(got, _oracle(xml, feeds), rtol=tol, atol=tol)
    ov_tol = max(tol, 1e-6)  # OpenVINO's CPU plugin computes f64 in f32
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=ov_tol, atol=ov_tol)


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", INTS)
def test_integer_binary(tmp_path, op, dtype):
    """Exact against the oracle on mixed signs; against OpenVINO where its CPU plugin follows the
    spec (it saturates unsigned underflow and truncates a floor division at run time)."""
    rng = np.random.default_rng(2)
    xml = _binary_ir(tmp_path, op, [3, 4], [4], dtype)
    feeds = {"a": _small_ints(rng, (3, 4), dtype), "b": _small_ints(rng, (4,), dtype, nonzero=True)}
    assert_bitexact(run_onnx(xml, feeds)[0], _oracle(xml, feeds), "onnxruntime vs oracle")
    safe = {"a": rng.integers(9, 13, (3, 4)).astype(dtype), "b": rng.integers(1, 9, (4,)).astype(dtype)}
    assert_bitexact(run_onnx(xml, safe)[0], run_openvino(xml, safe)[0], "onnxruntime vs OpenVINO")


@pytest.mark.parametrize("op,dtype", [("Add", np.int8), ("Multiply", np.uint8), ("Subtract", np.uint16),
                                      ("Multiply", np.int32), ("Add", np.int64)])
def test_integer_overflow_wraps(tmp_path, op, dtype):
    info = np.iinfo(dtype)
    xml = _binary_ir(tmp_path, op, [3], [3], dtype)
    feeds = {"a": np.array([info.max, info.min, info.max // 2 + 3], dtype), "b": np.array([3, 5, 7], dtype)}
    assert_bitexact(run_onnx(xml, feeds)[0], _oracle(xml, feeds))


def _divide_ir(tmp_path, dtype, python_div: bool, shape=(6,)):
    w = IRWriter("div")
    a, b = w.parameter(list(shape), dtype, "a"), w.parameter(list(shape), dtype, "b")
    y = w.layer("Divide", "opset1", [a, b], {"auto_broadcast": "numpy", "m_pythondiv": python_div},
                [(dtype, list(shape))], out_names=["y"])[0]
    w.result(y)
    return w.save(tmp_path / "div.xml")


@pytest.mark.parametrize("python_div", [True, False])
@pytest.mark.parametrize("dtype", ["i8", "i32", "i64", "u8"])
def test_integer_divide_rounding(tmp_path, python_div, dtype):
    """m_pythondiv=true floors, false truncates (spec). OpenVINO's CPU plugin truncates in both
    cases at run time, so it is compared only where the two agree (same signs)."""
    xml = _divide_ir(tmp_path, dtype, python_div)
    np_type = element_type(dtype).numpy
    a = np.array([7, -7, 7, -7, 6, -1] if dtype[0] == "i" else [7, 8, 9, 250, 0, 1], np_type)
    b = np.array([2, 2, -2, -2, -3, 5] if dtype[0] == "i" else [2, 3, 4, 7, 1, 5], np_type)
    got = run_onnx(xml, {"a": a, "b": b})[0]
    assert_bitexact(got, _oracle(xml, {"a": a, "b": b}))
    if dtype[0] == "i":
        expected = [3, -4, -4, 3, -2, -1] if python_div else [3, -3, -3, 3, -2, 0]
        assert got.tolist() == expected
    same_sign = {"a": np.abs(a).astype(np_type), "b": np.abs(b).astype(np_type)}
    assert_bitexact(run_onnx(xml, same_sign)[0], run_openvino(xml, same_sign)[0])


def test_divide_ir_written_by_openvino_floors(tmp_path):
    xml = _binary_ir(tmp_path, "Divide", [4], [4], np.int32)
    assert 'm_pythondiv="true"' in xml.read_text()
    feeds = {"a": np.array([-7, 7, -1, 0], np.int32), "b": np.array([2, -2, 3, -5], np.int32)}
    assert run_onnx(xml, feeds)[0].tolist() == [-4, -4, -1, 0]


def test_divide_floors_like_openvino_constant_folding(tmp_path):
    """OpenVINO's own reference (its constant folding) floors: so does the converter's folding."""
    x = _param([3], np.int32, "x")
    q = ops.divide(ops.constant(np.array([-7, 7, -1], np.int32)), ops.constant(np.array([2, -2, 5], np.int32)))
    xml = _save(tmp_path, [ops.add(x, q)], [x])
    feeds = {"x": np.zeros(3, np.int32)}
    got = run_onnx(xml, feeds)[0]
    assert got.tolist() == [-4, -4, -1]
    assert_bitexact(got, run_openvino(xml, feeds)[0])
    assert [n.op_type for n in ir2onnx.convert(xml).graph.node] == ["Add", "Identity"]


def test_auto_broadcast_none(tmp_path):
    a, b = _param([2, 3], np.float32, "a"), _param([2, 3], np.float32, "b")
    xml = _save(tmp_path, [ops.add(a, b, auto_broadcast="none")], [a, b])
    feeds = {"a": np.ones((2, 3), np.float32), "b": np.full((2, 3), 2, np.float32)}
    assert_bitexact(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0])
    w = IRWriter("bad")
    a, b = w.parameter([2, 3], "f32", "a"), w.parameter([3], "f32", "b")
    y = w.layer("Add", "opset1", [a, b], {"auto_broadcast": "none"}, [("f32", [2, 3])], name="plus", out_names=["y"])[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="plus.*equal shapes"):
        ir2onnx.convert(w.save(tmp_path / "bad.xml"))


def test_pdpd_broadcast_is_unsupported(tmp_path):
    w = IRWriter("pdpd")
    a, b = w.parameter([2, 3], "f32", "a"), w.parameter([3], "f32", "b")
    y = w.layer("Multiply", "opset1", [a, b], {"auto_broadcast": "pdpd"}, [("f32", [2, 3])], out_names=["y"])[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="pdpd.*not supported"):
        ir2onnx.convert(w.save(tmp_path / "pdpd.xml"))


def test_constants_fold(tmp_path):
    x = _param([None, 3], np.int64, "x")
    k = ops.multiply(ops.add(ops.constant(np.array([1, 2, 3])), ops.constant(np.int64(4))), ops.constant(np.int64(-3)))
    xml = _save(tmp_path, [ops.subtract(x, ops.divide(k, ops.constant(np.int64(2))))], [x])
    model = ir2onnx.convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Sub", "Identity"]
    feeds = {"x": np.arange(6, dtype=np.int64).reshape(2, 3)}
    assert_bitexact(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0])
    assert_bitexact(run_onnx(xml, feeds)[0], _oracle(xml, feeds))


# -- the absorb_add contract with ConvolutionBackpropData ----------------------------------------------
def _add_layer():
    return SimpleNamespace(name="add", type="Add", version="opset1", id="9", attrs={"auto_broadcast": "numpy"})


def test_add_offers_itself_to_absorb_add():
    b = Builder(17)
    f32 = element_type("f32")
    conv, bias = Value(b, f32, (1, 4, 5, 5), name="conv"), Value(b, f32, (1, 4, 1, 1), name="bias")
    merged = Value(b, f32, (1, 4, 5, 5), name="merged")
    seen = []
    conv.absorb_add = lambda other: seen.append(other) or merged
    ctx = SimpleNamespace(b=b, opset=17)
    assert elementwise.add(ctx, _add_layer(), [bias, conv]) == [merged]
    assert seen == [bias] and b.nodes == []


def test_add_emits_add_when_absorb_declines():
    b = Builder(17)
    f32 = element_type("f32")
    conv, bias = Value(b, f32, (1, 4), name="conv"), Value(b, f32, (4,), name="bias")
    conv.absorb_add = lambda other: None
    out = elementwise.add(SimpleNamespace(b=b, opset=17), _add_layer(), [conv, bias])
    assert [n.op_type for n in b.nodes] == ["Add"] and out == [b.nodes[0].output[0]]


# -- Maximum / Minimum on 16-bit integers (onnxruntime lacks them: Cast to i32) ------------------------
@pytest.mark.parametrize("op", ["Maximum", "Minimum"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_min_max_16_bit(tmp_path, op, dtype):
    info = np.iinfo(dtype)
    xml = _binary_ir(tmp_path, op, [4], [4], dtype)
    feeds = {"a": np.array([info.min, info.max, 3, 0], dtype), "b": np.array([info.max, info.min, 2, 1], dtype)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, _oracle(xml, feeds))
    assert_bitexact(got, run_openvino(xml, feeds)[0])


# -- reductions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["ReduceProd", "ReduceSum"])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([-2], True), ([0, 1, 2], False)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.int64])
@pytest.mark.parametrize("opset", [17, 18])
def test_reduce(tmp_path, op, axes, keep, dtype, opset):
    x = _param([2, 3, 2], dtype, "x")
    fn = ops.reduce_prod if op == "ReduceProd" else ops.reduce_sum
    xml = _save(tmp_path, [fn(x, ops.constant(np.array(axes, np.int64)), keep)], [x])
    data = _small_ints(np.random.default_rng(3), (2, 3, 2), dtype) if dtype != np.float32 else \
        np.random.default_rng(3).standard_normal((2, 3, 2)).astype(np.float32)
    got = run_onnx(xml, {"x": data}, opset=opset)[0]
    want = _oracle(xml, {"x": data})
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=1e-5, atol=1e-6)
    else:
        assert_bitexact(got, want)
        if dtype in (np.int32, np.int64) or op == "ReduceSum":
            assert_bitexact(got, run_openvino(xml, {"x": data})[0])


def test_reduce_with_empty_axes_is_identity(tmp_path):
    w = IRWriter("r")
    x = w.parameter([2, 3], "i32", "x")
    y = w.layer("ReduceProd", "opset1", [x, w.const(np.zeros(0, np.int64))], {"keep_dims": False},
                [("i32", [2, 3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "r.xml")
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_bitexact(run_onnx(xml, {"x": data})[0], data)  # (OpenVINO cannot read an empty Const)
    assert_bitexact(_oracle(xml, {"x": data}), data)
