"""Weights written once and streamed: Consts that share a .bin region become one initializer, and
compressed weights are sized from dims and type and transposed as they are written."""
from __future__ import annotations

import numpy as np
import onnx
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.lowering import builder
from ir2onnx.testing import ov_compressed_weight, ov_parameter, ov_save


def _shared_ir(tmp_path, copies=12, n=64):
    """``copies`` Adds, each with its own Const of the same values: openvino.save_model stores
    the values once, and every Const of the IR points at that one region."""
    x = ov_parameter([1, n])
    values = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    y = x
    for _ in range(copies):
        y = ops.matmul(y, ops.constant(values), False, False)
    xml = ov_save(tmp_path / "shared.xml", y, [x])
    graph = ir2onnx.load_ir(xml)
    regions = {(l.const.offset, l.const.size) for l in graph.order if l.type == "Const"}
    assert sum(l.type == "Const" for l in graph.order) == copies and len(regions) == 1
    return xml


@pytest.mark.parametrize("external", [False, True])
def test_consts_sharing_a_region_are_one_initializer(tmp_path, external):
    xml = _shared_ir(tmp_path)
    bin_size = xml.with_suffix(".bin").stat().st_size
    out = ir2onnx.convert_file(xml, tmp_path / "m.onnx", external_data=external)
    files = [out] + ([tmp_path / "m.onnx.data"] if external else [])
    size = sum(f.stat().st_size for f in files)
    assert size <= 1.05 * bin_size + 8192, (size, bin_size)  # + the graph and page alignment
    model = onnx.load(str(out))
    weights = [t for t in model.graph.initializer if len(t.dims) == 2]
    assert len(weights) == 1
    assert sum(n.op_type == "MatMul" and weights[0].name in n.input for n in model.graph.node) == 12
    x = np.random.default_rng(1).standard_normal((1, 64)).astype(np.float32)
    got = ir2onnx.runtime.sessions.session(str(out)).run(None, {"x": x})[0]
    want = ir2onnx.testing.run_openvino(xml, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_equal_values_in_different_regions_stay_apart(tmp_path):
    """Only the region decides: IRWriter stores each Const on its own, so two equal Consts are
    two initializers (the bytes are not compared)."""
    w = ir2onnx.testing.IRWriter("apart")
    x = w.parameter([1, 32], "f32", "x")
    values = np.ones((32, 32), np.float32)
    y = x
    for _ in range(2):
        y = w.layer("MatMul", "opset1", [y, w.const(values)], {"transpose_a": False, "transpose_b": False},
                    [("f32", (1, 32))])[0]
    w.result(y)
    model = ir2onnx.convert(w.save(tmp_path / "a.xml"))
    assert sum(len(t.dims) == 2 for t in model.graph.initializer) == 2


def test_compressed_weights_are_sized_without_packing(tmp_path, monkeypatch):
    """A u4 MatMul weight (stored transposed for MatMulNBits) is never packed from an unpacked
    array: its size comes from dims and type, its bytes from a nibble transpose at write time."""
    x = ov_parameter([None, 256])
    xml = ov_save(tmp_path / "q.xml", ops.matmul(x, ov_compressed_weight((64, 256), "u4", 32), False, True), [x])
    want = ir2onnx.convert(xml)
    real_pack = builder.pack

    def small_only(array, etype):
        assert np.asarray(array).size <= 64 * 8, "a weight was packed from an unpacked array"
        return real_pack(array, etype)

    monkeypatch.setattr(builder, "pack", small_only)
    out = ir2onnx.convert_file(xml, tmp_path / "q.onnx")
    assert onnx.load(str(out)) == want


@pytest.mark.parametrize("rows, cols", [(4, 6), (3, 6), (4, 5), (5, 7), (600, 64), (2, 2)])
def test_nibble_transpose(rows, cols):
    from ir2onnx.lowering import packing

    values = np.random.default_rng(rows * cols).integers(0, 16, (rows, cols)).astype(np.uint8)
    packed = np.frombuffer(builder.pack(values, ir2onnx.ir.element_types.TYPES["u4"]), np.uint8)
    want = builder.pack(np.ascontiguousarray(values.T), ir2onnx.ir.element_types.TYPES["u4"])
    assert packing.transpose4(packed, rows, cols).tobytes() == want
