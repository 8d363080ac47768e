"""Parameter -> Convert -> Result for every element type pair onnxruntime can run, against the
Convert oracle (values chosen in range of every type: conversion is then exact)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ir2onnx.ir.element_types import TYPES
from ir2onnx.oracles.conversion import convert_array
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino

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
