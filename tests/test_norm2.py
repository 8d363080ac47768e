"""GroupNormalization-12 and BatchNormInference-1/-5 on OpenVINO-written IR, against the float64
oracle and the OpenVINO runtime.

Tolerances (measured, ir2onnx 1.31 onnxruntime vs OpenVINO 2026.4 CPU, f32 inference precision):
GroupNormalization f32 max |diff| 9.5e-7 on N(0, 2) data, 3.8e-6 with a mean of 50 (the f32
ReduceMean's rounding), so rtol = atol = 1e-5; f16 (computed in f32, rounded once) 1 f16 ulp, so
rtol = atol = 2e-3. BatchNormInference f32: 1e-5 (coefficients folded in float64, rounded once).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset12 as ops12
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3),
       np.float64: dict(rtol=1e-9, atol=1e-9)}


def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


def _check(xml, feeds, dtype, opset=None, openvino=True):
    got = run_onnx(xml, feeds, opset=opset)[0]
    want = _oracle(xml, feeds)[0]
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    if openvino:
        np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL[dtype])
    return got


def _group_norm_ir(tmp_path, shape, groups, dtype=np.float32, compress=False, const_params=True, eps=1e-5):
    rng = np.random.default_rng(1)
    x = ov_parameter(shape, dtype, "x")
    c = shape[1]
    params = [x]
    if const_params:
        scale = ops.constant(rng.uniform(0.5, 2, c).astype(dtype))
        bias = ops.constant(rng.standard_normal(c).astype(dtype))
    else:
        scale, bias = ov_parameter([c], dtype, "scale"), ov_parameter([c], dtype, "bias")
        params += [scale, bias]
    y = ops12.group_normalization(x, scale, bias, groups, eps)
    return ov_save(tmp_path / "gn.xml", y, params, compress_to_fp16=compress)


def _numpy_group_norm(x, scale, bias, groups, eps):
    v = x.astype(np.float64)
    r = v.reshape(v.shape[0], groups, -1)
    n = ((r - r.mean(2, keepdims=True)) / np.sqrt(r.var(2, keepdims=True) + eps)).reshape(v.shape)
    shape = (-1,) + (1,) * (v.ndim - 2)
    return n * scale.reshape(shape) + bias.reshape(shape)


@pytest.mark.parametrize("opset", [14, 17, 18, 21])
@pytest.mark.parametrize("shape,groups", [((2, 8, 5, 7), 4), ((1, 6, 9), 3), ((2, 4, 3, 2, 2), 1),
                                          ((2, 6, 4, 4), 6), ((3, 4), 2)])
def test_group_norm(tmp_path, shape, groups, opset):
    xml = _group_norm_ir(tmp_path, shape, groups)
    x = (np.random.default_rng(2).standard_normal(shape) * 2 + 1).astype(np.float32)
    _check(xml, {"x": x}, np.float32, opset=opset)
    kinds = {n.op_type for n in convert(xml, opset=opset).graph.node}
    assert "GroupNormalization" not in kinds and {"ReduceMean", "Reshape", "Sqrt"} <= kinds


def test_group_norm_matches_independent_numpy(tmp_path):
    """Not only oracle vs lowering: per-channel scale/bias (ONNX-18's per-group form would differ)."""
    xml = _group_norm_ir(tmp_path, (2, 8, 3, 3), 2)
    x = np.random.default_rng(3).standard_normal((2, 8, 3, 3)).astype(np.float32)
    g = ir2onnx.load_ir(xml)
    consts = [l.const.array() for l in g.order if l.type == "Const"]
    want = _numpy_group_norm(x, consts[0], consts[1], 2, 1e-5)
    np.testing.assert_allclose(run_onnx(xml, {"x": x})[0], want, rtol=1e-5, atol=1e-5)


def test_group_norm_large_mean(tmp_path):
    xml = _group_norm_ir(tmp_path, (1, 8, 5, 7), 4)
    x = (np.random.default_rng(4).standard_normal((1, 8, 5, 7)) + 50).astype(np.float32)
    _check(xml, {"x": x}, np.float32)


@pytest.mark.parametrize("compress", [False, True])
def test_group_norm_f16_and_compressed(tmp_path, compress):
    dtype = np.float32 if compress else np.float16
    xml = _group_norm_ir(tmp_path, (2, 8, 4, 4), 4, dtype=dtype, compress=compress)
    x = np.random.default_rng(5).standard_normal((2, 8, 4, 4)).astype(dtype)
    _check(xml, {"x": x}, dtype)
    if not compress:
        kinds = [n.op_type for n in convert(xml).graph.node]
        assert kinds[0] == "Cast" and kinds[-2] == "Cast"  # the chain runs in f32


def test_group_norm_dynamic_dims_and_runtime_params(tmp_path):
    xml = _group_norm_ir(tmp_path, (None, 6, None, None), 3, const_params=False)
    rng = np.random.default_rng(6)
    for shape in [(1, 6, 3, 5), (3, 6, 2, 2)]:
        feeds = {"x": rng.standard_normal(shape).astype(np.float32),
                 "scale": rng.standard_normal(6).astype(np.float32),
                 "bias": rng.standard_normal(6).astype(np.float32)}
        _check(xml, feeds, np.float32)


def test_group_norm_bad_groups_is_invalid(tmp_path):
    w = IRWriter("gn_bad")
    x = w.parameter((1, 6, 2), "f32", "x")
    s, b = w.const(np.ones(6, np.float32)), w.const(np.zeros(6, np.float32))
    y = w.layer("GroupNormalization", "opset12", [x, s, b], {"num_groups": 4, "epsilon": 1e-5},
                [("f32", (1, 6, 2))])[0]
    w.result(y)
    xml = w.save(tmp_path / "gn_bad.xml")
    with pytest.raises(InvalidLayer, match="cannot be split into 4 groups"):
        convert(xml)
    with pytest.raises(InvalidLayer, match="cannot be split"):
        _oracle(xml, {"x": np.zeros((1, 6, 2), np.float32)})


# -- BatchNormInference ---------------------------------------------------------------------------
def _bn_params(c, dtype, rng):
    return [rng.uniform(0.5, 2, c).astype(dtype), rng.standard_normal(c).astype(dtype),
            rng.standard_normal(c).astype(dtype), rng.uniform(0.1, 3, c).astype(dtype)]


@pytest.mark.parametrize("version", [1, 5])
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (None, 3, None), (5, 3), (2, 3, 2, 2, 3)])
def test_batch_norm_const_params(tmp_path, version, shape):
    rng = np.random.default_rng(7)
    x = ov_parameter(shape, np.float32, "x")
    module = ops1 if version == 1 else ops
    y = module.batch_norm_inference(x, *[ops.constant(p) for p in _bn_params(3, np.float32, rng)], 1e-3)
    xml = ov_save(tmp_path / "bn.xml", y, [x])
    assert f'type="BatchNormInference" version="opset{version}"' in xml.read_text()
    real = tuple(d or 4 for d in shape)
    _check(xml, {"x": rng.standard_normal(real).astype(np.float32)}, np.float32)
    kinds = [n.op_type for n in convert(xml).graph.node]
    assert kinds == ["Mul", "Add", "Identity"]  # folded to one Mul + Add per channel


