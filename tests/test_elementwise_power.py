"""Power-1 on every integer type: square and multiply in int64, wrapping like PyTorch (the truth:
samples/framework/integer_power, torch's ``a ** b`` through openvino.convert_model), negative
exponents truncated toward zero (0 for every base but 1 and -1, 0 included). onnxruntime's
Pow lacks 8/16-bit and unsigned kernels and goes through double for i32/i64; OpenVINO's CPU
plugin computes integer Power through f32 (saturating or wrapping by type; 0 ** -1 -> the
type's minimum from a float infinity), so it is compared only where no result overflows."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

FRAMEWORK = Path(__file__).resolve().parents[1] / "samples" / "framework" / "integer_power"
TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's exact integer pow, wrapped to the type (PyTorch's results)."""
    a, b = np.broadcast_arrays(a, b)
    bits = a.dtype.itemsize * 8
    out = []
    for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist()):
        r = pow(x, y, 1 << bits) if y >= 0 else (1 if x == 1 or (x == -1 and y % 2 == 0) else (-1 if x == -1 else 0))
        r %= 1 << bits
        out.append(r - (1 << bits) if a.dtype.kind == "i" and r >= 1 << (bits - 1) else r)
    return np.array(out, dtype=np.int64 if a.dtype.kind == "i" else np.uint64).astype(a.dtype).reshape(a.shape)


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "int64"])
def test_torch_integer_pow_round_trip(name):
    xml = FRAMEWORK / f"{name}.xml"
    assert 'type="Power"' in xml.read_text()
    inputs = [np.load(FRAMEWORK / f"{name}_in{k}.npy") for k in (0, 1)]
    got = run_onnx(xml, inputs)[0]
    assert_bitexact(got, np.load(FRAMEWORK / f"{name}_out0.npy"), "vs torch")
    assert_bitexact(got, list(evaluate(ir2onnx.load_ir(xml), {"in0": inputs[0], "in1": inputs[1]}).values())[0])


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_run_time_exponent_every_integer_type(tmp_path, dtype):
    """Exponents across the type's whole range (every exponent bit used), negative ones for the
    signed types, bases with overflow; broadcast over a dynamic dim."""
    info = np.iinfo(dtype)
    a, b = ov_parameter([None, 6], dtype, "a"), ov_parameter([6], dtype, "b")
    xml = ov_save(tmp_path / "p.xml", ops.power(a, b), [a, b])
    rng = np.random.default_rng(0)
    base = rng.integers(max(info.min, -9), 10, (4, 6)).astype(dtype)
    base[0, :3] = [0, 1, info.max]
    if info.min < 0:
        base[1, :2] = [-1, info.min]
    exponent = np.array([info.max, info.max - 1, 0, 1, 3, 7 if info.min >= 0 else -3], dtype)
    feeds = {"a": base, "b": exponent}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, _expected(base, exponent), "vs exact pow")
    assert_bitexact(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], "vs oracle")


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_agrees_with_openvino_without_overflow(tmp_path, dtype):
    a, b = ov_parameter([2, 5], dtype, "a"), ov_parameter([2, 5], dtype, "b")
    xml = ov_save(tmp_path / "p.xml", ops.power(a, b), [a, b])
    signed = np.iinfo(dtype).min < 0
    feeds = {"a": np.array([[2, 3, 1, 0, 5], [-2 if signed else 3, 1, 7, 2, -1 if signed else 6]], dtype),
             "b": np.array([[3, 4, 9, 2, 3], [5, 0, 2, -1 if signed else 1, -3 if signed else 2]], dtype)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, run_openvino(xml, feeds)[0], "vs OpenVINO")
    assert_bitexact(got, _expected(feeds["a"], feeds["b"]), "vs exact pow")


@pytest.mark.parametrize("exponent", [np.int8(2), np.array([0, 5, 7], np.int8), np.array([-1, 2, -2], np.int8)],
                         ids=["scalar", "array", "negative"])
def test_constant_exponent(tmp_path, exponent):
    """A constant exponent: its bits are known, so only the needed squarings are emitted."""
    a = ov_parameter([None, 3], np.int8, "a")
    xml = ov_save(tmp_path / "c.xml", ops.power(a, ops.constant(exponent)), [a])
    model = ir2onnx.convert(xml)
    assert "BitShift" not in {n.op_type for n in model.graph.node}
    base = np.array([[3, -2, 7], [-1, 0, 127], [1, -128, 5]], np.int8)
    assert_bitexact(run_onnx(xml, {"a": base})[0], _expected(base, np.asarray(exponent)))
