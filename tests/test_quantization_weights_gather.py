"""Compressed tables read by a Gather (embeddings, position tables): the packed rows, scales and
zero points are gathered first and only those rows dequantized, bit for bit what dequantizing
the whole table and gathering gives; a table tied to the lm_head MatMul is stored once."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino.opset15 as ops
import pytest

from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert, convert_file
from ir2onnx.lowering import compressed_gather
from ir2onnx.testing import assert_bitexact, ov_compressed_weight, ov_parameter, ov_save, run_openvino

V, H = 40, 64
CASES = [  # etype, group, zero point, scale dtype, to f32, f8e8m0 scales
    ("u8", None, "int", np.float16, True, False), ("i8", None, None, np.float16, True, False),
    ("u8", None, "scalar", np.float32, True, False), ("u8", 16, "int", np.float16, True, False),
    ("u4", 32, "int", np.float16, True, False), ("u4", None, "int", np.float16, False, False),
    ("i4", 16, None, np.float16, True, False), ("i4", 32, "int", np.float32, True, False),
    ("f8e4m3", 32, None, np.float16, True, False), ("f8e5m2", None, None, np.float32, True, False),
    ("nf4", 32, None, np.float16, True, False), ("nf4", None, None, np.float16, False, False),
    ("f4e2m1", 32, None, np.float16, True, True),  # MXFP4
    ("f8e4m3", 32, None, np.float16, True, True),  # MXFP8
]


def _embedding_ir(path, etype, group, zp, sdt, to_f32, e8m0, ids_type=np.int64, version=8):
    ids = ov_parameter([None, None], ids_type, "ids")
    table = ov_compressed_weight((V, H), etype, group, zero_point=zp, scale_dtype=sdt, to_f32=to_f32,
                                 e8m0_scale=e8m0)
    gather = ops.gather(table, ids, ops.constant(np.int64(0))) if version == 8 else \
        __import__("openvino.opset1", fromlist=["gather"]).gather(table, ids, ops.constant(np.int64(0)))
    return ov_save(path, gather, [ids])


def _today(monkeypatch, xml, **kw):
    """The model as it was written before: the whole table dequantized, then gathered."""
    with monkeypatch.context() as mp:
        mp.setattr(compressed_gather, "attach", lambda *a: None)
        mp.setattr(compressed_gather, "attach_table", lambda *a: None)
        return convert(xml, **kw)


def _outputs(model, ids):
    return runtime.session(model.SerializeToString()).run(None, {"ids": ids})[0]


def _full_table_readers(model) -> set[str]:
    """The op types that read an initializer holding at least a whole table's codes."""
    big = {t.name for t in model.graph.initializer if int(np.prod(t.dims)) * 8 >= V * H * 4}
    return {n.op_type for n in model.graph.node if big & set(n.input)}


@pytest.mark.parametrize("etype, group, zp, sdt, to_f32, e8m0", CASES)
def test_rows_gathered_first_bit_exact(tmp_path, monkeypatch, etype, group, zp, sdt, to_f32, e8m0):
    xml = _embedding_ir(tmp_path / "e.xml", etype, group, zp, sdt, to_f32, e8m0)
    model, before = convert(xml), _today(monkeypatch, xml)
    assert _full_table_readers(model) == {"Gather"}, _full_table_readers(model)
    assert "DequantizeLinear" in _full_table_readers(before) or "Cast" in _full_table_readers(before)
    ids = np.array([[0, 5, V - 1, 7], [V, -1, -V, 39]], np.int64)  # out of range / negative too
    assert_bitexact(_outputs(model, ids), _outputs(before, ids))
    ids = ids[:1]  # OpenVINO's GatherCompressed reads past the table for out-of-range ids
    want = run_openvino(xml, {"ids": ids})[0]
    # OpenVINO's GatherCompressed rounds nf4 values to f16 first (its MatMul path does not)
    np.testing.assert_allclose(_outputs(model, ids), want, rtol=1e-3 if etype == "nf4" else 1e-6, atol=0)