@pytest.mark.parametrize("version", [1, 5])
def test_batch_norm_runtime_params(tmp_path, version):
    rng = np.random.default_rng(8)
    x = ov_parameter((2, 4, 3), np.float32, "x")
    names = ["gamma", "beta", "mean", "var"]
    ps = [ov_parameter([4], np.float32, n) for n in names]
    module = ops1 if version == 1 else ops
    xml = ov_save(tmp_path / "bn_rt.xml", module.batch_norm_inference(x, *ps, 1e-5), [x] + ps)
    feeds = dict(zip(names, _bn_params(4, np.float32, rng)))
    feeds["x"] = rng.standard_normal((2, 4, 3)).astype(np.float32)
    _check(xml, feeds, np.float32)
    assert "BatchNormalization" in [n.op_type for n in convert(xml).graph.node]


@pytest.mark.parametrize("dtype,compress", [(np.float16, False), (np.float32, True)])
def test_batch_norm_f16(tmp_path, dtype, compress):
    rng = np.random.default_rng(9)
    x = ov_parameter((2, 3, 4, 4), dtype, "x")
    y = ops.batch_norm_inference(x, *[ops.constant(p) for p in _bn_params(3, dtype, rng)], 1e-5)
    xml = ov_save(tmp_path / "bn16.xml", y, [x], compress_to_fp16=compress)
    _check(xml, {"x": rng.standard_normal((2, 3, 4, 4)).astype(dtype)}, dtype)


def test_batch_norm_all_constant_folds(tmp_path):
    rng = np.random.default_rng(10)
    data = rng.standard_normal((1, 3, 2)).astype(np.float32)
    y = ops.batch_norm_inference(ops.constant(data), *[ops.constant(p) for p in _bn_params(3, np.float32, rng)], 1e-5)
    model = ov.Model([ops.result(y)], [], "bn_fold")
    path = tmp_path / "bn_fold.xml"
    ov.save_model(model, str(path))
    onnx_model = convert(path)
    assert [n.op_type for n in onnx_model.graph.node] == ["Identity"]
    np.testing.assert_allclose(run_onnx(path, {})[0], _oracle(path, {})[0], rtol=1e-6, atol=1e-6)


def test_batch_norm_channel_mismatch_is_invalid(tmp_path):
    w = IRWriter("bn_bad")
    x = w.parameter((1, 3, 2), "f32", "x")
    p = [w.const(np.ones(4, np.float32)) for _ in range(4)]
    y = w.layer("BatchNormInference", "opset5", [x] + p, {"epsilon": 1e-5}, [("f32", (1, 3, 2))])[0]
    w.result(y)
    xml = w.save(tmp_path / "bn_bad.xml")
    with pytest.raises(InvalidLayer, match="4 values for 3 channels"):
        convert(xml)
