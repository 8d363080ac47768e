"""The IR reader on files written by OpenVINO itself and on hand-written XML."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.ir.element_types import TYPES
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino


def _save(model, path, compress):
    ov.save_model(model, str(path), compress_to_fp16=compress)
    return path


def _weights_model():
    """x[?, 4] -> Convert f16 -> Result, and a (compressible) f32 Const output."""
    x = ops.parameter([-1, 4], np.float32, name="x")
    w = ops.constant(np.array([[0.5, -1.25, 2.0, 3.0]], np.float32))
    y = ops.convert(x, "f16")
    return ov.Model([ops.result(y), ops.result(w)], [x], "weights")


@pytest.mark.parametrize("compress", [True, False])
def test_openvino_written_weights(tmp_path, compress):
    xml = _save(_weights_model(), tmp_path / "w.xml", compress)
    g = ir2onnx.load_ir(xml)
    consts = [l for l in g.order if l.type == "Const"]
    assert len(consts) == 1
    assert consts[0].const.etype.name == ("f16" if compress else "f32")
    assert_bitexact(consts[0].const.array().astype(np.float32), np.array([[0.5, -1.25, 2.0, 3.0]], np.float32))
    assert g.parameters[0].attrs["shape"] == (None, 4)
    x = np.array([[1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 60000.0]], np.float32)
    ours, theirs = run_onnx(xml, [x]), run_openvino(xml, [x])
    for a, b in zip(ours, theirs):
        assert_bitexact(a, b)


def test_fp16_compressed_keeps_half_size_initializer(tmp_path):
    """The f16 Const -> Convert f32 pattern: an f16 initializer and a Cast, checked by full_check."""
    big = ops.constant(np.linspace(-1, 1, 5000, dtype=np.float32).reshape(1, 5000))
    model = ov.Model([ops.result(big)], [], "big")
    xml = _save(model, tmp_path / "big.xml", True)
    m = ir2onnx.convert(xml)
    onnx.checker.check_model(m, full_check=True)
    assert [t.data_type for t in m.graph.initializer] == [onnx.TensorProto.FLOAT16]
    assert [n.op_type for n in m.graph.node] == ["Cast", "Identity"]
    (y,) = run_onnx(xml, [])
    assert_bitexact(y, run_openvino(xml, [])[0])


def test_tensor_names_and_io_order(tmp_path):
    a = ops.parameter([2], np.float32, name="first")
    b = ops.parameter([3], np.int32, name="second")
    ra, rb = ops.convert(b, "f32"), ops.convert(a, "i32")
    ra.output(0).get_tensor().set_names({"out_b"})
    rb.output(0).get_tensor().set_names({"out_a"})
    xml = _save(ov.Model([ops.result(ra), ops.result(rb)], [a, b], "names"), tmp_path / "n.xml", False)
    m = ir2onnx.convert(xml)
    assert [i.name for i in m.graph.input] == ["first", "second"]
    assert [o.name for o in m.graph.output] == ["out_b", "out_a"]
    assert m.producer_name == "ir2onnx" and m.producer_version == ir2onnx.__version__
    assert {p.key: p.value for p in m.metadata_props}["source_model"] == "names"


def test_dynamic_and_bounded_dims_become_symbolic(tmp_path):
    x = ops.parameter(ov.PartialShape([ov.Dimension(1, 8), -1, 3]), np.float32, name="x")
    xml = _save(ov.Model([ops.result(ops.convert(x, "f16"))], [x], "dyn"), tmp_path / "d.xml", False)
    text = xml.read_text()
    assert "1..8" in text
    m = ir2onnx.convert(xml)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["x_d0", "x_d1", 3]
    for shape in [(1, 1, 3), (7, 4, 3)]:
        v = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        assert_bitexact(run_onnx(xml, [v])[0], v.astype(np.float16))


def test_scalar_parameter_and_const(tmp_path):
    w = IRWriter("scalar")
    x = w.parameter([], "i32", "x")
    c = w.const(np.array(7, np.int64))
    y = w.layer("Convert", "opset1", [x], {"destination_type": "i64"}, [("i64", ())], out_names=["y"])[0]
    w.result(y)
    w.result(c)
    m = ir2onnx.convert(w.save(tmp_path / "s.xml"))
    assert len(m.graph.input[0].type.tensor_type.shape.dim) == 0
    y, c = run_onnx(tmp_path / "s.xml", [np.array(5, np.int32)])
    assert y.shape == () and y == 5 and c == 7


def test_topological_order_from_edges_not_file_order(tmp_path):
    w = IRWriter("order")
    x = w.parameter([2], "f32", "x")
    a = w.layer("Convert", "opset1", [x], {"destination_type": "f16"}, [("f16", (2,))])[0]
    b = w.layer("Convert", "opset1", [a], {"destination_type": "f32"}, [("f32", (2,))], out_names=["y"])[0]
    w.result(b)
    w.layers.reverse()  # Result first, Parameter last in the file
    xml = w.save(tmp_path / "o.xml")
    g = ir2onnx.load_ir(xml)
    assert [l.type for l in g.order] == ["Parameter", "Convert", "Convert", "Result"]
    assert_bitexact(run_onnx(xml, [np.array([1.5, 2.0], np.float32)])[0], np.array([1.5, 2.0], np.float32))


def test_shared_and_overlapping_offsets(tmp_path):
    w = IRWriter("share")
    w.const(np.arange(8, dtype=np.int32))
    text = w.xml()
    w2 = IRWriter("share")
    w2.bin = bytearray(np.arange(8, dtype=np.int32).tobytes())
    for name, off, n in [("a", 0, 8), ("b", 0, 8), ("c", 8, 4)]:  # a and b share, c overlaps both
        lid = w2._id()
        w2.layers.append(f'<layer id="{lid}" name="{name}" type="Const" version="opset1"><data element_type="i32" '
                         f'shape="{n}" offset="{off}" size="{n * 4}"/><output><port id="0" precision="I32">'
                         f'<dim>{n}</dim></port></output></layer>')
        w2.result(ir2onnx.testing.Ref(lid, 0, "i32", (n,)), name=f"r{name}")
    assert "Const" in text
    xml = w2.save(tmp_path / "sh.xml")
    a, b, c = run_onnx(xml, [])
    assert_bitexact(a, np.arange(8, dtype=np.int32))
    assert_bitexact(b, np.arange(8, dtype=np.int32))
    assert_bitexact(c, np.arange(2, 6, dtype=np.int32))


@pytest.mark.parametrize("etype,values", [
    ("u4", np.array([1, 2, 3, 4, 5, 15, 0], np.uint8)),
    ("i4", np.array([-1, 2, -3, 7, -8], np.int8)),
    ("u1", np.array([1, 0, 1, 1, 0, 0, 0, 0, 1, 1], np.uint8)),
    ("bf16", np.array([1.5, -2.0, 3.0e10], np.float32)),
    ("f8e4m3", np.array([0.5, -448.0, 3.0], np.float32)),
    ("f8e5m2", np.array([0.5, -57344.0, 3.0], np.float32)),
])
def test_sub_byte_and_narrow_float_consts_read_from_openvino(tmp_path, etype, values):
    ov_type = {"u4": ov.Type.u4, "i4": ov.Type.i4, "u1": ov.Type.u1, "bf16": ov.Type.bf16,
               "f8e4m3": ov.Type.f8e4m3, "f8e5m2": ov.Type.f8e5m2}[etype]
    c = ops.constant(values, dtype=ov_type)
    xml = _save(ov.Model([ops.result(ops.convert(c, "f32"))], [], "sub"), tmp_path / "sb.xml", False)
    g = ir2onnx.load_ir(xml)
    const = next(l for l in g.order if l.type == "Const")
    assert const.const.etype.name == etype
    read = const.const.array().astype(np.float32)
    expected = values.astype(TYPES[etype].numpy) if TYPES[etype].is_float else values
    assert_bitexact(read, expected.astype(np.float32))
    assert_bitexact(run_onnx(xml, [])[0], run_openvino(xml, [])[0])


def test_weights_path_defaults_to_stem(tmp_path):
    xml = _save(_weights_model(), tmp_path / "w.xml", True)
    g = ir2onnx.load_ir(xml)
    assert g.bin_path == str(tmp_path / "w.bin")
    moved = tmp_path / "other.bin"
    (tmp_path / "w.bin").rename(moved)
    g2 = ir2onnx.load_ir(xml, moved)
    assert g2.bin_path == str(moved)


def test_ir_v10_and_comma_space_lists(tmp_path):
    w = IRWriter("v10", version=10)
    c = w.const(np.arange(6, dtype=np.float32).reshape(2, 3))
    w.result(c)
    xml = w.save(tmp_path / "v10.xml")
    xml.write_text(re.sub(r'shape="2,3"', 'shape="2, 3"', xml.read_text()))
    g = ir2onnx.load_ir(xml)
    assert g.ir_version == 10
    assert_bitexact(run_onnx(xml, [])[0], np.arange(6, dtype=np.float32).reshape(2, 3))


def test_const_is_memory_mapped_not_copied(tmp_path):
    xml = _save(_weights_model(), tmp_path / "w.xml", False)
    const = next(l for l in ir2onnx.load_ir(xml).order if l.type == "Const")
    arr = const.const.array()
    assert not arr.flags.owndata and not arr.flags.writeable


def test_every_table_type_has_numpy_or_is_refused():
    for t in TYPES.values():
        assert t.numpy is not None or t.name == "string"
    assert TYPES["bf16"].numpy == np.dtype(ml_dtypes.bfloat16)


def test_outputs_follow_ir_order_not_lowering_order(tmp_path):
    w = IRWriter("order")
    x = w.parameter([2], "f32", "x")
    chain = x
    for _ in range(3):
        chain = w.layer("Convert", "opset1", [chain], {"destination_type": "f32"}, [("f32", (2,))])[0]
    short = w.layer("Convert", "opset1", [x], {"destination_type": "f16"}, [("f16", (2,))], out_names=["short"])[0]
    long = w.layer("Convert", "opset1", [chain], {"destination_type": "i32"}, [("i32", (2,))], out_names=["long"])[0]
    w.result(long)  # first in the file, but ready last
    w.result(short)
    m = ir2onnx.convert(w.save(tmp_path / "o.xml"))
    assert [o.name for o in m.graph.output] == ["long", "short"]


def test_untyped_input_ports_take_their_producers_type(tmp_path):
    """Model Optimizer's IR v10 writes precision on output ports only: an input port without one
    has its producer's declared type (the precision pass, the oracles and check rely on it)."""
    w = IRWriter("mo", version=10)
    x = w.parameter((2, 3), "f16", "x")
    y = w.layer("ReLU", "opset1", [x], None, [("f16", (2, 3))])[0]
    w.result(y)
    xml = w.save(tmp_path / "mo.xml")
    text = re.sub(r"<input>.*?</input>", lambda m: re.sub(r' precision="[^"]*"', "", m.group(0)),
                  xml.read_text(), flags=re.S)
    assert not any("precision" in block for block in re.findall(r"<input>.*?</input>", text, flags=re.S))
    xml.write_text(text)
    graph = ir2onnx.load_ir(xml)
    assert {l.type: l.inputs[0].etype.name for l in graph.order if l.inputs} == {"ReLU": "f16", "Result": "f16"}
