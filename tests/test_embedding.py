"""The embedding bags on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime:
run-time indices, offsets, segment ids, weights and default indices, dynamic dims, empty bags,
integer tables (wrapping sums), f16 tables and tables of rank 3. Table values are small integers
and weights powers of two, so every sum is exact and agreement is bit for bit."""
from __future__ import annotations

import numpy as np
import openvino.opset3 as o3
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere

RNG = np.random.default_rng(3)


def _table(shape, dtype):
    """Non-zero small integers (a zero could make a -0.0, whose sum OpenVINO's CPU plugin starts
    differently: test_signed_zero_sums_start_from_plus_zero)."""
    return (RNG.integers(1, 9, shape) * RNG.choice([-1, 1], shape)).astype(dtype)


def _numpy_offsets(table, idx, offsets, weights=None, default=None, mean=False):
    """torch.nn.EmbeddingBag / the spec's snippet, for exact inputs."""
    ends = list(offsets[1:]) + [len(idx)]
    out = []
    for start, end in zip(offsets, ends):
        if end == start:
            use = default is not None and default != -1
            out.append(table[default] if use else np.zeros(table.shape[1:], table.dtype))
            continue
        rows = [table[idx[j]] * (1 if weights is None else weights[j]) for j in range(start, end)]
        total = np.sum(np.stack(rows), axis=0, dtype=table.dtype)
        out.append(total / (end - start) if mean else total)
    return np.stack(out).astype(table.dtype)


def _offsets_model(tmp_path, dtype, version=15, default=True, weights=True, reduction="sum", rank=2):
    """Table and offsets of dynamic size; indices too unless weighted (OpenVINO 2026.4's CPU
    plugin fails to compile a weighted bag with dynamic indices: "to_shape was called on a
    dynamic shape"; ir2onnx takes them)."""
    tail = [3] * (rank - 1)
    x = ov_parameter([None] + tail, dtype, "x")
    n = 7 if default and weights else None
    i, o = ov_parameter([n], np.int32, "i"), ov_parameter([None], np.int32, "o")
    params, args = [x, i, o], [x, i, o]
    if default:
        d = ov_parameter([], np.int32, "d")
        params.append(d), args.append(d)
        if weights:
            w = ov_parameter([n], dtype, "w")
            params.append(w), args.append(w)
    node = o3.embedding_bag_offsets_sum(*args) if version == 3 else ops.embedding_bag_offsets(*args, reduction=reduction)
    return ov_save(tmp_path / "m.xml", node, params)


@pytest.mark.parametrize("version", [3, 15])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_offsets_runtime_everything(tmp_path, version, dtype):
    xml = _offsets_model(tmp_path, dtype, version)
    table = _table((7, 3), dtype)
    idx = np.array([0, 6, 2, 2, 5, 1, 3], np.int32)
    w = np.array([1, 2, -1, 0.5, 4, -2, 1]).astype(dtype) if dtype == np.float32 else np.array([1, 2, -1, 3, 4, -2, 1], dtype)
    for offsets, default in [([0, 2, 2, 5], 4), ([0, 2, 2, 5], -1), ([0, 0, 0, 6], 6), ([0, 3], 0), ([0], -1),
                             ([0, 3, 7], 2)]:
        offsets = np.array(offsets, np.int32)
        feeds = {"x": table, "i": idx, "o": offsets, "d": np.array(default, np.int32), "w": w}
        want = _numpy_offsets(table, idx, offsets, w, default)
        trailing_empty = offsets[-1] == len(idx)  # the spec and torch allow it; OpenVINO's CPU plugin raises
        bitexact_everywhere(xml, feeds, want, openvino=not trailing_empty)
        if trailing_empty:
            with pytest.raises(RuntimeError, match="Offset value exceeds indices size"):
                run_openvino(xml, feeds)


def test_offsets_mean_and_empty_bags(tmp_path):
    xml = _offsets_model(tmp_path, np.float32, default=False, reduction="mean")
    table = _table((6, 3), np.float32)
    idx, offsets = np.array([0, 1, 5, 2, 2, 3, 4, 4], np.int32), np.array([0, 4, 4, 6], np.int32)
    bitexact_everywhere(xml, {"x": table, "i": idx, "o": offsets}, _numpy_offsets(table, idx, offsets, mean=True))


