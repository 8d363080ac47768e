"""nf4 and f4e2m1 compressed weights (NNCF NF4 / FP4 / MXFP4) kept packed: UINT4 codes + Gather.

IRs are written by OpenVINO from ``ir2onnx.testing.ov_compressed_weight``: Const(nf4 | f4e2m1)
of random 4-bit codes -> Convert -> Multiply(scale: f16/f32 Const, or f8e8m0 Const -> Convert)
-> [Reshape] -> [Convert f32], the chains NNCF 3.4 writes. OpenVINO runs without its dynamic
quantization of activations (as ``ir2onnx check`` runs it).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import openvino.opset15 as ops
import pytest

from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert, convert_file
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.ir.element_types import NF4_VALUES
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, assert_check, ov_compressed_weight, ov_parameter, ov_save, run_openvino

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "real"
# OpenVINO's own conversion of the 16 codes, read off its CPU plugin once (2026.4)
F4E2M1_VALUES = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]

CASES = [  # etype, group, scale dtype, f8e8m0 scales
    ("nf4", 32, np.float16, False), ("nf4", 64, np.float32, False), ("nf4", None, np.float16, False),
    ("f4e2m1", 32, np.float16, True), ("f4e2m1", 32, np.float16, False), ("f4e2m1", None, np.float32, False),
]


def _matmul_ir(path, etype, group, sdt, e8m0, n=32, k=256, seed=0):
    x = ov_parameter([None, k])
    w = ov_compressed_weight((n, k), etype, group, zero_point=None, scale_dtype=sdt, seed=seed, e8m0_scale=e8m0)
    return ov_save(path, ops.matmul(x, w, False, True), [x])


def _ops(model):
    return [n.op_type for n in model.graph.node]


def _run(model, x):
    return runtime.session(model.SerializeToString()).run(None, {"x": x})[0]


def _weight_const(graph):
    return next(l.const for l in graph.order if l.type == "Const" and l.const.etype.name in ("nf4", "f4e2m1"))


def test_the_tables_are_openvinos():
    """The reader's values of the 16 codes: OpenVINO's nf4 table and f4e2m1 conversion."""
    import openvino as ov

    codes = np.arange(16, dtype=np.uint8)
    for etype, want in (("nf4", None), ("f4e2m1", F4E2M1_VALUES)):
        tensor = ov.Tensor(getattr(ov.Type, etype), ov.Shape([16]))
        np.copyto(tensor.data.view(np.uint8), codes[0::2] | codes[1::2] << 4)
        model = ov.Model([ops.convert(ops.constant(tensor), np.float32)], [])
        got = list(ov.Core().compile_model(model, "CPU")({}).values())[0]
        assert_bitexact(got, NF4_VALUES if want is None else np.array(want, np.float32), etype)


@pytest.mark.parametrize("etype, group, sdt, e8m0", CASES)
def test_matmul_matches_openvino_and_keeps_the_codes(tmp_path, etype, group, sdt, e8m0):
    xml = _matmul_ir(tmp_path / "m.xml", etype, group, sdt, e8m0)
    x = np.random.default_rng(1).standard_normal((3, 256)).astype(np.float32)
    model = convert(xml)  # the converter picks opset 21 for the UINT4 codes
    assert model.opset_import[0].version == 21
    assert "Gather" in _ops(model) and "DequantizeLinear" not in _ops(model)
    codes = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.UINT4]
    assert len(codes) == 1 and bytes(codes[0].raw_data) == bytes(_weight_const(load_ir(xml)).raw())
    got, want = _run(model, x), run_openvino(xml, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
    oracle = next(iter(evaluate(load_ir(xml), {"x": x}).values()))  # decompressed in f32, as OpenVINO does
    np.testing.assert_allclose(got, oracle, rtol=1e-6, atol=1e-6 * np.abs(oracle).max())
    unpacked = convert(xml, compressed_weights="unpack")
    assert not {"Gather", "DequantizeLinear"} & set(_ops(unpacked))
    # unpacked: the IR's arithmetic (f16 Convert and Multiply); nf4's table rounds to f16
    np.testing.assert_allclose(_run(unpacked, x), want, rtol=0, atol=1e-3 * np.abs(want).max())


def _reference(graph, widened: bool) -> np.ndarray:
    """The weights from the IR's codes and scales by index arithmetic: f32 table values times the
    f32 scale, rounded once (widened), or f16 table values times f16 scales rounded to f16."""
    const = _weight_const(graph)
    raw = const.raw()
    codes = np.stack([raw & 15, raw >> 4], axis=-1).reshape(-1)[:int(np.prod(const.shape))].reshape(const.shape)
    table = NF4_VALUES if const.etype.name == "nf4" else np.array(F4E2M1_VALUES, np.float32)
    mul = next(l for l in graph.order if l.type == "Multiply")
    src = graph.producer(mul, 1)[0]
    src = graph.producer(src, 0)[0] if src.type == "Convert" else src
    scale = src.const.array().astype(np.float64)
    if widened or mul.outputs[0].etype.name == "f32":
        return (table[codes].astype(np.float64) * scale).astype(np.float32)
    return (table.astype(np.float16)[codes].astype(np.float64) * scale).astype(np.float16)


@pytest.mark.parametrize("etype, group, e8m0", [("nf4", 16, False), ("nf4", None, False),
                                                ("f4e2m1", 16, True), ("f4e2m1", None, False)])
def test_decompressed_values_bit_exact(tmp_path, etype, group, e8m0):
    """f16 scales then Convert(f32): f32 table values times the widened scale, one rounding
    (OpenVINO's CPU decompression); f32 scales: the IR's f32 arithmetic; f16 without the Convert:
    the IR's f16 arithmetic (table rounded to f16, one rounding of the product)."""
    for sdt, to_f32 in ((np.float16, True), (np.float32, False), (np.float16, False)):
        w = ov_compressed_weight((8, 64), etype, group, zero_point=None, scale_dtype=sdt, to_f32=to_f32,
                                 e8m0_scale=e8m0, seed=3)
        x = ov_parameter([1], np.float32)
        xml = ov_save(tmp_path / f"w{np.dtype(sdt).itemsize}{to_f32}.xml", [w, x], [x])
        model = convert(xml)
        assert "Gather" in _ops(model)
        feed = {"x": np.zeros(1, np.float32)}
        got = runtime.session(model.SerializeToString()).run(None, feed)[0]
        graph = load_ir(xml)
        assert_bitexact(got, _reference(graph, to_f32).reshape(got.shape), f"{etype} {sdt.__name__} {to_f32}")
        oracle = next(iter(evaluate(graph, feed).values()))
        assert_bitexact(got, oracle, "the oracle")


def test_check_agrees(tmp_path):
    """ir2onnx check: onnxruntime, the oracle and OpenVINO agree at the default tolerances."""
    for i, case in enumerate([("nf4", 32, np.float16, False), ("f4e2m1", 32, np.float16, True)]):
        assert_check(_matmul_ir(tmp_path / f"c{i}.xml", *case))


@pytest.mark.parametrize("etype, e8m0", [("nf4", False), ("f4e2m1", True)])
def test_file_stays_about_the_bin_size(tmp_path, etype, e8m0):
    xml = _matmul_ir(tmp_path / "big.xml", etype, 32, np.float16, e8m0, n=128, k=1024)
    bin_size = os.path.getsize(tmp_path / "big.bin")
    out = convert_file(xml, tmp_path / "big.onnx")
    assert os.path.getsize(out) <= 1.2 * bin_size
    unpacked = convert_file(xml, tmp_path / "unpacked.onnx", compressed_weights="unpack")
    assert os.path.getsize(unpacked) >= 3 * bin_size
    x = np.random.default_rng(2).standard_normal((2, 1024)).astype(np.float32)
    want = run_openvino(xml, {"x": x})[0]
    got = runtime.session(out).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())


