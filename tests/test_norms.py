"""ReduceL1, ReduceL2, NormalizeL2 on OpenVINO-written IR against the oracle, numpy and the
OpenVINO runtime: f32 within rtol 1e-5, atol 1e-6; f16 within 2e-3."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

def normalize_l2(x, axes, eps, eps_mode):
    """openvino.opset*.normalize_l2 always writes eps_mode='add' (2026.4); the factory does not."""
    from openvino.utils.node_factory import NodeFactory

    a = ops.constant(np.array(axes, np.int64))
    return NodeFactory("opset1").create("NormalizeL2", [x.output(0), a.output(0)], {"eps": eps, "eps_mode": eps_mode})


TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _check(xml, x, dtype, ref, opsets=(17, 18)):
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    ov_out = run_openvino(xml, {"x": x})[0]
    for opset in opsets:
        got = run_onnx(xml, {"x": x}, opset=opset)[0]
        assert got.dtype == dtype and got.shape == ref.shape
        for other in (want, ov_out, ref):
            np.testing.assert_allclose(got, other, **TOLS[dtype])


def _x(shape, dtype=np.float32):
    return np.random.default_rng(8).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([0, 1, 2], False)])
@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2"])
def test_reduce(tmp_path, op, axes, keep, dtype):
    x = ov_parameter([2, 3, 4], dtype, "x")
    fn = ops.reduce_l1 if op == "ReduceL1" else ops.reduce_l2
    xml = ov_save(tmp_path / "m.xml", fn(x, ops.constant(np.array(axes)), keep), [x])
    data = _x((2, 3, 4), dtype)
    d = data.astype(np.float64)
    ax = tuple(a % 3 for a in axes)
    ref = np.abs(d).sum(ax, keepdims=keep) if op == "ReduceL1" else np.sqrt((d * d).sum(ax, keepdims=keep))
    _check(xml, data, dtype, ref.astype(dtype))


@pytest.mark.parametrize("eps_mode", ["add", "max"])
@pytest.mark.parametrize("axes", [[1], [2, 3], [-1]])
def test_normalize_l2(tmp_path, axes, eps_mode):
    x = ov_parameter([1, 3, 2, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, axes, 1e-6, eps_mode), [x])
    data = _x((1, 3, 2, 4))
    ax = tuple(a % 4 for a in axes)
    s = (data.astype(np.float64) ** 2).sum(ax, keepdims=True)
    s = np.maximum(s, 1e-6) if eps_mode == "max" else s + 1e-6
    _check(xml, data, np.float32, (data / np.sqrt(s)).astype(np.float32))


def test_normalize_l2_zero_slice_max_eps(tmp_path):
    x = ov_parameter([2, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, [1], 0.25, "max"), [x])
    data = np.array([[0, 0, 0], [0.1, 0.2, 0.2]], np.float32)
    _check(xml, data, np.float32, (data / 0.5).astype(np.float32))


def test_normalize_l2_empty_axes_refused(tmp_path):
    x = ov_parameter([2, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, [], 1e-6, "max"), [x])
    with pytest.raises(UnsupportedLayer, match="no axes"):
        convert(xml)


def test_reduce_l2_axis_out_of_range(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("ReduceL2", "opset4", [x, w.const(np.array([2]))], {"keep_dims": False},
                     [("f32", [2])], name="rl2")[0])
    with pytest.raises(InvalidLayer, match="rl2.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("shape,axes", [((2, 3), []), ((), [])])
@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2"])
def test_reduce_over_no_axis_is_abs(tmp_path, op, shape, axes):
    """Regression (fuzzing): an empty axes list (or a scalar input) reduces every element on its
    own, so ReduceL1/L2 give |x|; the shared reduction lowering returned x unchanged."""
    x = ov_parameter(list(shape), np.float32, "x")
    fn = ops.reduce_l1 if op == "ReduceL1" else ops.reduce_l2
    xml = ov_save(tmp_path / "m.xml", fn(x, ops.constant(np.array(axes, np.int64)), True), [x])
    data = _x(shape)
    _check(xml, data, np.float32, np.abs(data))
