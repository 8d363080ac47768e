"""LayerNorm as OpenVINO writes it (MVN -> Multiply(gamma) -> Add(beta)) becomes one
LayerNormalization(x, gamma, beta) (:mod:`ir2onnx.ops._layer_norm_affine`), so that onnxruntime's
transformer fusions (SkipLayerNormalization) see it; constants that vary over other dims, run-time
operands and the other MVN forms keep their Mul/Add. Against the oracle and OpenVINO, f32: rtol
1e-5, atol 1e-5; f16 (the FP16 IR's compressed gamma/beta decompressed to f32): the same."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)


def _ln_ir(tmp_path, gamma, beta, shape=(2, 5, 8), axes=(-1,), compress=False, x_dims=None):
    x = ov_parameter(x_dims or shape, np.float32, "x")
    y = ops.mvn(x, ops.constant(np.array(axes, np.int64)), True, 1e-5, "inside_sqrt")
    if gamma is not None:
        y = ops.multiply(y, gamma if not isinstance(gamma, np.ndarray) else ops.constant(gamma))
    if beta is not None:
        y = ops.add(beta if not isinstance(beta, np.ndarray) else ops.constant(beta), y)  # beta first
    params = [x] + [p for p in (gamma, beta) if p is not None and not isinstance(p, np.ndarray)]
    return ov_save(tmp_path / "ln.xml", y, params, compress_to_fp16=compress)


def _agrees(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), **TOL)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL)


def _rand(rng, *shape):
    return (rng.standard_normal(shape) * 0.5 + 1).astype(np.float32)


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("gshape", [(8,), (1, 1, 8), (1,)])
def test_affine_absorbed(tmp_path, gshape, compress):
    rng = np.random.default_rng(3)
    xml = _ln_ir(tmp_path, _rand(rng, *gshape), _rand(rng, 1, 8), compress=compress, x_dims=(None, None, 8))
    model = convert(xml)
    ln = [n for n in model.graph.node if n.op_type == "LayerNormalization"]
    assert [n.op_type for n in model.graph.node if n.op_type not in ("Cast",)] == ["LayerNormalization", "Identity"]
    assert len(ln[0].input) == 3
    _agrees(xml, {"x": (rng.standard_normal((2, 5, 8)) * 3 + 2).astype(np.float32)})


def test_scale_only_and_bias_zeros(tmp_path):
    rng = np.random.default_rng(4)
    xml = _ln_ir(tmp_path, _rand(rng, 8), None)
    assert [n.op_type for n in convert(xml).graph.node] == ["LayerNormalization", "Identity"]
    _agrees(xml, {"x": rng.standard_normal((2, 5, 8)).astype(np.float32)})


@pytest.mark.parametrize("case", ["gamma over rows", "gamma at run time", "bias before scale", "two axes"])
def test_not_absorbed(tmp_path, case):
    rng = np.random.default_rng(5)
    feeds = {"x": rng.standard_normal((2, 5, 8)).astype(np.float32)}
    if case == "gamma over rows":  # varies over dim 1, not normalized: Mul stays
        xml, kept = _ln_ir(tmp_path, _rand(rng, 5, 1), _rand(rng, 8)), ["Mul"]
    elif case == "gamma at run time":
        g = ov_parameter((8,), np.float32, "g")
        xml, kept = _ln_ir(tmp_path, g, _rand(rng, 8)), ["Mul"]
        feeds["g"] = _rand(rng, 8)
    elif case == "bias before scale":  # (LN + beta) * gamma: the bias is taken, the Mul stays
        x = ov_parameter((2, 5, 8), np.float32, "x")
        y = ops.mvn(x, ops.constant(np.array([-1], np.int64)), True, 1e-5, "inside_sqrt")
        y = ops.multiply(ops.add(y, ops.constant(_rand(rng, 8))), ops.constant(_rand(rng, 8)))
        xml, kept = ov_save(tmp_path / "ln.xml", y, [x]), ["Mul"]
    else:  # LayerNorm over the last two dims takes [5, 8] scale and bias
        xml, kept = _ln_ir(tmp_path, _rand(rng, 5, 8), _rand(rng, 5, 1), axes=(1, 2)), []
    types = [n.op_type for n in convert(xml).graph.node]
    assert types.count("LayerNormalization") == 1 and all(k in types for k in kept)
    if not kept:
        assert types == ["LayerNormalization", "Identity"]
    _agrees(xml, feeds)


def test_normalized_value_also_read(tmp_path):
    """The MVN's output feeds the Multiply and a Result: both outputs are right."""
    rng = np.random.default_rng(6)
    x = ov_parameter((2, 5, 8), np.float32, "x")
    n = ops.mvn(x, ops.constant(np.array([-1], np.int64)), True, 1e-5, "inside_sqrt")
    y = ops.add(ops.multiply(n, ops.constant(_rand(rng, 8))), ops.constant(_rand(rng, 8)))
    xml = ov_save(tmp_path / "ln.xml", [n, y], [x])
    feeds = {"x": rng.standard_normal((2, 5, 8)).astype(np.float32)}
    got = run_onnx(xml, feeds)
    for g, w in zip(got, run_openvino(xml, feeds)):
        np.testing.assert_allclose(g, w, **TOL)
