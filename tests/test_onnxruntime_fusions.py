"""The forms in which OpenVINO writes LayerNorm, RMSNorm and tanh-GELU are lowered so that
onnxruntime's graph optimizer fuses them (SkipLayerNormalization, SimplifiedLayerNormalization,
FastGelu: measured in benchmarks/bench_models.py), and the results still agree with OpenVINO and
the oracle (f32: rtol 1e-5, atol 1e-5). The fused op types are read from onnxruntime's optimized
model (SessionOptions.optimized_model_filepath) with the default optimization level."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)
C = 16


def _optimized_types(model, tmp_path) -> list[str]:
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    so.log_severity_level = 3
    ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]


def _agrees(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL)
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), rtol=1e-4, atol=1e-5)


def _const(rng, *shape, scale=0.3, shift=0.0):
    return ops.constant((rng.standard_normal(shape) * scale + shift).astype(np.float32))


def _weights(rng):
    return _const(rng, C, C)


def test_layer_norm_with_residual_is_skip_layer_normalization(tmp_path):
    rng = np.random.default_rng(0)
    x = ov_parameter((2, 5, C), np.float32, "x")
    h = ops.add(ops.matmul(x, _weights(rng), False, False), x)  # residual
    n = ops.mvn(h, ops.constant(np.array([-1], np.int64)), True, 1e-5, "inside_sqrt")
    y = ops.add(ops.multiply(n, _const(rng, 1, 1, C, shift=1)), _const(rng, 1, 1, C))
    xml = ov_save(tmp_path / "ln.xml", ops.matmul(y, _weights(rng), False, False), [x])
    assert "SkipLayerNormalization" in _optimized_types(convert(xml), tmp_path)
    _agrees(xml, {"x": rng.standard_normal((2, 5, C)).astype(np.float32)})


def test_rms_norm_is_simplified_layer_normalization(tmp_path):
    """x * (1 / sqrt(mean(x^2) + eps)) * gamma, as OpenVINO writes torch's RMSNorm."""
    rng = np.random.default_rng(1)
    x = ov_parameter((2, 5, C), np.float32, "x")
    h = ops.matmul(x, _weights(rng), False, False)
    ms = ops.reduce_mean(ops.power(h, ops.constant(np.full((1, 1, 1), 2, np.float32))),
                         ops.constant(np.array([-1], np.int64)), True)
    r = ops.divide(ops.constant(np.ones((1, 1, 1), np.float32)),
                   ops.sqrt(ops.add(ms, ops.constant(np.full((1, 1, 1), 1e-6, np.float32)))))
    y = ops.multiply(ops.multiply(h, r), _const(rng, 1, 1, C, shift=1))
    xml = ov_save(tmp_path / "rms.xml", ops.matmul(y, _weights(rng), False, False), [x])
    model = convert(xml)
    assert "SimplifiedLayerNormalization" in _optimized_types(model, tmp_path)
    scalars = [t for t in model.graph.initializer if len(t.dims) == 0]
    assert len(scalars) >= 2  # the exponent and epsilon
    _agrees(xml, {"x": rng.standard_normal((2, 5, C)).astype(np.float32)})


@pytest.mark.parametrize("form", ["rsqrt", "divide"])
@pytest.mark.parametrize("gamma", [True, False])
def test_rms_norm_with_or_without_its_weight_fuses_with_no_extra_node(tmp_path, form, gamma):
    """RMSNorm with dynamic batch and sequence dims, written x * (1 / sqrt(...)) or x / sqrt(...),
    with its weight or without (optimum-intel's compressed IRs fold it into the next MatMul): one
    SimplifiedLayerNormalization and no Mul or Div left (the Mul by ones that makes the fusion
    possible is absorbed; a weight takes its place)."""
    rng = np.random.default_rng(3)
    x = ov_parameter((None, None, C), np.float32, "x")
    h = ops.matmul(x, _weights(rng), False, False)
    ms = ops.reduce_mean(ops.power(h, ops.constant(np.full((1, 1, 1), 2, np.float32))),
                         ops.constant(np.array([-1], np.int64)), True)
    root = ops.sqrt(ops.add(ms, ops.constant(np.full((1, 1, 1), 1e-6, np.float32))))
    if form == "rsqrt":
        y = ops.multiply(h, ops.divide(ops.constant(np.ones((1, 1, 1), np.float32)), root))
    else:
        y = ops.divide(h, root)
    if gamma:
        y = ops.multiply(y, _const(rng, 1, 1, C, shift=1))
    xml = ov_save(tmp_path / "rms.xml", ops.matmul(y, _weights(rng), False, False), [x])
    types = _optimized_types(convert(xml), tmp_path)
    assert types.count("SimplifiedLayerNormalization") == 1 and not {"Mul", "Div"} & set(types), types
    _agrees(xml, {"x": rng.standard_normal((2, 5, C)).astype(np.float32)})