def test_offsets_mean_with_default_row(tmp_path):
    xml = _offsets_model(tmp_path, np.float32, weights=False, reduction="mean")
    table = _table((6, 3), np.float32)
    idx, offsets = np.array([0, 1, 5, 2], np.int32), np.array([0, 3, 3], np.int32)
    want = _numpy_offsets(table, idx, offsets, default=4, mean=True)
    bitexact_everywhere(xml, {"x": table, "i": idx, "o": offsets, "d": np.array(4, np.int32)}, want)


def test_offsets_integer_sums_wrap(tmp_path):
    xml = _offsets_model(tmp_path, np.int8, default=False)
    table = np.array([[100, -100, 127], [100, -100, 1], [-128, 5, 3]], np.int8)
    idx, offsets = np.array([0, 1, 2, 2, 2], np.int32), np.array([0, 2], np.int32)
    want = np.array([[-56, 56, -128], [-128, 15, 9]], np.int8)  # 200 -> -56, -200 -> 56, 128 -> -128, -384 -> -128
    bitexact_everywhere(xml, {"x": table, "i": idx, "o": offsets}, want)


def test_offsets_rank3_table_f16_compressed(tmp_path):
    """A constant f32 table saved f16-compressed (Convert in the IR), rows of shape [2, 3]."""
    table = (_table((5, 2, 3), np.float32) / 4).astype(np.float32)
    i, o = ov_parameter([None], np.int64, "i"), ov_parameter([None], np.int64, "o")
    node = ops.embedding_bag_offsets(ops.constant(table), i, o, ops.constant(np.int64(1)), reduction="sum")
    xml = ov_save(tmp_path / "m.xml", node, [i, o], compress_to_fp16=True)
    idx, offsets = np.array([4, 0, 3], np.int64), np.array([0, 1, 1], np.int64)
    bitexact_everywhere(xml, {"i": idx, "o": offsets}, _numpy_offsets(table, idx, offsets, default=1))


