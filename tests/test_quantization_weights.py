"""Compressed weights (OpenVINO / NNCF weight compression) kept packed behind a DequantizeLinear.

IRs are written by OpenVINO from ``ir2onnx.testing.ov_compressed_weight`` (u8/i8/u4/i4 Const ->
Convert -> [Subtract zero point] -> Multiply scale -> [Reshape] -> [Convert f32]). OpenVINO runs
without its dynamic quantization of activations and onnxruntime without MatMulNBits' int8
accuracy level (both approximate by ~5e-3 by default), so the two agree to f32 rounding.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import openvino.opset15 as ops
import pytest

from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert, convert_file
from ir2onnx.cli.main import main
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, assert_check, ov_compressed_weight, ov_parameter, ov_save, run_openvino
from util import optimized_nodes

CASES = [  # etype, group, zero point, scale dtype
    ("u8", None, "int", np.float16), ("u8", None, "scalar", np.float32), ("i8", None, None, np.float16),
    ("u8", 128, "float", np.float16), ("u4", 32, "int", np.float16), ("u4", 64, None, np.float32),
    ("u4", 128, "int", np.float16), ("i4", 32, None, np.float16), ("i4", 128, "scalar", np.float16),
    ("f8e4m3", 32, None, np.float16), ("f8e5m2", None, None, np.float32),
]


def _matmul_ir(path, etype, group, zp, sdt, n=32, k=256, seed=0):
    x = ov_parameter([None, k])
    w = ov_compressed_weight((n, k), etype, group, zero_point=zp, scale_dtype=sdt, seed=seed)
    return ov_save(path, ops.matmul(x, w, False, True), [x])


def _run(model, x):
    return runtime.session(model.SerializeToString()).run(None, {"x": x})[0]


def _ops(model):
    return [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("etype, group, zp, sdt", CASES)
def test_matmul_matches_openvino_and_keeps_the_integers(tmp_path, etype, group, zp, sdt):
    xml = _matmul_ir(tmp_path / "m.xml", etype, group, zp, sdt)
    x = np.random.default_rng(1).standard_normal((3, 256)).astype(np.float32)
    model = convert(xml, opset=21)
    assert "DequantizeLinear" in _ops(model) and not {"Mul", "Sub"} & set(_ops(model))
    packed = [t for t in model.graph.initializer if t.data_type == getattr(onnx.TensorProto, {
        "u8": "UINT8", "i8": "INT8", "u4": "UINT4", "i4": "INT4", "f8e4m3": "FLOAT8E4M3FN",
        "f8e5m2": "FLOAT8E5M2"}[etype])]
    assert sum(int(np.prod(t.dims)) for t in packed) >= 32 * 256  # the weights, still integers
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear")
    per_channel_block = 128 if etype in ("u8", "i8", "u4", "i4") else 0  # MatMul weights: blocks of K
    assert {a.name: a.i for a in dq.attribute}.get("block_size", 0) == (group or per_channel_block)
    got, want = _run(model, x), run_openvino(xml, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    oracle = next(iter(evaluate(load_ir(xml), {"x": x}).values()))  # decompressed in f32, as OpenVINO does
    np.testing.assert_allclose(got, oracle, rtol=1e-5, atol=1e-5 * np.abs(oracle).max())
    unpacked = convert(xml, opset=21, compressed_weights="unpack")
    assert "DequantizeLinear" not in _ops(unpacked)
    np.testing.assert_allclose(_run(unpacked, x), want, rtol=0, atol=1e-3 * np.abs(want).max())


def _weights_ir(path, etype, group, zp, sdt, to_f32, shape=(8, 64)):
    w = ov_compressed_weight(shape, etype, group, zero_point=zp, scale_dtype=sdt, to_f32=to_f32)
    x = ov_parameter([1], np.float32)
    return ov_save(path, [w, x], [x])


@pytest.mark.parametrize("etype, group, zp, opset", [
    ("u8", None, "int", 17), ("u8", None, "int", 21), ("u8", 16, "float", 17), ("i4", 16, "int", 21),
    ("u4", 32, None, 21)])
def test_decompressed_values_bit_exact(tmp_path, etype, group, zp, opset):
    """f32 scales and f16 scales without a widening Convert: the IR's arithmetic bit for bit (f16
    rounds once, like the f16 Multiply); f16 scales then Convert(f32): the exact product in f32,
    which is what OpenVINO's CPU plugin computes (not the f16-rounded IR arithmetic)."""
    for sdt, to_f32 in ((np.float32, False), (np.float16, False), (np.float16, True)):
        xml = _weights_ir(tmp_path / f"w{np.dtype(sdt).itemsize}{to_f32}.xml", etype, group, zp, sdt, to_f32)
        model = convert(xml, opset=opset)
        assert "DequantizeLinear" in _ops(model)
        got = runtime.session(model.SerializeToString()).run(None, {"x": np.zeros(1, np.float32)})[0]
        oracle = next(iter(evaluate(load_ir(xml), {"x": np.zeros(1, np.float32)}).values()))
        if not to_f32:
            assert_bitexact(got, oracle, f"{sdt.__name__} weights vs the IR's arithmetic")
            continue
        w, zp, scale = _chain_constants(load_ir(xml))
        exact = ((w - zp) * scale).reshape(got.shape).astype(np.float32)
        assert_bitexact(got, exact, "f16 scales widened to f32")
        assert_bitexact(got, oracle, "the oracle's OpenVINO rule (decompression in f32)")


