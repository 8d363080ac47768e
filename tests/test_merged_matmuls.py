"""Sibling compressed MatMuls reading one input merged into one MatMul and a Split
(ir2onnx.lowering.merged_matmuls): which siblings merge, that onnxruntime runs one MatMulNBits
for them, and that every output is OpenVINO's (its decompression in f32, rtol 1e-5) and the
unmerged conversion's (onnxruntime's kernel sums in another order for another N: rtol 1e-5)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert
from ir2onnx.lowering import merged_matmuls
from ir2onnx.testing import ov_compressed_weight, ov_parameter, ov_save, run_openvino

from util import optimized_nodes

K = 256


def _ir(path, weights, bias=False):
    """x [B, S, K] -> MatMul(x, W_i^T) [+ bias] for each (etype, group, n) -> Results."""
    x = ov_parameter([None, None, K])
    outs = []
    for i, (etype, group, n) in enumerate(weights):
        y = ops.matmul(x, ov_compressed_weight((n, K), etype, group, seed=i), False, True)
        if bias:
            y = ops.add(y, ops.constant(np.linspace(-1, 1, n, dtype=np.float32)))
        outs.append(ops.relu(y))
    return ov_save(path, outs, [x])


def _outputs(model, feed):
    return runtime.session(model.SerializeToString()).run(None, {"x": feed})


@pytest.mark.parametrize("weights, groups, bias", [
    ([("u8", None, 64), ("u8", None, 32), ("u8", None, 32)], 1, False),  # q, k, v (int8, per channel)
    ([("u4", 32, 64), ("u4", 32, 64)], 1, True),  # gate, up (int4 groups) with biases
    ([("i8", None, 48), ("i8", None, 16), ("u8", None, 16)], 1, False),  # i8 pair merges, u8 alone
    ([("u4", 32, 64), ("u4", 64, 64)], 0, False),  # different blocks: not merged
    ([("u4", 32, 63), ("u4", 32, 64)], 0, False),  # a 4-bit N that is odd: not merged
])
def test_siblings_merge_and_match_openvino(tmp_path, weights, groups, bias, monkeypatch):
    xml = _ir(tmp_path / "m.xml", weights, bias)
    model = convert(xml)
    types = [n.op_type for n in model.graph.node]
    assert types.count("Split") == groups
    optimized = [n.op_type for n in optimized_nodes(model, tmp_path / "opt.onnx")]
    assert optimized.count("MatMulNBits") == len(weights) - sum(
        len(g) - 1 for g in _merged_groups(model)), optimized
    feed = np.random.default_rng(5).standard_normal((2, 3, K)).astype(np.float32)
    got = _outputs(model, feed)
    for g, w in zip(got, run_openvino(xml, {"x": feed})):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())
    monkeypatch.setattr(merged_matmuls, "piece", lambda ctx, layer, a: None)
    for g, w in zip(got, _outputs(convert(xml), feed)):  # the unmerged conversion
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6 * np.abs(w).max())


def _merged_groups(model) -> list[list[str]]:
    return [list(n.output) for n in model.graph.node if n.op_type == "Split"]


def test_a_weight_read_twice_is_not_merged(tmp_path):
    """A weight that another layer also reads keeps its own DequantizeLinear."""
    x = ov_parameter([None, K])
    w = ov_compressed_weight((32, K), "u8", None)
    v = ov_compressed_weight((32, K), "u8", None, seed=1)
    outs = [ops.matmul(x, w, False, True), ops.matmul(x, v, False, True), ops.reduce_sum(w, [0, 1], False)]
    model = convert(ov_save(tmp_path / "m.xml", outs, [x]))
    assert "Split" not in [n.op_type for n in model.graph.node]


def test_summary_names_the_merge(tmp_path, capsys):
    from ir2onnx.cli.main import main

    xml = _ir(tmp_path / "m.xml", [("u8", None, 64), ("u8", None, 32), ("u8", None, 32)])
    assert main(["convert", str(xml), "-o", str(tmp_path / "m.onnx")]) == 0
    assert "3 compressed MatMuls reading the same input merged into 1" in capsys.readouterr().err