def test_gather_1_indices_i32_and_constant(tmp_path, monkeypatch):
    xml = _embedding_ir(tmp_path / "e.xml", "u4", 32, "int", np.float16, True, False, np.int32, version=1)
    model, before = convert(xml), _today(monkeypatch, xml)
    ids = np.array([[3, -2, V, 0]], np.int32)  # Gather-1: negative indices give zeros too
    assert_bitexact(_outputs(model, ids), _outputs(before, ids))
    assert not _outputs(model, ids)[0, 1].any() and not _outputs(model, ids)[0, 2].any()


def test_summary_counts_the_gathered_tables(tmp_path):
    xml = _embedding_ir(tmp_path / "e.xml", "u8", None, "int", np.float16, True, False)
    summary: list = []
    convert_file(xml, tmp_path / "e.onnx", summary=summary)
    assert any("1 Gather(s) of a compressed table" in line for line in summary), summary


def _tied_ir(path, etype, group, zp, vocab=256, hidden=128):
    """An embedding Gather and the lm_head MatMul(transpose_b) reading one compressed table."""
    ids = ov_parameter([1, None], np.int64, "ids")
    table = ov_compressed_weight((vocab, hidden), etype, group, zero_point=zp)
    x = ops.gather(table, ids, ops.constant(np.int64(0)))
    logits = ops.matmul(ops.relu(x), table, False, True)
    return ov_save(path, logits, [ids])


def _optimized_ops(model_path, path) -> list[str]:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.optimized_model_filepath = str(path)
    ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    return [n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node]


@pytest.mark.parametrize("etype, group, zp", [("u8", None, "int"), ("i8", None, None), ("u4", 32, "int"),
                                               ("i4", 32, None), ("u4", None, "int")])
@pytest.mark.parametrize("external", [True, False])
def test_tied_table_stored_once(tmp_path, monkeypatch, etype, group, zp, external):
    """One packed copy of a table read by the embedding Gather and the lm_head MatMul, with or
    without external data, the lm_head fused into MatMulNBits by onnxruntime (the Gather reads a
    Cast or Transpose of the table that onnxruntime folds first), and no advice printed."""
    xml = _tied_ir(tmp_path / "t.xml", etype, group, zp)
    bin_size = xml.with_suffix(".bin").stat().st_size
    summary: list = []
    out = convert_file(xml, tmp_path / "t.onnx", summary=summary, external_data=external)
    size = sum(p.stat().st_size for p in tmp_path.glob("t.onnx*"))
    assert size <= 1.05 * bin_size + 3 * 4096, (size, bin_size)  # + page alignment and the graph
    assert any("stored once" in line for line in summary), summary
    assert not any("external-data" in line or "external data" in line for line in summary), summary
    optimized = _optimized_ops(out, tmp_path / "opt.onnx")
    assert "MatMulNBits" in optimized and "MatMul" not in optimized, optimized
    ids = np.array([[0, 17, 255, 3, 300]], np.int64)
    got = runtime.session(out).run(None, {"ids": ids})[0]
    assert_bitexact(got, _outputs(_today(monkeypatch, xml), ids))
    ids = ids[:, :4]  # in range for OpenVINO
    want = run_openvino(xml, {"ids": ids})[0]
    got = runtime.session(out).run(None, {"ids": ids})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_position_table_read_at_computed_positions(tmp_path, monkeypatch):
    """OPT's learned positions: Gather(table, Range(0, seq) + 2), the indices computed in the graph."""
    ids = ov_parameter([1, None], np.int64, "ids")
    seq = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    positions = ops.add(ops.range(ops.constant(np.int64(0)), seq, ops.constant(np.int64(1)), "i64"),
                        ops.constant(np.int64(2)))
    table = ov_compressed_weight((V, H), "u8", None, zero_point="int")
    xml = ov_save(tmp_path / "p.xml", ops.gather(table, ops.unsqueeze(positions, ops.constant(np.int64(0))),
                                                 ops.constant(np.int64(0))), [ids])
    model, before = convert(xml), _today(monkeypatch, xml)
    assert _full_table_readers(model) == {"Gather"}
    ids_in = np.zeros((1, 7), np.int64)
    assert_bitexact(_outputs(model, ids_in), _outputs(before, ids_in))
    np.testing.assert_allclose(_outputs(model, ids_in), run_openvino(xml, {"ids": ids_in})[0], rtol=1e-6, atol=0)
