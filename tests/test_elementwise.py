"""Add, Subtract, Multiply, Divide, Maximum, Minimum, FloorMod, Mod, SquaredDifference, Power: float
results within tolerance of OpenVINO and the oracle, integer results exact (wrapping like OpenVINO)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.ir.element_types import element_type
from ir2onnx.lowering.builder import Builder, Value
from ir2onnx.ops import elementwise
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import small_ints

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
    """Exact against the oracle on mixed signs; against OpenVINO where its CPU plugin wraps (it
    saturates unsigned underflow)."""
    rng = np.random.default_rng(2)
    xml = _binary_ir(tmp_path, op, [3, 4], [4], dtype)
    feeds = {"a": small_ints(rng, (3, 4), dtype), "b": small_ints(rng, (4,), dtype, nonzero=True)}
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
def test_integer_divide_truncates(tmp_path, python_div, dtype):
    """Integers truncate toward zero with either m_pythondiv: ONNX Div and torch's trunc division
    become Divide(m_pythondiv=true) (tests/test_framework_round_trips.py), and OpenVINO's CPU
    plugin truncates too, so all three agree on mixed signs."""
    xml = _divide_ir(tmp_path, dtype, python_div)
    np_type = element_type(dtype).numpy
    a = np.array([7, -7, 7, -7, 6, -1] if dtype[0] == "i" else [7, 8, 9, 250, 0, 1], np_type)
    b = np.array([2, 2, -2, -2, -3, 5] if dtype[0] == "i" else [2, 3, 4, 7, 1, 5], np_type)
    got = run_onnx(xml, {"a": a, "b": b})[0]
    assert_bitexact(got, _oracle(xml, {"a": a, "b": b}))
    assert_bitexact(got, run_openvino(xml, {"a": a, "b": b})[0])
    if dtype[0] == "i":
        assert got.tolist() == [3, -3, -3, 3, -2, 0]


def test_floor_of_integer_divide_floors(tmp_path):
    """torch's a // b is Floor(Divide(m_pythondiv=true)): the Floor floor-divides the Divide's
    operands; the Divide's own output, used elsewhere too, still truncates. OpenVINO truncates both."""
    a, b = _param([6], np.int32, "a"), _param([6], np.int32, "b")
    q = ops.divide(a, b)
    xml = _save(tmp_path, [ops.floor(q), ops.add(q, ops.constant(np.int32(0)))], [a, b])
    feeds = {"a": np.array([7, -7, 7, -7, 6, -1], np.int32), "b": np.array([2, 2, -2, -2, -3, 5], np.int32)}
    floored, truncated = run_onnx(xml, feeds)
    assert floored.tolist() == [3, -4, -4, 3, -2, -1] and truncated.tolist() == [3, -3, -3, 3, -2, 0]
    oracle = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    assert_bitexact(floored, oracle[0])
    assert_bitexact(truncated, oracle[1])
    assert run_openvino(xml, feeds)[0].tolist() == [3, -3, -3, 3, -2, 0]  # fails if OpenVINO changes


def test_floor_of_constant_integer_divide_folds(tmp_path):
    x = _param([3], np.int32, "x")
    q = ops.divide(ops.constant(np.array([-7, 7, -1], np.int32)), ops.constant(np.array([2, -2, 5], np.int32)))
    xml = _save(tmp_path, [ops.add(x, ops.floor(q)), ops.add(x, q)], [x])
    floored, truncated = run_onnx(xml, {"x": np.zeros(3, np.int32)})
    assert floored.tolist() == [-4, -4, -1] and truncated.tolist() == [-3, -3, 0]


def test_divide_truncates_where_openvino_constant_folding_floors(tmp_path):
    """OpenVINO's constant folding floors an integer Divide(m_pythondiv=true) (its reference), its
    kernel truncates: an ONNX Div of two constants gives onnxruntime's -3 at run time in OpenVINO
    only when not folded. ir2onnx's folding truncates like the source ONNX model."""
    x = _param([3], np.int32, "x")
    q = ops.divide(ops.constant(np.array([-7, 7, -1], np.int32)), ops.constant(np.array([2, -2, 5], np.int32)))
    xml = _save(tmp_path, [ops.add(x, q)], [x])
    feeds = {"x": np.zeros(3, np.int32)}
    got = run_onnx(xml, feeds)[0]
    assert got.tolist() == [-3, -3, 0]
    assert run_openvino(xml, feeds)[0].tolist() == [-4, -4, -1]  # fails if OpenVINO changes
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
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, feeds["x"] - np.array([-7, -9, -10]))  # [-15, -18, -21] / 2 toward zero
    assert_bitexact(got, _oracle(xml, feeds))
    assert_bitexact(run_openvino(xml, feeds)[0], feeds["x"] - np.array([-8, -9, -11]))  # OpenVINO folds by floor


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


# -- FloorMod, Mod, SquaredDifference --------------------------------------------------------
# On OpenVINO-written IR against the oracle and the OpenVINO runtime: integers bit for bit;
# floats within rtol 1e-5, atol 1e-5 (FloorMod's float formula a - floor(a/b)*b rounds a few times).
REMAINDER_OPS = {"FloorMod": ops.floor_mod, "Mod": ops.mod, "SquaredDifference": ops.squared_difference}
REMAINDER_NP = {"FloorMod": np.mod, "Mod": np.fmod, "SquaredDifference": lambda a, b: (a - b) * (a - b)}


