"""Integer Convolution / GroupConvolution / MatMul as OpenVINO writes them: its ONNX frontend
turns ConvInteger and MatMulInteger into Convert(i32), Subtract(zero point) and an i32
Convolution or MatMul. ir2onnx lowers the i32 Convolution through ConvInteger on the operands'
bytes, exact modulo 2^32; i32 MatMul is ONNX MatMul. Compared bit for bit with onnxruntime on the
original ONNX model (the framework), the oracle and OpenVINO (which agrees while no sum
overflows i32)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _round_trip(tmp_path, op, x_shape, w, attrs, x_type=T.UINT8):
    """An ONNX ``op`` model (x: run-time, dynamic batch; w and zero points constant) read by
    OpenVINO and saved as IR; returns (onnx bytes, xml)."""
    w_type = T.INT8 if w.dtype == np.int8 else T.UINT8
    inits = [h.make_tensor("w", w_type, w.shape, w.reshape(-1).tolist()),
             h.make_tensor("xz", x_type, [], [3]), h.make_tensor("wz", w_type, [], [2])]
    graph = h.make_graph([h.make_node(op, ["x", "w", "xz", "wz"], ["y"], **attrs)], "g",
                         [h.make_tensor_value_info("x", x_type, ["n", *x_shape[1:]])],
                         [h.make_tensor_value_info("y", T.INT32, None)], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / f"{op}.onnx"
    onnx.save(model, path)
    xml = tmp_path / f"{op}.xml"
    ov.save_model(ov.Core().read_model(str(path)), str(xml))
    return model.SerializeToString(), xml


@pytest.mark.parametrize("w_dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("attrs", [{}, {"strides": [2, 1], "pads": [1, 0, 1, 2], "dilations": [1, 2]}, {"group": 2}],
                         ids=["plain", "strided-padded-dilated", "grouped"])
def test_conv_integer_round_trip(tmp_path, w_dtype, attrs):
    info = np.iinfo(w_dtype)
    w = np.random.default_rng(0).integers(info.min, info.max + 1, (4, 4 // attrs.get("group", 1), 3, 3)).astype(w_dtype)
    source, xml = _round_trip(tmp_path, "ConvInteger", [2, 4, 7, 6], w, attrs)
    text = xml.read_text()
    assert 'precision="I32"' in text and ('type="Convolution"' in text or 'type="GroupConvolution"' in text)
    x = np.random.default_rng(1).integers(0, 256, (2, 4, 7, 6)).astype(np.uint8)
    got = run_onnx(xml, {"x": x})[0]
    want = ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert_bitexact(got, want, "vs ONNX ConvInteger")
    assert_bitexact(got, list(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())[0], "vs oracle")
    assert_bitexact(got, run_openvino(xml, {"x": x})[0], "vs OpenVINO")


def test_matmul_integer_round_trip(tmp_path):
    w = np.random.default_rng(2).integers(-128, 128, (5, 3)).astype(np.int8)
    source, xml = _round_trip(tmp_path, "MatMulInteger", [2, 5], w, {})
    assert 'type="MatMul"' in xml.read_text()
    x = np.random.default_rng(3).integers(0, 256, (4, 5)).astype(np.uint8)
    got = run_onnx(xml, {"x": x})[0]
    want = ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert_bitexact(got, want, "vs ONNX MatMulInteger")
    assert_bitexact(got, run_openvino(xml, {"x": x})[0], "vs OpenVINO")


def test_i32_group_convolution_wraps_exactly(tmp_path):
    """Full-range i32 operands: every byte pair counts; the result is the sum modulo 2^32."""
    x, w = ov_parameter([None, 4, None, None], np.int32), ov_parameter([2, 2, 2, 3, 3], np.int32, "w")
    xml = ov_save(tmp_path / "g.xml", ops.group_convolution(x, w, [2, 1], [1, 0], [0, 1], [1, 2]), [x, w])
    rng = np.random.default_rng(4)
    feeds = {"x": rng.integers(-2**31, 2**31, (2, 4, 6, 7)).astype(np.int32),
             "w": rng.integers(-2**31, 2**31, (2, 2, 2, 3, 3)).astype(np.int32)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0], "vs oracle")
    # one element by Python integers: y[0, 0, 1, 0] reads rows 1..3 (stride 2, pad 1), columns 0, 2, 4
    acc = sum(int(feeds["x"][0, c, 1 + kh, 2 * kw]) * int(feeds["w"][0, 0, c, kh, kw])
              for c in range(2) for kh in range(3) for kw in range(3)) % (1 << 32)
    assert int(got[0, 0, 1, 0]) == (acc - (1 << 32) if acc >= 1 << 31 else acc)
    feeds = {"x": rng.integers(-300, 300, (1, 4, 5, 5)).astype(np.int32),
             "w": rng.integers(-300, 300, (2, 2, 2, 3, 3)).astype(np.int32)}
    assert_bitexact(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0], "vs OpenVINO without overflow")


def test_i8_convolution_is_refused(tmp_path):
    x = ov_parameter([1, 2, 4, 4], np.int8)
    xml = ov_save(tmp_path / "i8.xml", ops.convolution(x, ops.constant(np.ones((1, 2, 2, 2), np.int8)),
                                                       [1, 1], [0, 0], [0, 0], [1, 1]), [x])
    with pytest.raises(UnsupportedLayer, match="i8 is not supported"):
        convert(xml)