def _chain_constants(graph):
    """The weight, zero point (0 if none) and scale of the one decompression chain, as float64."""
    def const_of(layer, port):
        src = graph.producer(layer, port)[0]
        src = graph.producer(src, 0)[0] if src.type == "Convert" else src
        return src.const.array().astype(np.float64)

    mul = next(l for l in graph.order if l.type == "Multiply")
    sub = next((l for l in graph.order if l.type == "Subtract"), None)
    w = next(l for l in graph.order if l.type == "Const" and l.const.etype.is_integer and l.const.size > 16)
    return w.const.array().astype(np.float64), const_of(sub, 1) if sub else 0.0, const_of(mul, 1)


def test_check_agrees_on_compressed_weights(tmp_path):
    """ir2onnx check: onnxruntime, the oracle (which decompresses f16-scaled weights in f32 like
    OpenVINO's CPU plugin) and OpenVINO agree at the default tolerances."""
    for i, case in enumerate([("u4", 32, "int", np.float16), ("u8", None, "float", np.float16)]):
        assert_check(_matmul_ir(tmp_path / f"c{i}.xml", *case), opset=21)


def test_convolution_weights_per_output_channel(tmp_path):
    x = ov_parameter([None, 8, 10, 10])
    w = ov_compressed_weight((16, 8, 3, 3), "i8", None, zero_point=None, scale_dtype=np.float16)
    xml = ov_save(tmp_path / "c.xml", ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1]), [x])
    model = convert(xml)  # opset 17: per-axis DequantizeLinear
    assert "DequantizeLinear" in _ops(model) and "Sub" not in _ops(model)
    feed = np.random.default_rng(0).standard_normal((2, 8, 10, 10)).astype(np.float32)
    want = run_openvino(xml, {"x": feed})[0]
    np.testing.assert_allclose(_run(model, feed), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_u4_group_wise_file_stays_small(tmp_path):
    """The must-show: a u4 group-wise MatMul model is at most 1.2x its .bin and matches OpenVINO
    within 1e-3 relative; unpacked it is ~4x."""
    xml = _matmul_ir(tmp_path / "big.xml", "u4", 128, "int", np.float16, n=256, k=1024)
    bin_size = os.path.getsize(tmp_path / "big.bin")
    out = convert_file(xml, tmp_path / "big.onnx", opset=21)
    assert os.path.getsize(out) <= 1.2 * bin_size
    unpacked = convert_file(xml, tmp_path / "unpacked.onnx", opset=17, compressed_weights="unpack")
    assert os.path.getsize(unpacked) >= 3 * bin_size
    x = np.random.default_rng(2).standard_normal((4, 1024)).astype(np.float32)
    got = runtime.session(out).run(None, {"x": x})[0]
    opts = ort.SessionOptions()  # stored transposed for transpose_b: onnxruntime runs MatMulNBits
    opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(str(out), opts, providers=["CPUExecutionProvider"])
    assert "MatMulNBits" in _ops(onnx.load(tmp_path / "opt.onnx"))
    want = run_openvino(xml, {"x": x})[0]
    assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()


def test_four_bit_weights_need_opset_21(tmp_path):
    xml = _matmul_ir(tmp_path / "m.xml", "u4", 32, "int", np.float16)
    with pytest.raises(UnsupportedLayer, match="opset >= 21.*|--compressed-weights unpack"):
        convert(xml, opset=17)
    assert "DequantizeLinear" not in _ops(convert(xml, opset=17, compressed_weights="unpack"))


def test_u8_groups_at_opset_17_flatten_per_axis(tmp_path):
    xml = _matmul_ir(tmp_path / "m.xml", "u8", 64, "int", np.float32)
    model = convert(xml, opset=17)
    assert _ops(model)[:2] == ["DequantizeLinear", "Reshape"]
    x = np.random.default_rng(3).standard_normal((2, 256)).astype(np.float32)
    np.testing.assert_allclose(_run(model, x), _run(convert(xml, opset=21), x), rtol=1e-6, atol=1e-6)


def test_shared_step_is_left_unpacked(tmp_path):
    """A chain whose Convert also feeds another layer is not a decompression chain: unpacked."""
    import openvino as ov

    x = ov_parameter([None, 16])
    c = ops.convert(ops.constant(np.arange(64, dtype=np.uint8).reshape(4, 16), dtype=ov.Type.u8), np.float32)
    w = ops.multiply(c, ops.constant(np.full((4, 1), 0.5, np.float32)))
    xml = ov_save(tmp_path / "s.xml", [ops.matmul(x, w, False, True), ops.add(x, c)], [x])
    assert "DequantizeLinear" not in _ops(convert(xml))


def test_cli_flag_and_summary(tmp_path, capsys):
    xml = _matmul_ir(tmp_path / "m.xml", "u8", None, "int", np.float16)
    assert main(["convert", str(xml), "-o", str(tmp_path / "a.onnx")]) == 0
    assert "1 compressed weight(s) kept packed" in capsys.readouterr().err
    assert main(["convert", str(xml), "-o", str(tmp_path / "b.onnx"), "--compressed-weights", "unpack"]) == 0
    assert "DequantizeLinear" not in _ops(onnx.load(tmp_path / "b.onnx"))


def _optimized_ops(model, path) -> list[str]:
    """The node types of onnxruntime's optimized graph (default optimizations, as runtime.session)."""
    return [n.op_type for n in optimized_nodes(model, path)]


@pytest.mark.parametrize("etype, group, xshape, bshape", [
    ("u8", None, [4, 256], [1, 64]), ("u8", None, [None, 256], [1, 64]), ("u4", 32, [4, 256], [1, 64]),
    ("i8", None, [4, 256], [64]), ("u4", 32, [1, 4, 256], [1, 1, 64])])
def test_weights_with_a_bias_become_matmulnbits(tmp_path, etype, group, xshape, bshape):
    """OPT's fc1/fc2: MatMul(x, W^T) + bias [1, N]. onnxruntime's MatMulAddFusion would make Gemm
    of MatMul + a [1, N] Add before its DequantizeLinear -> MatMulNBits fusion, which takes a Gemm
    only with a 1-D bias; the bias is written [N] (the same sums)."""
    x = ov_parameter(xshape)
    w = ov_compressed_weight((64, 256), etype, group, zero_point=None if etype == "i8" else "int")
    bias = ops.constant(np.linspace(-1, 1, 64, dtype=np.float32).reshape(bshape))
    xml = ov_save(tmp_path / "b.xml", ops.relu(ops.add(ops.matmul(x, w, False, True), bias)), [x])
    model = convert(xml)
    optimized = _optimized_ops(model, tmp_path / "opt.onnx")
    assert "MatMulNBits" in optimized and "DequantizeLinear" not in optimized, optimized
    feed = np.random.default_rng(2).standard_normal([d or 3 for d in xshape]).astype(np.float32)
    got, want = _run(model, feed), run_openvino(xml, {"x": feed})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def _matmulnbits_blocks(model, path) -> list[int]:
    return [next(a.i for a in n.attribute if a.name == "block_size")
            for n in optimized_nodes(model, path, None) if n.op_type == "MatMulNBits"]


@pytest.mark.parametrize("etype, zp, k, block", [
    ("u8", "int", 256, 128), ("i8", None, 96, 32), ("u4", "int", 384, 128), ("u8", "scalar", 48, 16),
    ("u8", "int", 40, None)])
def test_per_channel_matmul_weights_are_written_in_blocks(tmp_path, etype, zp, k, block):
    """One scale per output channel, repeated over blocks of K (the largest power of two from 16
    to 128 dividing K): the converter takes opset 21 for it when it chooses the opset, and keeps
    the per-axis form at a forced older opset or when no such block divides K. onnxruntime then
    runs MatMulNBits with that block (its own choice for a per-axis weight is 32, and its
    default accuracy level is faster with larger blocks: docs/llm.md), on the same values."""
    w = ov_compressed_weight((64, k), etype, None, zero_point=zp)
    x = ov_parameter([None, k])
    xml = ov_save(tmp_path / "m.xml", ops.matmul(x, w, False, True), [x])
    model = convert(xml)
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear")
    attrs = {a.name: a.i for a in dq.attribute}
    assert attrs.get("block_size") == block
    opset = next(o.version for o in model.opset_import if o.domain == "")
    assert opset == (21 if block or etype == "u4" else 17)
    if block:
        assert _matmulnbits_blocks(model, tmp_path / "opt.onnx") == [block]
    feed = np.random.default_rng(4).standard_normal((3, k)).astype(np.float32)
    got, want = _run(model, feed), run_openvino(xml, {"x": feed})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    if etype != "u4":
        forced = convert(xml, opset=17)
        assert "block_size" not in {a.name for n in forced.graph.node if n.op_type == "DequantizeLinear"
                                    for a in n.attribute}
        np.testing.assert_allclose(_run(forced, feed), got, rtol=1e-6, atol=1e-6 * np.abs(want).max())
