"""The compute precision of floats (``--precision f32|f16|ir``, :mod:`ir2onnx.lowering.precision`).

FP16 IRs of three kinds: IR v10 as Model Optimizer writes it (f16 on every port, f16 Const weights
feeding the Convolution directly), IR v11 from ``openvino.save_model`` (f16 Const -> Convert), and
an FP16-INT8 IR (a FakeQuantize after f16 arithmetic). OpenVINO's CPU plugin runs at f32 inference
precision (the truth the f32 default must match).
"""
from __future__ import annotations

import re

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest
from onnx import TensorProto

import ir2onnx
from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert
from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.lowering import precision
from ir2onnx.testing import (IRWriter, assert_check, ov_compressed_weight, ov_parameter, ov_save,
                             run_openvino)

CONV = {"strides": [1, 1], "pads_begin": [1, 1], "pads_end": [1, 1], "dilations": [1, 1],
        "auto_pad": "explicit"}


def _mo_fp16(path, *, c=16, k=32, hw=16, seed=0, fake_quantize=False, version=10, typed_inputs=False):
    """Parameter(f16) -> Convolution(f16 Const weights) -> Add(f16 bias) -> ReLU
    [-> FakeQuantize(256 levels)] -> Result, as Model Optimizer writes FP16 IRs: output ports say
    f16, input ports say nothing (``typed_inputs``: they say f16 too)."""
    rng = np.random.default_rng(seed)
    w = IRWriter("fp16", version=version)
    x = w.parameter((1, c, hw, hw), "f16", "x")
    weights = w.const((rng.standard_normal((k, c, 3, 3)) * 0.2).astype(np.float16), name="weights")
    out = (1, k, hw, hw)
    y = w.layer("Convolution", "opset1", [x, weights], CONV, [("f16", out)])[0]
    y = w.layer("Add", "opset1", [y, w.const(rng.standard_normal((1, k, 1, 1)).astype(np.float16))],
                None, [("f16", out)])[0]
    y = w.layer("ReLU", "opset1", [y], None, [("f16", out)], out_names=[] if fake_quantize else ["y"])[0]
    if fake_quantize:
        lo, hi = w.const(np.float16(0.0).reshape(1, 1, 1, 1)), w.const(np.float16(7.0).reshape(1, 1, 1, 1))
        y = w.layer("FakeQuantize", "opset1", [y, lo, hi, lo, hi], {"levels": 256, "auto_broadcast": "numpy"},
                    [("f16", out)], out_names=["y"])[0]
    w.result(y)
    xml = w.save(path)
    if not typed_inputs:
        text = xml.read_text()
        text = re.sub(r"<input>.*?</input>", lambda m: re.sub(r' precision="[^"]*"', "", m.group(0)), text, flags=re.S)
        xml.write_text(text)
    return xml


def _io(model: onnx.ModelProto):
    return ([i.type.tensor_type.elem_type for i in model.graph.input],
            [o.type.tensor_type.elem_type for o in model.graph.output])


def _ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    sess = runtime.session(model.SerializeToString(), "cpu")
    return list(runtime.run(sess, feeds).values())