def test_reciprocal_also_read_elsewhere(tmp_path):
    """1 / s feeding a Multiply and a Result: both outputs right."""
    x = ov_parameter((3, C), np.float32, "x")
    r = ops.divide(ops.constant(np.ones((1,), np.float32)), ops.sqrt(ops.abs(x)))
    xml = ov_save(tmp_path / "r.xml", [ops.multiply(x, r), r], [x])
    feeds = {"x": np.random.default_rng(2).standard_normal((3, C)).astype(np.float32) + 3}
    for g, w in zip(run_onnx(xml, feeds), run_openvino(xml, feeds)):
        np.testing.assert_allclose(g, w, **TOL)


@pytest.mark.parametrize("mode", ["tanh", "erf"])
def test_gelu_fuses(tmp_path, mode):
    rng = np.random.default_rng(3)
    x = ov_parameter((2, 5, C), np.float32, "x")
    h = ops.gelu(ops.matmul(x, _weights(rng), False, False), mode)
    xml = ov_save(tmp_path / "gelu.xml", ops.matmul(h, _weights(rng), False, False), [x])
    types = _optimized_types(convert(xml), tmp_path)
    assert ("FastGelu" if mode == "tanh" else "Gelu") in types and "Tanh" not in types
    _agrees(xml, {"x": rng.standard_normal((2, 5, C)).astype(np.float32) * 2})


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("shape", [(2, 8, 5, 7), (1, 8, 3, 4, 5), (None, 8, None, None)])
def test_spatial_mean_is_global_average_pool(tmp_path, shape, keep):
    """ReduceMean over every axis after [N, C] (adaptive average pooling to 1, squeeze-excite
    blocks) -> GlobalAveragePool, which onnxruntime keeps in its NCHWc layout after a Conv."""
    rng = np.random.default_rng(4)
    rank = len(shape)
    x = ov_parameter(shape, np.float32, "x")
    w = ops.constant(rng.standard_normal((8, 8) + (3,) * (rank - 2)).astype(np.float32) * 0.2)
    h = ops.convolution(x, w, [1] * (rank - 2), [1] * (rank - 2), [1] * (rank - 2), [1] * (rank - 2))
    m = ops.reduce_mean(h, ops.constant(np.arange(2, rank) - (rank if keep else 0)), keep)
    xml = ov_save(tmp_path / "gap.xml", ops.multiply(h, m) if keep else m, [x])
    model = convert(xml)
    assert "GlobalAveragePool" in [n.op_type for n in model.graph.node]
    assert "ReduceMean" not in [n.op_type for n in model.graph.node]
    static = tuple(d or 6 for d in shape)
    _agrees(xml, {"x": rng.standard_normal(static).astype(np.float32)})
    if rank == 4 and keep and shape[0]:
        assert "GlobalAveragePool" in _optimized_types(model, tmp_path)  # nchwc's, beside the Conv


def test_rank3_mean_stays_reduce_mean(tmp_path):
    """[B, S, H] over H is a transformer's mean, not pooling: it stays ReduceMean."""
    x = ov_parameter((2, 5, C), np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.reduce_mean(x, ops.constant(np.array([-1])), True), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["ReduceMean", "Identity"]


@pytest.mark.parametrize("cshape", [(1, 8, 1, 1), (8, 1, 1), (1, 1, 1, 1)])
def test_per_channel_scale_and_shift_is_batch_normalization(tmp_path, cshape):
    """BatchNorm that OpenVINO cannot fold into a convolution (BN -> ReLU -> Conv, DenseNet):
    Multiply and Add by [1, C, 1, 1] constants -> BatchNormalization (mean 0, var 1, eps 0), which
    onnxruntime keeps in its NCHWc layout instead of reordering out and back."""
    rng = np.random.default_rng(5)
    x = ov_parameter((None, 8, 6, 6), np.float32, "x")
    w = ops.constant(rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2)
    h = ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    y = ops.add(ops.multiply(h, _const(rng, *cshape, shift=1)), _const(rng, 1, 8, 1, 1))
    out = ops.convolution(ops.relu(y), w, [1, 1], [1, 1], [1, 1], [1, 1])
    xml = ov_save(tmp_path / "bn.xml", out, [x])
    types = [n.op_type for n in convert(xml).graph.node]
    assert "BatchNormalization" in types and "Mul" not in types
    _agrees(xml, {"x": rng.standard_normal((2, 8, 6, 6)).astype(np.float32)})


def test_per_channel_scale_without_shift_stays_mul(tmp_path):
    rng = np.random.default_rng(6)
    x = ov_parameter((2, 8, 6, 6), np.float32, "x")
    xml = ov_save(tmp_path / "s.xml", ops.multiply(x, _const(rng, 1, 8, 1, 1)), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Mul", "Identity"]
    _agrees(xml, {"x": rng.standard_normal((2, 8, 6, 6)).astype(np.float32)})
