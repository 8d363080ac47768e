"""BitwiseAnd/Or/Xor/Not-13 and BitwiseLeftShift/RightShift-15 on OpenVINO-written IR: bit for bit
against the oracle, OpenVINO and numpy, for booleans and every integer type, with dynamic dims,
broadcasting, constants folded, amounts outside [0, bits), at ONNX opset 18 (the Bitwise ops) and
below (bit by bit)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
LOGIC = {"and": (ops.bitwise_and, np.bitwise_and), "or": (ops.bitwise_or, np.bitwise_or),
         "xor": (ops.bitwise_xor, np.bitwise_xor)}


def _values(rng, shape, dtype):
    """Values over the whole range of ``dtype`` (bit patterns matter), OpenVINO-safe for 64 bits."""
    info = np.iinfo(dtype)
    low, high = (max(info.min, -2**31), min(info.max, 2**31 - 1)) if info.bits == 64 else (info.min, info.max)
    return rng.integers(low, high, shape, endpoint=True).astype(dtype)


def _all_agree(xml, feeds, expected, opset=18, openvino=True):
    got = run_onnx(xml, feeds, opset=opset)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")
    if openvino:
        assert_bitexact(got, run_openvino(xml, feeds)[0], "openvino")
    assert_bitexact(got, np.asarray(expected), "numpy")
    return got


@pytest.mark.parametrize("op", list(LOGIC))
@pytest.mark.parametrize("dtype", INTS + [np.bool_])
def test_and_or_xor(tmp_path, op, dtype):
    a, b = ov_parameter([None, 4], dtype, "a"), ov_parameter([4], dtype, "b")
    xml = ov_save(tmp_path / "m.xml", LOGIC[op][0](a, b), [a, b])
    rng = np.random.default_rng(3)
    if dtype == np.bool_:
        feeds = {"a": rng.integers(0, 2, (3, 4)).astype(bool), "b": np.array([0, 1, 0, 1], bool)}
    else:
        feeds = {"a": _values(rng, (3, 4), dtype), "b": _values(rng, (4,), dtype)}
    for opset in (14, 17, 18):  # below 18: bit by bit, without ONNX's Bitwise ops
        _all_agree(xml, feeds, LOGIC[op][1](feeds["a"], feeds["b"]), opset=opset)


@pytest.mark.parametrize("dtype", INTS + [np.bool_])
def test_not(tmp_path, dtype):
    x = ov_parameter([2, None], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", ops.bitwise_not(x), [x])
    rng = np.random.default_rng(4)
    feed = rng.integers(0, 2, (2, 5)).astype(bool) if dtype == np.bool_ else _values(rng, (2, 5), dtype)
    for opset in (17, 18):
        _all_agree(xml, {"x": feed}, np.invert(feed), opset=opset)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int8])
def test_integer_logic_below_opset_18_every_bit(tmp_path, dtype):
    """The bit-by-bit form at opset 17, on the extreme bit patterns (sign bit, all ones), with
    scalar and rank-3 operands broadcast; no ONNX Bitwise op is emitted."""
    a, b = ov_parameter([], dtype, "a"), ov_parameter([2, 1, 3], dtype, "b")
    xml = ov_save(tmp_path / "m.xml", [f(a, b) for f, _ in LOGIC.values()], [a, b])
    info = np.iinfo(dtype)
    b_val = np.array([info.min, info.max, 0, 1, -1 if info.min else info.max - 1, 5], dtype).reshape(2, 1, 3)
    for a_val in (info.min, info.max, 0x55 if dtype == np.int8 else 0x5555):
        feeds = {"a": np.array(a_val, dtype), "b": b_val}
        got = run_onnx(xml, feeds, opset=17)
        for g, (_, fn) in zip(got, LOGIC.values()):
            assert_bitexact(g, fn(feeds["a"], feeds["b"]))
    assert not {"BitwiseAnd", "BitwiseOr", "BitwiseXor"} & {n.op_type for n in convert(xml, opset=17).graph.node}


def test_float_operands_are_invalid(tmp_path):
    from ir2onnx.testing import IRWriter

    w = IRWriter()
    a = w.parameter([3], "f32", "a")
    w.result(w.layer("BitwiseOr", "opset13", [a, a], {"auto_broadcast": "numpy"}, [("f32", [3])], name="bo")[0])
    with pytest.raises(InvalidLayer, match="bo.*boolean or integer inputs, got f32"):
        convert(w.save(tmp_path / "m.xml"), opset=18)


def _shift_ir(tmp_path, dtype, left, a_shape=(None, 4), b_shape=(4,)):
    a, b = ov_parameter(list(a_shape), dtype, "a"), ov_parameter(list(b_shape), dtype, "b")
    node = (ops.bitwise_left_shift if left else ops.bitwise_right_shift)(a, b)
    return ov_save(tmp_path / "s.xml", node, [a, b])


def _numpy_shift(a, b, left):
    with np.errstate(over="ignore"):
        return (np.left_shift if left else np.right_shift)(a, b)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dtype", INTS)
def test_shifts_in_range(tmp_path, dtype, left):
    """Every amount in [0, bits) on values across the type's range (negative ones for signed
    types: the right shift is arithmetic), at opset 17 (BitShift needs 11) and 18. OpenVINO's CPU
    plugin computes 32/64-bit shifts as i32 (u32 >> shifts the top bit in; 64-bit values are
    truncated), so it is compared on values below 2^15 and amounts below 16 for those types."""
    bits = np.dtype(dtype).itemsize * 8
    xml = _shift_ir(tmp_path, dtype, left, (None, bits), (bits,))
    rng = np.random.default_rng(bits)
    a = _values(rng, (3, bits), dtype)
    if np.dtype(dtype).kind == "i":
        a[0] = np.iinfo(dtype).min
    b = np.arange(bits).astype(dtype)
    for opset in (17, 18):
        _all_agree(xml, {"a": a, "b": b}, _numpy_shift(a, b, left), opset=opset, openvino=bits <= 16)
    if bits > 16:
        low = -2**15 if np.dtype(dtype).kind == "i" else 0
        safe = {"a": rng.integers(low, 2**15, (3, bits)).astype(dtype), "b": (b % 16).astype(dtype)}
        _all_agree(xml, safe, _numpy_shift(safe["a"], safe["b"], left))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_shift_amounts_out_of_range(tmp_path, dtype):
    """Amounts >= bits or negative (undefined in the spec): 0 for <<, the sign fill for >>, as
    PyTorch does. OpenVINO's CPU plugin shifts 8/16-bit types in 32 bits and 32/64-bit types by
    the amount modulo 32 (measured: i32 -100 << 32 = -100), so it is not compared here."""
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    amounts = [bits, bits + 1, 2 * bits + 1, np.iinfo(dtype).max] + ([-1, -bits, np.iinfo(dtype).min] if signed else [])
    b = np.array(amounts, dtype)
    a = np.array([(-100 if signed else 100), 5] * 4, dtype)[: len(amounts)]
    assert (a < 0).any() == signed
    for left in (True, False):
        xml = _shift_ir(tmp_path, dtype, left, (len(amounts),), (len(amounts),))
        fill = np.where(a < 0, -1, 0).astype(dtype)
        _all_agree(xml, {"a": a, "b": b}, np.zeros_like(a) if left else fill, openvino=False)


def test_shift_broadcast_and_constant_amount(tmp_path):
    a = ov_parameter([2, 1, 3], np.int16, "a")
    node = ops.bitwise_right_shift(a, ops.constant(np.array([[1], [15]], np.int16)))
    xml = ov_save(tmp_path / "s.xml", node, [a])
    x = np.array([[[-32768, -1, 7]], [[32767, -300, 300]]], np.int16)
    got = run_onnx(xml, {"a": x})[0]
    assert_bitexact(got, x >> np.array([[1], [15]], np.int16))
    assert_bitexact(got, run_openvino(xml, {"a": x})[0], "openvino")


def test_constants_fold(tmp_path):
    x = ov_parameter([3], np.int32, "x")
    c = ops.bitwise_left_shift(ops.constant(np.array([1, -1, 3], np.int32)), ops.constant(np.array([31, 4, 40], np.int32)))
    xml = ov_save(tmp_path / "f.xml", ops.add(x, c), [x])
    model = convert(xml)
    assert "BitShift" not in [n.op_type for n in model.graph.node]
    got = run_onnx(xml, {"x": np.zeros(3, np.int32)})[0]
    assert got.tolist() == [-2**31, -16, 0]