def test_opset_below_21_is_refused_unless_unpacked(tmp_path):
    xml = _matmul_ir(tmp_path / "m.xml", "nf4", 32, np.float16, False)
    with pytest.raises(UnsupportedLayer, match="opset >= 21|--compressed-weights unpack"):
        convert(xml, opset=17)
    assert "Gather" not in _ops(convert(xml, opset=17, compressed_weights="unpack"))


def test_e8m0_scale_beyond_f16_is_not_kept_packed(tmp_path):
    """A scale that Convert(f16) cannot hold exactly (2**-30) is no scale of the packed form: the
    chain is lowered as written (unpacked), and agrees with the oracle and OpenVINO."""
    import openvino as ov

    from ir2onnx.testing import _ov_packed

    codes = np.arange(64, dtype=np.uint8) % 16
    w = ops.convert(_ov_packed(ov, ops, ov.Type.f4e2m1, (4, 16), codes[0::2] | codes[1::2] << 4), np.float16)
    s = ops.convert(_ov_packed(ov, ops, ov.Type.f8e8m0, (4, 1), np.array([97, 127, 120, 130], np.uint8)), np.float16)
    x = ov_parameter([None, 16])
    xml = ov_save(tmp_path / "m.xml", ops.matmul(x, ops.convert(ops.multiply(w, s), np.float32), False, True), [x])
    model = convert(xml)
    assert "Gather" not in _ops(model)
    feed = np.random.default_rng(0).standard_normal((2, 16)).astype(np.float32)
    oracle = next(iter(evaluate(load_ir(xml), {"x": feed}).values()))
    np.testing.assert_allclose(_run(model, feed), oracle, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(run_openvino(xml, {"x": feed})[0], oracle, rtol=1e-6, atol=1e-30)
    assert not oracle[:, 0].any()  # OpenVINO too converts 2**-30 to f16's 0


@pytest.mark.parametrize("name, packed", [("nf4", "UINT4"), ("mxfp4", "UINT4"), ("fp4", "UINT4"),
                                          ("nvfp4", "UINT4"), ("mxfp8", "FLOAT8E4M3FN"), ("cb4", "UINT4")])
def test_nncf_samples(tmp_path, name, packed):
    """samples/real/mlp_{name} (samples/make_nncf_weights.py: a 3-layer MLP through
    ``openvino.convert_model`` and ``nncf.compress_weights``, group size 32, NVFP4 16; CB4: u4
    indices into an f8e4m3 codebook, the scale product in f32 as OpenVINO computes it): every
    weight stays packed (NVFP4's scale sub-graph, f8e4m3 times a global f32 scale rounded to f16,
    computed at convert time), the file stays about the .bin's size, and onnxruntime matches
    OpenVINO and the oracle (``ir2onnx check``); unpacked, OpenVINO within the f16 rounding of
    the IR's arithmetic."""
    xml = SAMPLES / f"mlp_{name}" / "model.xml"
    summary = []
    out = convert_file(xml, tmp_path / "m.onnx", summary=summary)
    assert any("3 compressed weight(s) kept packed" in line for line in summary), summary
    model = onnx.load(out)
    assert _ops(model).count("Gather" if packed == "UINT4" else "DequantizeLinear") == 3
    assert sum(t.data_type == getattr(onnx.TensorProto, packed) for t in model.graph.initializer) == 3
    assert os.path.getsize(out) <= 1.2 * os.path.getsize(xml.with_suffix(".bin"))
    x = np.random.default_rng(5).standard_normal((4, 128)).astype(np.float32)
    want = run_openvino(xml, {"x": x})[0]
    np.testing.assert_allclose(_run(model, x), want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
    unpacked = convert(xml, compressed_weights="unpack")
    np.testing.assert_allclose(_run(unpacked, x), want, rtol=0, atol=2e-3 * np.abs(want).max())
    assert_check(xml)


def _cb4_ir(path, n=16, k=64, group=32, book_type="f8e4m3", to_f32=True, book_size=16, scale=True, seed=0):
    """NNCF's CB4 chain, as OpenVINO writes it: Const u4 indices -> Convert u8 -> Gather(Const
    codebook -> Convert f16, ., 0) -> Multiply(f16 scale) -> Reshape -> [Convert f32] -> MatMul."""
    import openvino as ov

    from ir2onnx.testing import _ov_packed

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 16, n * k).astype(np.uint8)
    idx = ops.convert(_ov_packed(ov, ops, ov.Type.u4, (n, k // group, group), codes[0::2] | codes[1::2] << 4), np.uint8)
    book = ops.convert(ops.constant(np.linspace(-3, 3, book_size).astype(np.float32), dtype=getattr(ov.Type, book_type)),
                       np.float16)
    w = ops.gather(book, idx, ops.constant(np.int64(0)))
    if scale:
        w = ops.multiply(w, ops.constant((rng.random((n, k // group, 1)) * 0.02 + 0.001).astype(np.float16)))
    w = ops.reshape(w, ops.constant(np.array([n, k], np.int64)), False)
    w = ops.convert(w, np.float32) if to_f32 else w
    x = ov_parameter([None, k], np.float32 if to_f32 else np.float16)
    return ov_save(path, ops.matmul(x, w, False, True), [x])


@pytest.mark.parametrize("to_f32, book_size", [(True, 16), (False, 16), (True, 11)])
def test_cb4_indices_stay_packed(tmp_path, to_f32, book_size):
    """u4 indices as the .bin stores them (never int64), the codebook gathered in f32 and the
    scale product one f32 rounding (OpenVINO's), rounded once to f16 when the chain stays f16; a
    short codebook is padded with zeros (OpenVINO's Gather past the end)."""
    xml = _cb4_ir(tmp_path / "c.xml", to_f32=to_f32, book_size=book_size)
    model = convert(xml)
    types = {t.data_type for t in model.graph.initializer}
    assert onnx.TensorProto.UINT4 in types and onnx.TensorProto.INT64 not in {
        t.data_type for t in model.graph.initializer if int(np.prod(t.dims)) > 2}
    # (int64 indices would make it 6.4x; 1.5 kB for the graph and its names)
    assert os.path.getsize(convert_file(xml, tmp_path / "c.onnx")) <= 1.3 * os.path.getsize(xml.with_suffix(".bin")) + 1536
    dtype = np.float32 if to_f32 else np.float16
    x = np.random.default_rng(3).standard_normal((3, 64)).astype(dtype)
    got, want = _run(model, x), run_openvino(xml, {"x": x})[0]
    got, want = got.astype(np.float32), want.astype(np.float32)  # f16: the MatMul's own roundings differ
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=(1e-5 if to_f32 else 2e-3) * np.abs(want).max())
    assert_check(xml)


def test_cb4_without_its_scale_is_refused(tmp_path):
    xml = _cb4_ir(tmp_path / "c.xml", scale=False)
    with pytest.raises(UnsupportedLayer, match="codebook-compressed weight .*not followed by one Multiply"):
        convert(xml)
    convert(xml, compressed_weights="unpack")  # layer by layer