def _node_input_types(model: onnx.ModelProto, op_type: str) -> list[int]:
    """The element type of input 0 of every ``op_type`` node (ONNX shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    types.update({t.name: t.data_type for t in model.graph.initializer})
    return [types.get(n.input[0]) for n in model.graph.node if n.op_type == op_type]


# -- f32 (the default) ----------------------------------------------------------------------------
@pytest.mark.parametrize("typed_inputs", [False, True])
def test_mo_fp16_v10_is_computed_in_f32_with_f32_inputs_and_outputs(tmp_path, typed_inputs):
    xml = _mo_fp16(tmp_path / "mo.xml", typed_inputs=typed_inputs)
    model = convert(xml)
    assert _io(model) == ([TensorProto.FLOAT], [TensorProto.FLOAT])  # as OpenVINO presents IR v10
    assert _node_input_types(model, "Conv") == [TensorProto.FLOAT]
    weights = next(t for t in model.graph.initializer if t.name.startswith("weights"))
    assert weights.data_type == TensorProto.FLOAT16  # stored as in the .bin: half the size
    assert [p.get_element_type() for p in ov.Core().read_model(str(xml)).inputs] == [ov.Type.f32]
    x = np.random.default_rng(1).standard_normal((1, 16, 16, 16)).astype(np.float32)
    (got,), (want,) = _ort(model, {"x": x}), run_openvino(xml, {"x": x})
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)  # f16 arithmetic: ~1e-3
    result = assert_check(xml)  # f32 outputs: compared at the f32 tolerance
    assert result.outputs[0].dtype == "float32"
    assert all(c.rtol == 1e-4 for c in result.outputs[0].comparisons)


def test_ir_mode_keeps_the_literal_f16_types(tmp_path):
    xml = _mo_fp16(tmp_path / "mo.xml")
    model = convert(xml, precision="ir")
    assert _io(model) == ([TensorProto.FLOAT16], [TensorProto.FLOAT16])
    assert _node_input_types(model, "Conv") == [TensorProto.FLOAT16]
    assert "Cast" not in [n.op_type for n in model.graph.node]
    assert_check(xml, precision="ir")  # OpenVINO fed f32 and its outputs rounded to f16


def test_fp16_int8_first_fake_quantize_levels_agree_with_openvino(tmp_path):
    """The first FakeQuantize of an FP16-INT8 IR: converted in f32 (the default), at most 1 in
    100,000 of its levels may differ from OpenVINO's (f32 summation order; measured 1 of 147,456).
    The literal f16 conversion takes the frame rounded to f16 and rounds on f16 ports: 1.0% of the
    levels flip (onnxruntime's CPU provider computes this Conv itself in f32, so the flips come
    from the rounded input and ports)."""
    xml = _mo_fp16(tmp_path / "int8.xml", c=32, k=64, hw=48, fake_quantize=True)
    x = np.random.default_rng(2).standard_normal((1, 32, 48, 48)).astype(np.float32)
    (want,) = run_openvino(xml, {"x": x})
    levels = lambda y: np.round(y.astype(np.float64) * 255 / 7).astype(np.int64)  # noqa: E731
    flips = {}
    for mode in ("f32", "ir"):
        feed = x if mode == "f32" else x.astype(np.float16)
        (got,) = _ort(convert(xml, precision=mode), {"x": feed})
        flips[mode] = np.count_nonzero(levels(got) != levels(want)) / want.size
    assert flips["f32"] <= 1e-5, flips
    assert flips["ir"] > 1e-3, flips  # the test can fail: f16 arithmetic flips levels


def test_v11_keeps_declared_types_and_computes_in_f32(tmp_path):
    """IR v11 from save_model (compress_to_fp16: f16 Const -> Convert) with an f16 input."""
    x = ov_parameter([1, 8], np.float16, "x")
    w = ops.constant(np.random.default_rng(0).standard_normal((8, 1024)).astype(np.float32))
    y = ops.matmul(ops.convert(x, np.float32), w, False, False)
    y = ops.convert(ops.softmax(y, 1), np.float16)
    y.output(0).get_tensor().set_names({"y"})
    xml = ov_save(tmp_path / "v11.xml", y, [x], compress_to_fp16=True)
    model = convert(xml)
    assert _io(model) == ([TensorProto.FLOAT16], [TensorProto.FLOAT16])
    assert any(t.data_type == TensorProto.FLOAT16 and tuple(t.dims) == (8, 1024) for t in model.graph.initializer)
    assert _node_input_types(model, "MatMul") == [TensorProto.FLOAT]
    assert_check(xml)


def test_explicit_convert_to_f16_still_rounds(tmp_path):
    """Convert(f16) -> ReLU -> Convert(f32): the f16 rounding is the model's (torch's
    x.half().float()); f32 mode computes the ReLU in f32 on the rounded values."""
    x = ov_parameter([1, 4], np.float32, "x")
    h = ops.relu(ops.convert(x, np.float16))
    y = ops.convert(ops.multiply(h, ops.constant(np.float16(3.0))), np.float32)
    xml = ov_save(tmp_path / "half.xml", y, [x])
    data = np.array([[1.0001, 3.14159265, -2.0, 20000.0]], np.float32)
    with np.errstate(over="ignore"):
        want = np.maximum(data.astype(np.float16).astype(np.float32), 0) * 3  # 60000: no f16 overflow
    model = convert(xml)
    assert _node_input_types(model, "Relu") == [TensorProto.FLOAT]
    (got,) = _ort(model, {"x": data})
    np.testing.assert_array_equal(got, want)
    with np.errstate(over="ignore"):
        (literal,) = _ort(convert(xml, precision="ir"), {"x": data})
    assert np.isinf(literal[0, 3]) or literal[0, 3] == np.float16(60000)  # f16 arithmetic


def test_f16_state_becomes_f32(tmp_path):
    x = ov_parameter([1, 4], np.float16, "x")
    var = ov.op.util.Variable(ov.op.util.VariableInfo())
    info = ov.op.util.VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape([1, 4]), ov.Type.f16, "acc"
    var = ov.op.util.Variable(info)
    read = ops.read_value(ops.constant(np.zeros((1, 4), np.float16)), var)
    add = ops.add(read, x)
    assign = ops.assign(add, var)
    model = ov.Model([ops.result(add)], [assign], [x], "state")
    ov.save_model(model, str(tmp_path / "state.xml"), compress_to_fp16=False)
    onnx_model = convert(tmp_path / "state.xml")
    types = {i.name: i.type.tensor_type.elem_type for i in onnx_model.graph.input}
    assert types == {"x": TensorProto.FLOAT16, "acc": TensorProto.FLOAT}
    assert_check(tmp_path / "state.xml")


# -- f16 ------------------------------------------------------------------------------------------
def _fp32_net(path):
    """An FP32 IR: Conv -> MVN -> Softmax -> ReduceMean, what f16 mode must keep accurate."""
    rng = np.random.default_rng(3)
    x = ov_parameter([1, 8, 12, 12], np.float32, "x")
    y = ops.convolution(x, ops.constant((rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)),
                        [1, 1], [1, 1], [1, 1], [1, 1])
    y = ops.mvn(y, ops.constant(np.array([2, 3], np.int64)), True, 1e-5, "inside_sqrt")
    y = ops.softmax(ops.relu(y), 1)
    y = ops.reduce_mean(y, ops.constant(np.array([2, 3], np.int64)), True)
    y.output(0).get_tensor().set_names({"y"})
    return ov_save(path, y, [x])


def test_f16_mode_computes_in_f16_and_keeps_the_sensitive_layers_f32(tmp_path):
    xml = _fp32_net(tmp_path / "net.xml")
    model = convert(xml, precision="f16")
    assert _io(model) == ([TensorProto.FLOAT], [TensorProto.FLOAT])  # the IR's types
    assert _node_input_types(model, "Conv") == [TensorProto.FLOAT16]
    assert _node_input_types(model, "Softmax") == [TensorProto.FLOAT]
    # (a ReduceMean over the spatial axes of a 4-D f32 tensor is lowered as GlobalAveragePool)
    assert _node_input_types(model, "ReduceMean") + _node_input_types(model, "GlobalAveragePool") == [TensorProto.FLOAT]
    result = assert_check(xml, precision="f16")  # runs on onnxruntime CPU, within f16 tolerance
    # a [1, C, 1, 1] SoftMax output: at f16, the class rule judges it (docs/check.md), and its
    # elements stay within the f16 element-wise tolerance too
    assert all(c.rule == "class" and c.passed and c.max_abs < 1e-2 for c in result.outputs[0].comparisons)


def test_f16_mode_of_an_fp16_v10_ir(tmp_path):
    xml = _mo_fp16(tmp_path / "mo.xml")
    model = convert(xml, precision="f16")
    assert _io(model) == ([TensorProto.FLOAT], [TensorProto.FLOAT])
    assert _node_input_types(model, "Conv") == [TensorProto.FLOAT16]
    assert_check(xml, precision="f16")


def test_tables_name_known_layer_types():
    from ir2onnx.ir.schema import schemas

    known = {t for t, _ in schemas()}
    for table in (precision.KEEP_F32, precision.ATTRIBUTE_TYPED, precision.TRANSPARENT,
                  precision.SCATTERS, precision.KEEP_INPUTS, precision.ANY_INPUTS):
        assert set(table) <= known, set(table) - known


def test_keep_f32_table_is_documented():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "precision.md").read_text(encoding="utf-8")
    for op in precision.KEEP_F32:
        assert f"`{op}`" in doc, op


# -- compressed weights stay packed ---------------------------------------------------------------
@pytest.mark.parametrize("to_f32", [True, False])
def test_f16_decompression_chain_stays_packed(tmp_path, to_f32):
    x = ov_parameter([2, 64], np.float32 if to_f32 else np.float16, "x")
    w = ov_compressed_weight((32, 64), "u8", zero_point="int", scale_dtype=np.float16, to_f32=to_f32)
    y = ops.matmul(x, w, False, True)
    y.output(0).get_tensor().set_names({"y"})
    xml = ov_save(tmp_path / "w.xml", y, [x])
    for mode in precision.MODES:
        model = convert(xml, precision=mode)
        kinds = [n.op_type for n in model.graph.node]
        assert "DequantizeLinear" in kinds, (mode, kinds)
        assert any(t.data_type == TensorProto.UINT8 and tuple(t.dims) == (64, 32) or tuple(t.dims) == (32, 64)
                   for t in model.graph.initializer if t.data_type == TensorProto.UINT8)
    assert_check(xml)


# -- the graph pass -------------------------------------------------------------------------------
def test_the_pass_leaves_the_callers_graph_alone(tmp_path):
    graph = ir2onnx.load_ir(_mo_fp16(tmp_path / "mo.xml"))
    before = [(l.id, [p.etype.name for p in l.inputs + l.outputs], list(l.sources)) for l in graph.order]
    after = precision.apply(graph, "f32")
    assert [(l.id, [p.etype.name for p in l.inputs + l.outputs], list(l.sources)) for l in graph.order] == before
    literal = precision.apply(graph, "ir")
    assert literal.order is graph.order and literal.precision == "ir" and graph.precision is None
    assert {l.type for l in after.order} - {l.type for l in graph.order} == {"Convert"}
    assert after.parameters[0].attrs["element_type"].name == "f32"


def test_the_graph_records_its_precision_and_is_transformed_once(tmp_path):
    """The mode travels with the graph: applying it again changes nothing, another is refused, and
    the converter converts a transformed graph at its own precision."""
    graph = ir2onnx.load_ir(_mo_fp16(tmp_path / "mo.xml"))
    f16 = precision.apply(graph, "f16")
    assert f16.precision == "f16" and precision.apply(f16, "f16") is f16
    with pytest.raises(Ir2OnnxError, match="already computed in f16"):
        precision.apply(f16, "f32")
    model = ir2onnx.convert(f16, precision="f16")
    assert _node_input_types(model, "Conv") == [TensorProto.FLOAT16]


def test_bad_precision_is_refused(tmp_path):
    xml = _mo_fp16(tmp_path / "mo.xml")
    with pytest.raises(Ir2OnnxError, match="precision='f64'"):
        convert(xml, precision="f64")
    with pytest.raises(Ir2OnnxError, match="precision='bf16'"):
        ir2onnx.check(xml, precision="bf16")


# -- the command line -----------------------------------------------------------------------------
def test_cli_convert_states_the_precision(tmp_path, capsys):
    xml = _mo_fp16(tmp_path / "mo.xml")
    for mode, says in (("f32", "floats computed in f32"), ("f16", "floats computed in f16"),
                       ("ir", "floats in the IR's types")):
        out = tmp_path / f"{mode}.onnx"
        assert main(["convert", str(xml), "-o", str(out), "--precision", mode]) == 0
        assert says in capsys.readouterr().err
    assert main(["convert", str(xml), "-o", str(tmp_path / "d.onnx")]) == 0
    assert "floats computed in f32" in capsys.readouterr().err
    assert _io(onnx.load(tmp_path / "ir.onnx")) == ([TensorProto.FLOAT16], [TensorProto.FLOAT16])
    assert _io(onnx.load(tmp_path / "f16.onnx")) == ([TensorProto.FLOAT], [TensorProto.FLOAT])
    with pytest.raises(SystemExit):
        main(["convert", str(xml), "--precision", "f64"])


def test_cli_run_and_check_take_the_precision(tmp_path, capsys):
    xml = _mo_fp16(tmp_path / "mo.xml")
    assert main(["run", str(xml), "--precision", "ir"]) == 0
    assert "float16" in capsys.readouterr().out
    assert main(["run", str(xml)]) == 0
    assert "float32" in capsys.readouterr().out
    assert main(["check", str(xml), "--precision", "f16", "--no-oracle"]) == 0
    assert "rtol 0.01" in capsys.readouterr().out