def _remainder_ir(tmp_path, op, dtype, a_shape=(2, 3, 4), b_shape=(3, 1)):
    a, b = ov_parameter(list(a_shape), dtype, "a"), ov_parameter(list(b_shape), dtype, "b")
    return ov_save(tmp_path / "m.xml", REMAINDER_OPS[op](a, b), [a, b])


def _remainder_feeds(dtype, a_shape=(2, 3, 4), b_shape=(3, 1)):
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(-20, 20, a_shape).astype(dtype)
        b = rng.choice([-3.5, -2, -0.75, 1.25, 3], b_shape).astype(dtype)
    else:
        low = 0 if np.dtype(dtype).kind == "u" else -20
        a = rng.integers(low, 20, a_shape).astype(dtype)
        b = rng.choice([1, 3, 7] if low == 0 else [-7, -3, -1, 2, 5], b_shape).astype(dtype)
    return {"a": a, "b": b}


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("op", ["FloorMod", "Mod"])
def test_remainders_of_integers(tmp_path, op, dtype):
    xml = _remainder_ir(tmp_path, op, dtype)
    f = _remainder_feeds(dtype)
    got = run_onnx(xml, f)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())))
    assert_bitexact(got, run_openvino(xml, f)[0])
    assert_bitexact(got, REMAINDER_NP[op](f["a"], f["b"]).astype(dtype))


@pytest.mark.parametrize("op", list(REMAINDER_OPS))
def test_remainders_of_floats(tmp_path, op):
    xml = _remainder_ir(tmp_path, op, np.float32)
    f = _remainder_feeds(np.float32)
    got = run_onnx(xml, f)[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, run_openvino(xml, f)[0], rtol=1e-5, atol=1e-5)
    want = REMAINDER_NP[op](f["a"].astype(np.float64), f["b"].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_remainder_signs():
    """The worked signs: FloorMod follows the divisor, Mod the dividend."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        f = {"a": np.array([7, -7, 7, -7], np.int32), "b": np.array([3, 3, -3, -3], np.int32)}
        for op, want in (("FloorMod", [1, 2, -2, -1]), ("Mod", [1, -1, 1, -1])):
            xml = _remainder_ir(Path(d), op, np.int32, (4,), (4,))
            assert run_onnx(xml, f)[0].tolist() == want


def test_squared_difference_i32(tmp_path):
    xml = _remainder_ir(tmp_path, "SquaredDifference", np.int32)
    f = _remainder_feeds(np.int32)
    got = run_onnx(xml, f)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), f).values())))
    assert_bitexact(got, run_openvino(xml, f)[0])


def test_remainders_of_constants_fold(tmp_path):
    x = ov_parameter([3], np.int32, "x")
    k = ops.floor_mod(ops.constant(np.array([-7, 7, 5], np.int32)), ops.constant(np.array([3, -3, 5], np.int32)))
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]
    assert run_onnx(xml, {"x": np.zeros(3, np.int32)})[0].tolist() == [2, -2, 0]


# -- Power-1 ---------------------------------------------------------------------------------
POWER_TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _power_three_ways(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    return got, want, run_openvino(xml, feeds)[0]


POW = [(np.float32, (2, 3, 4), (4,), (0.1, 3), (-2, 2)), (np.float16, (2, 3), (2, 1), (0.5, 2), (-2, 2)),
       (np.int32, (3, 4), (1, 4), (-4, 5), (0, 4)), (np.int64, (5,), (), (-3, 4), (0, 5))]


@pytest.mark.parametrize("dtype,a_shape,b_shape,base,exp", POW)
def test_power(tmp_path, dtype, a_shape, b_shape, base, exp):
    a, b = ov_parameter(a_shape, dtype, "a"), ov_parameter(b_shape, dtype, "b")
    xml = ov_save(tmp_path / "p.xml", ops.power(a, b), [a, b])
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        feeds = {"a": rng.uniform(*base, a_shape).astype(dtype), "b": rng.uniform(*exp, b_shape).astype(dtype)}
    else:
        feeds = {"a": rng.integers(*base, a_shape).astype(dtype), "b": rng.integers(*exp, b_shape).astype(dtype)}
    got, want, ov_out = _power_three_ways(xml, feeds)
    tol = POWER_TOLS.get(dtype, dict(rtol=0, atol=0))
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(got, ov_out, **tol)


def test_power_square_constant_and_folding(tmp_path):
    """x ** 2 with a constant exponent (LayerNorm's variance); a constant base folds."""
    x = ov_parameter([2, 5], np.float32, "x")
    folded = ops.power(ops.constant(np.array([2.0, 3.0], np.float32)), ops.constant(np.float32(2)))
    y = ops.add(ops.power(x, ops.constant(np.float32(2))), ops.reduce_sum(folded, ops.constant(np.int64(0))))
    xml = ov_save(tmp_path / "sq.xml", y, [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Pow", "Add", "Identity"]
    data = np.linspace(-2, 2, 10, dtype=np.float32).reshape(2, 5)
    got, want, ov_out = _power_three_ways(xml, {"x": data})
    np.testing.assert_allclose(got, data ** 2 + 13, rtol=1e-6)
    np.testing.assert_allclose(got, ov_out, rtol=1e-6)


def test_power_of_mismatched_types_is_invalid(tmp_path):
    w = IRWriter()
    a, b = w.parameter([3], "f32", "a"), w.parameter([3], "f16", "b")
    w.result(w.layer("Power", "opset1", [a, b], {"auto_broadcast": "numpy"}, [("f32", [3])], name="pw")[0])
    with pytest.raises(InvalidLayer, match="pw.*different element types"):  # as written
        convert(w.save(tmp_path / "bad.xml"), precision="ir")
