"""Convert-1: Parameter -> Convert -> Result for every element type pair onnxruntime can run,
against the Convert oracle (values chosen in range of every type: conversion is then exact);
ConvertLike-1 below."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.ir.element_types import TYPES
from ir2onnx.oracles.conversion import convert_array
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

SOURCES = ["f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i64", "i32", "i16", "i8",
           "u64", "u32", "u16", "u8", "boolean"]
# bf16 outputs cannot be read through onnxruntime's Python API; they are covered as sources
DESTINATIONS = ["f64", "f32", "f16", "f8e4m3", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "boolean"]
VALUES = np.array([[0.0, 1.0, 2.5], [3.75, 6.0, 0.5]])  # exact in f8e5m2, truncate to 0..6


def _model(tmp_path, src, dst, shape=(2, 3)):
    w = IRWriter("rt")
    x = w.parameter(list(shape), src, "x")
    y = w.layer("Convert", "opset1", [x], {"destination_type": dst}, [(dst, shape)], out_names=["y"])[0]
    w.result(y)
    return w.save(tmp_path / f"{src}_{dst}.xml")


def _input(src):
    if src == "boolean":
        return VALUES > 1
    dtype = TYPES[src].numpy
    return (np.trunc(VALUES) if TYPES[src].is_integer else VALUES).astype(dtype)


@pytest.mark.parametrize("dst", DESTINATIONS)
@pytest.mark.parametrize("src", SOURCES)
def test_convert_round_trip(tmp_path, src, dst):
    xml = _model(tmp_path, src, dst)
    x = _input(src)
    opset = max(17, TYPES[src].min_opset, TYPES[dst].min_opset)
    (y,) = run_onnx(xml, [x], opset=opset)
    assert_bitexact(y, convert_array(x, TYPES[dst].numpy), f"{src}->{dst}")


@pytest.mark.parametrize("src,dst", [("f32", "i32"), ("f16", "f32"), ("i32", "u8"), ("f32", "boolean"),
                                     ("u8", "f16"), ("i64", "i32")])
def test_oracle_agrees_with_openvino(tmp_path, src, dst):
    xml = _model(tmp_path, src, dst)
    x = (np.array([[0.0, 1.9, -2.9], [7.5, -0.2, 100.0]]) if TYPES[src].is_float
         else np.array([[0, 1, 2], [3, 200, 7]])).astype(TYPES[src].numpy)
    (expected,) = run_openvino(xml, [x])
    assert_bitexact(convert_array(x, TYPES[dst].numpy), expected, f"{src}->{dst}")


def test_dynamic_shape_round_trip(tmp_path):
    xml = _model(tmp_path, "f16", "f32", shape=(None, 3))
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float16)
        (y,) = run_onnx(xml, [x])
        assert_bitexact(y, x.astype(np.float32))


def test_bf16_const_folded_exactly(tmp_path):
    w = IRWriter("bf")
    c = w.const(np.array([1.5, -2.0, 3.0e10], ml_dtypes.bfloat16), etype="bf16")
    y = w.layer("Convert", "opset1", [c], {"destination_type": "f32"}, [("f32", (3,))], out_names=["y"])[0]
    w.result(y)
    (y,) = run_onnx(w.save(tmp_path / "bf.xml"), [])
    assert_bitexact(y, np.array([1.5, -2.0, 3.0e10], ml_dtypes.bfloat16).astype(np.float32))


# -- ConvertLike-1 ---------------------------------------------------------------------------
# On OpenVINO-written IR against the oracle and OpenVINO: bit-exact.
def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


def _save_const_model(path, node):
    ov.save_model(ov.Model([ops.result(node)], [], path.stem), str(path))
    return path


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.float16), (np.int64, np.float32),
                                     (np.float16, np.float32), (np.int32, np.uint8), (np.float32, np.bool_)])
def test_convert_like(tmp_path, src, dst):
    x = ov_parameter((2, None), src, "x")
    like = ops.constant(np.zeros((3,), dst))
    xml = ov_save(tmp_path / "cl.xml", ops.convert_like(x, like), [x])
    rng = np.random.default_rng(0)
    v = (rng.uniform(0, 100, (2, 5)) * np.where(rng.random((2, 5)) < 0.3, 0, 1)).astype(src)
    got = run_onnx(xml, {"x": v})[0]
    assert_bitexact(got, _oracle(xml, {"x": v})[0])
    assert_bitexact(got, run_openvino(xml, {"x": v})[0])
    assert got.dtype == np.dtype(dst)
    assert not convert(xml).graph.initializer  # the like-input's values are not in the model


def test_convert_like_runtime_like_and_folding(tmp_path):
    x = ov_parameter((4,), np.float32, "x")
    like = ov_parameter((1,), np.int64, "like")
    xml = ov_save(tmp_path / "cl_rt.xml", ops.convert_like(x, like), [x, like])
    v = np.array([1.9, -2.7, 0.0, 300.5], np.float32)
    feeds = {"x": v, "like": np.zeros(1, np.int64)}
    assert_bitexact(run_onnx(xml, feeds)[0], np.array([1, -2, 0, 300], np.int64))
    assert_bitexact(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0])
    c = ops.convert_like(ops.constant(np.array([1.5, 2.5], np.float32)), ops.constant(np.zeros(1, np.int32)))
    path = _save_const_model(tmp_path / "cl_fold.xml", c)
    assert [n.op_type for n in convert(path).graph.node] == ["Identity"]  # folded like Convert-1
    assert_bitexact(run_onnx(path, {})[0], np.array([1, 2], np.int32))


def test_f16_round_trip_rounds_where_openvino_skips_it(tmp_path):
    """Convert(f16) -> Convert(f32), as torch's ``x.half().float()`` writes it: ir2onnx rounds to
    f16 as torch and numpy do; OpenVINO 2026.4's CPU plugin drops the pair (measured: the input
    comes back unrounded), a deviation listed in the README."""
    x = ov_parameter([None, 4], np.float32, "x")
    xml = ov_save(tmp_path / "r.xml", ops.convert(ops.convert(x, np.float16), np.float32), [x])
    data = np.array([[1.0001, 3.14159265, 1e-8, 70000.0]], np.float32)
    with np.errstate(over="ignore"):  # 70000 overflows f16 to inf, as intended
        want = data.astype(np.float16).astype(np.float32)
    assert_bitexact(run_onnx(xml, {"x": data})[0], want)
    assert_bitexact(next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), want)
    assert_bitexact(run_openvino(xml, {"x": data})[0], data)


# values exact in f16, so that OpenVINO's CPU plugin (it rounds f32 to f16 first) rounds once too
F8_EDGES = np.array([448, 455, 464, 465, 470, 480, 1e6, -464, -465, np.inf, -np.inf, np.nan,
                     57344, 60000, 61440, 65504, -61440, 0.0009765625, 0.0014, 0.5], np.float32)


@pytest.mark.parametrize("src", ["f32", "f16", "i32"])
@pytest.mark.parametrize("dst", ["f8e4m3", "f8e5m2"])
def test_float8_overflow_is_nan_or_infinity(tmp_path, src, dst):
    """Convert to f8 rounds to nearest even, and a value that rounds past the largest finite f8
    is NaN in f8e4m3fn (which has no infinity) and a signed infinity in f8e5m2, as OpenVINO gives
    it and ONNX's Cast(saturate=0) defines it (the ONNX node tests test_cast_no_saturate_FLOAT_to_
    FLOAT8E4M3FN and _FLOAT16_: converted by OpenVINO to a plain Convert); the lowering once
    saturated to 448 / 57344, and onnxruntime's Cast(saturate=0) alone gives 448 for 480 and NaN
    for f8e5m2 from 61440 up."""
    dtype = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[src]
    x = F8_EDGES.astype(dtype) if src != "i32" else np.array([448, 464, 465, 480, 61408, 61440, -70000, 7], np.int32)
    xml = _model(tmp_path, src, dst, shape=x.shape)
    f8 = TYPES[dst].numpy
    want = x.astype(np.float64).astype(np.float32).astype(f8)  # ml_dtypes: one rounding, NaN / inf past the end
    _same_float8(run_onnx(xml, {"x": x})[0], want, "onnxruntime vs ml_dtypes")
    _same_float8(next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), want, "oracle vs ml_dtypes")
    ov_out = run_openvino(xml, {"x": x})[0]
    _same_float8(ov_out.view(f8) if ov_out.dtype == np.uint8 else ov_out, want, "OpenVINO vs ml_dtypes")


def _same_float8(got, want, what):
    """Bit for bit where not NaN (signed zeros included); NaN where NaN (f8 NaNs differ in sign)."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan), f"{what}: NaNs differ"
    assert got[~nan].tobytes() == want[~nan].tobytes(), f"{what}: values differ"