def test_f16_table_sums_in_f32(tmp_path):
    xml = _offsets_model(tmp_path, np.float16, default=False)
    table = RNG.standard_normal((5, 3)).astype(np.float16)
    feeds = {"x": table, "i": np.array([0, 1, 2, 3, 4, 4], np.int32), "o": np.array([0, 3], np.int32)}
    got = run_onnx(xml, feeds)[0]
    assert got.dtype == np.float16
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("version, reduction", [(3, "sum"), (15, "sum"), (15, "mean")])
@pytest.mark.parametrize("weighted", [False, True])
def test_packed(tmp_path, version, reduction, weighted):
    """Dynamic dims; with run-time weights static ones (OpenVINO 2026.4's CPU plugin fails to
    compile EmbeddingBagPacked with dynamic per_sample_weights: "to_shape was called on a dynamic
    shape")."""
    if weighted and reduction == "mean":
        return
    table = _table((6, 2), np.float32)
    for n, shape in enumerate([(3, 4), (1, 2), (2, 1)]):
        dims = list(shape) if weighted else [None, None]
        x, i = ov_parameter([None, 2], np.float32, "x"), ov_parameter(dims, np.int32, "i")
        params = [x, i] + ([ov_parameter(dims, np.float32, "w")] if weighted else [])
        node = o3.embedding_bag_packed_sum(*params) if version == 3 else ops.embedding_bag_packed(*params, reduction=reduction)
        xml = ov_save(tmp_path / f"m{n}.xml", node, params)
        idx = RNG.integers(0, 6, shape).astype(np.int32)
        wts = RNG.choice([-2.0, -1.0, 0.5, 1.0, 2.0], shape).astype(np.float32)
        rows = table[idx] * (wts[..., None] if weighted else 1)
        want = rows.sum(axis=1) / (shape[1] if reduction == "mean" else 1)
        feeds = {"x": table, "i": idx, **({"w": wts} if weighted else {})}
        bitexact_everywhere(xml, feeds, want.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segments(tmp_path, dtype):
    """Indices static: OpenVINO's CPU plugin compiles no weighted bag with dynamic ones."""
    x, i, s = ov_parameter([None, 3], dtype, "x"), ov_parameter([6], np.int32, "i"), ov_parameter([6], np.int32, "s")
    n, d, w = ov_parameter([], np.int32, "n"), ov_parameter([], np.int32, "d"), ov_parameter([6], dtype, "w")
    xml = ov_save(tmp_path / "m.xml", o3.embedding_segments_sum(x, i, s, n, d, w), [x, i, s, n, d, w])
    table = _table((6, 3), dtype)
    idx, seg = np.array([0, 2, 3, 4, 5, 5], np.int32), np.array([0, 0, 2, 2, 2, 4], np.int32)
    wts = np.array([1, 2, -1, 4, 2, -2], dtype)
    for num, default in [(5, 1), (6, 0)]:
        want = np.stack([table[default]] * num).astype(dtype)
        for j, sid in enumerate(seg):
            want[sid] = 0 if sid not in seg[:j] else want[sid]
        for j, sid in enumerate(seg):
            want[sid] += table[idx[j]] * wts[j]
        feeds = {"x": table, "i": idx, "s": seg, "n": np.array(num, np.int32), "d": np.array(default, np.int32), "w": wts}
        bitexact_everywhere(xml, feeds, want)


def test_segments_without_default_zero_fills(tmp_path):
    x = ov_parameter([None, 2], np.float32, "x")
    node = o3.embedding_segments_sum(x, ops.constant(np.array([1, 2], np.int64)), ops.constant(np.array([1, 1], np.int64)),
                                     ops.constant(np.int64(3)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    table = _table((4, 2), np.float32)
    want = np.zeros((3, 2), np.float32)
    want[1] = table[1] + table[2]
    bitexact_everywhere(xml, {"x": table}, want)


def test_signed_zero_sums_start_from_plus_zero(tmp_path):
    """A bag of -0.0 rows sums to +0.0 in torch.nn.EmbeddingBag (measured, torch 2.13: sum and
    mean, 1-D and 2-D input) and OpenVINO's reference (from T{0}); the spec's NumPy and OpenVINO
    2026.4's CPU plugin keep -0.0. ir2onnx follows torch, whose EmbeddingBag the frontend writes as
    these layers."""
    table = np.array([[-0.0, 1], [-0.0, -0.0], [2, 3]], np.float32)
    x = ov_parameter([3, 2], np.float32, "x")
    outputs = [o3.embedding_bag_offsets_sum(x, ops.constant(np.array([0, 1, 1, 2])), ops.constant(np.array([0, 1, 3]))),
               o3.embedding_bag_packed_sum(x, ops.constant(np.array([[0], [1]]))),
               o3.embedding_segments_sum(x, ops.constant(np.array([0, 1, 1, 2])), ops.constant(np.array([0, 1, 1, 2])),
                                         ops.constant(np.int64(3)))]
    for n, node in enumerate(outputs):
        xml = ov_save(tmp_path / f"m{n}.xml", node, [x])
        got = bitexact_everywhere(xml, {"x": table}, openvino=False)
        assert not np.signbit(got).any()
        assert np.signbit(run_openvino(xml, {"x": table})[0][:2, 0]).all()  # the measured deviation


def test_refusals(tmp_path):
    x, i, o = ov_parameter([4, 2], np.int32, "x"), ov_parameter([3], np.int32, "i"), ov_parameter([2], np.int32, "o")
    xml = ov_save(tmp_path / "mean.xml", ops.embedding_bag_offsets(x, i, o, reduction="mean"), [x, i, o])
    with pytest.raises(UnsupportedLayer, match="reduction 'mean' on i32"):
        convert(xml)
    f = ov_parameter([4, 2], np.float32, "f")
    xml = ov_save(tmp_path / "sum.xml", ops.embedding_bag_offsets(f, i, o), [f, i, o])
    with pytest.raises(UnsupportedLayer, match="opset >= 16"):
        convert(xml, opset=15)
    node = o3.embedding_segments_sum(f, i, i, ops.constant(np.int32(2)), ops.constant(np.int32(-1)))
    xml = ov_save(tmp_path / "seg.xml", node, [f, i])
    with pytest.raises(InvalidLayer, match="default_index must be >= 0"):
        convert(xml)


@pytest.mark.parametrize("stem", ["sum_weighted", "mean", "packed"])
def test_torch_embedding_bag_round_trip(stem):
    """samples/make_embedding_bag.py: torch.nn.EmbeddingBag through openvino.convert_model and
    save_model (f16 table); onnxruntime on ours equals torch's saved output."""
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "samples" / "embedding_bag"
    xml = folder / f"{stem}.xml"
    graph = ir2onnx.load_ir(xml)
    assert any(layer.type == "EmbeddingBagOffsets" for layer in graph.layers.values())
    names = {"sum_weighted": ["indices", "offsets", "weights"], "mean": ["indices", "offsets"], "packed": ["indices"]}[stem]
    feeds = {n: np.load(folder / f"{stem}_{n}.npy") for n in names}
    want = np.load(folder / f"{stem}_y.npy")
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(run_openvino(xml, feeds)[0], want, rtol=1e-6, atol=1e-6)
    if stem == "mean":
        assert np.array_equal(got[1], np.zeros(4, np.float32))  # the empty bag
