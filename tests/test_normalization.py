"""The normalizations on OpenVINO-written IR, against the float64 oracle and the OpenVINO runtime:
MVN-6 (LayerNorm as OpenVINO writes it) here, GroupNormalization, BatchNormInference and
NormalizeL2 below with their own tolerances. MVN: f32: rtol 1e-5, atol 1e-5 (two reductions, a sqrt
and a division); f16: 4e-3 (computed in f32, rounded once); f64 against the oracle: 1e-9."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset12 as ops12
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

from util import close_to_reference

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=4e-3, atol=4e-3)}


def _mvn_ir(tmp_path, axes, normalize=True, eps=1e-5, mode="inside_sqrt", dtype=np.float32, shape=(2, 3, 8)):
    x = ov_parameter(shape, dtype, "x")
    y = ops.mvn(x, ops.constant(np.array(axes, np.int64)), normalize, eps, mode)
    return ov_save(tmp_path / "mvn.xml", y, [x])


def _check(xml, x, dtype=np.float32):
    got = run_onnx(xml, {"x": x})[0]
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), **TOL[dtype])
    np.testing.assert_allclose(got, run_openvino(xml, {"x": x})[0], **TOL[dtype])
    return got


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("axes", [[-1], [1, 2], [0, 2], [2, 0, 1]])
def test_mvn(tmp_path, axes, mode, opset):
    xml = _mvn_ir(tmp_path, axes, mode=mode, eps=0.01)
    x = (np.random.default_rng(7).standard_normal((2, 3, 8)) * 3 + 1).astype(np.float32)
    got = run_onnx(xml, {"x": x}, opset=opset)[0]
    np.testing.assert_allclose(got, _check(xml, x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axes", [[-1], [1, 2]])
def test_layer_norm_forms(tmp_path, axes):
    """LayerNorm's form: LayerNormalization from opset 17, the chain below; both match numpy,
    also with a mean large next to the spread."""
    xml = _mvn_ir(tmp_path, axes, eps=1e-5)
    x = (np.random.default_rng(8).standard_normal((2, 3, 8)) + 50).astype(np.float32)
    v = x.astype(np.float64)
    c = v - v.mean(tuple(axes), keepdims=True)
    want = c / np.sqrt((c ** 2).mean(tuple(axes), keepdims=True) + 1e-5)
    np.testing.assert_allclose(_check(xml, x), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(run_onnx(xml, {"x": x}, opset=14)[0], want, rtol=1e-4, atol=1e-4)
    assert [n.op_type for n in convert(xml).graph.node] == ["LayerNormalization", "Identity"]
    chain = [n.op_type for n in convert(xml, opset=14).graph.node]
    assert chain == ["ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Identity"]


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_layer_norm_types(tmp_path, dtype):
    xml = _mvn_ir(tmp_path, [-1], dtype=dtype)
    x = np.random.default_rng(15).standard_normal((2, 3, 8)).astype(dtype)
    got = run_onnx(xml, {"x": x})[0]
    assert got.dtype == dtype
    tol = TOL.get(dtype, dict(rtol=1e-9, atol=1e-9))
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), **tol)


def test_mean_only(tmp_path):
    xml = _mvn_ir(tmp_path, [1], normalize=False)
    x = np.random.default_rng(9).standard_normal((2, 3, 8)).astype(np.float32)
    np.testing.assert_allclose(_check(xml, x), x - x.mean(1, keepdims=True), rtol=1e-6, atol=1e-6)


def test_f16(tmp_path):
    xml = _mvn_ir(tmp_path, [0, 2], dtype=np.float16)
    x = np.random.default_rng(10).standard_normal((2, 3, 8)).astype(np.float16)
    _check(xml, x, np.float16)


def test_constant_row_gives_zeros(tmp_path):
    """var = 0: (x - mean) / sqrt(eps) = 0 (no NaN)."""
    xml = _mvn_ir(tmp_path, [-1], eps=1e-9)
    x = np.full((2, 3, 8), 4.0, np.float32)
    assert not _check(xml, x).any()


@pytest.mark.parametrize("axes,match", [([3], "out of range"), ([1, -2], "twice")])
def test_invalid_axes(tmp_path, axes, match):
    w = IRWriter()
    x = w.parameter([2, 3, 4], "f32", "x")
    w.result(w.layer("MVN", "opset6", [x, w.const(np.array(axes))],
                     {"normalize_variance": True, "eps": 1e-5, "eps_mode": "inside_sqrt"},
                     [("f32", [2, 3, 4])], name="ln")[0])
    with pytest.raises(InvalidLayer, match=f"ln.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


def test_empty_batch_through_dynamic_dim(tmp_path):
    """Regression (fuzzing): a dynamic batch run at size 0 with the batch among the axes made the
    oracle divide by a zero element count; the same converted model runs at sizes 2 and 0."""
    xml = _mvn_ir(tmp_path, [0, 2], shape=(-1, 3, 4))
    for n in (2, 0):
        x = np.random.default_rng(n).standard_normal((n, 3, 4)).astype(np.float32)
        got = run_onnx(xml, {"x": x})[0]
        assert got.shape == (n, 3, 4)
        want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
        np.testing.assert_allclose(got, want, **TOL[np.float32])
    assert ir2onnx.check(xml, inputs={"x": x}, openvino=False).ok


@pytest.mark.parametrize("axes", [[-1], [0, 1]])
def test_empty_static_dim(tmp_path, axes):
    """Regression (fuzzing): MVN over a static size-0 axis became LayerNormalization with a
    0-element scale initializer, which onnxruntime reports as a missing input at run time."""
    xml = _mvn_ir(tmp_path, axes, shape=(2, 0))
    x = np.zeros((2, 0), np.float32)
    for opset in (14, 17, 18):
        assert run_onnx(xml, {"x": x}, opset=opset)[0].shape == (2, 0)
    assert next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())).shape == (2, 0)


# -- GroupNormalization-12, BatchNormInference-1/-5 ------------------------------------------
# GroupNormalization-12 and BatchNormInference-1/-5 on OpenVINO-written IR, against the float64
# oracle and the OpenVINO runtime.
#
# Tolerances (measured, ir2onnx 1.31 onnxruntime vs OpenVINO 2026.4 CPU, f32 inference precision):
# GroupNormalization f32 max |diff| 9.5e-7 on N(0, 2) data, 3.8e-6 with a mean of 50 (the f32
# ReduceMean's rounding), so rtol = atol = 1e-5; f16 (computed in f32, rounded once) 1 f16 ulp, so
# rtol = atol = 2e-3. BatchNormInference f32: 1e-5 (coefficients folded in float64, rounded once).
CHANNEL_NORM_TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3),
       np.float64: dict(rtol=1e-9, atol=1e-9)}


def _oracle_outputs(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


def _check_channel_norm(xml, feeds, dtype, opset=None, openvino=True):
    got = run_onnx(xml, feeds, opset=opset)[0]
    want = _oracle_outputs(xml, feeds)[0]
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **CHANNEL_NORM_TOL[dtype])
    if openvino:
        np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **CHANNEL_NORM_TOL[dtype])
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
    _check_channel_norm(xml, {"x": x}, np.float32, opset=opset)
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
    _check_channel_norm(xml, {"x": x}, np.float32)


@pytest.mark.parametrize("compress", [False, True])
def test_group_norm_f16_and_compressed(tmp_path, compress):
    dtype = np.float32 if compress else np.float16
    xml = _group_norm_ir(tmp_path, (2, 8, 4, 4), 4, dtype=dtype, compress=compress)
    x = np.random.default_rng(5).standard_normal((2, 8, 4, 4)).astype(dtype)
    _check_channel_norm(xml, {"x": x}, dtype)
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
        _check_channel_norm(xml, feeds, np.float32)


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
        _oracle_outputs(xml, {"x": np.zeros((1, 6, 2), np.float32)})


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
    _check_channel_norm(xml, {"x": rng.standard_normal(real).astype(np.float32)}, np.float32)
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
    _check_channel_norm(xml, feeds, np.float32)
    assert "BatchNormalization" in [n.op_type for n in convert(xml).graph.node]


@pytest.mark.parametrize("dtype,compress", [(np.float16, False), (np.float32, True)])
def test_batch_norm_f16(tmp_path, dtype, compress):
    rng = np.random.default_rng(9)
    x = ov_parameter((2, 3, 4, 4), dtype, "x")
    y = ops.batch_norm_inference(x, *[ops.constant(p) for p in _bn_params(3, dtype, rng)], 1e-5)
    xml = ov_save(tmp_path / "bn16.xml", y, [x], compress_to_fp16=compress)
    _check_channel_norm(xml, {"x": rng.standard_normal((2, 3, 4, 4)).astype(dtype)}, dtype)


def test_batch_norm_all_constant_folds(tmp_path):
    rng = np.random.default_rng(10)
    data = rng.standard_normal((1, 3, 2)).astype(np.float32)
    y = ops.batch_norm_inference(ops.constant(data), *[ops.constant(p) for p in _bn_params(3, np.float32, rng)], 1e-5)
    model = ov.Model([ops.result(y)], [], "bn_fold")
    path = tmp_path / "bn_fold.xml"
    ov.save_model(model, str(path))
    onnx_model = convert(path)
    assert [n.op_type for n in onnx_model.graph.node] == ["Identity"]
    np.testing.assert_allclose(run_onnx(path, {})[0], _oracle_outputs(path, {})[0], rtol=1e-6, atol=1e-6)


def test_batch_norm_channel_mismatch_is_invalid(tmp_path):
    w = IRWriter("bn_bad")
    x = w.parameter((1, 3, 2), "f32", "x")
    p = [w.const(np.ones(4, np.float32)) for _ in range(4)]
    y = w.layer("BatchNormInference", "opset5", [x] + p, {"epsilon": 1e-5}, [("f32", (1, 3, 2))])[0]
    w.result(y)
    xml = w.save(tmp_path / "bn_bad.xml")
    with pytest.raises(InvalidLayer, match="4 values for 3 channels"):
        convert(xml)


# -- NormalizeL2-1 ---------------------------------------------------------------------------
# Against the oracle, numpy and the OpenVINO runtime: f32 within rtol 1e-5, atol 1e-6; f16 within 2e-3.
def normalize_l2(x, axes, eps, eps_mode):
    """openvino.opset*.normalize_l2 always writes eps_mode='add' (2026.4); the factory does not."""
    from openvino.utils.node_factory import NodeFactory

    a = ops.constant(np.array(axes, np.int64))
    return NodeFactory("opset1").create("NormalizeL2", [x.output(0), a.output(0)], {"eps": eps, "eps_mode": eps_mode})


def _l2_data(shape, dtype=np.float32):
    return np.random.default_rng(8).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("eps_mode", ["add", "max"])
@pytest.mark.parametrize("axes", [[1], [2, 3], [-1]])
def test_normalize_l2(tmp_path, axes, eps_mode):
    x = ov_parameter([1, 3, 2, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, axes, 1e-6, eps_mode), [x])
    data = _l2_data((1, 3, 2, 4))
    ax = tuple(a % 4 for a in axes)
    s = (data.astype(np.float64) ** 2).sum(ax, keepdims=True)
    s = np.maximum(s, 1e-6) if eps_mode == "max" else s + 1e-6
    close_to_reference(xml, data, np.float32, (data / np.sqrt(s)).astype(np.float32))


def test_normalize_l2_zero_slice_max_eps(tmp_path):
    x = ov_parameter([2, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, [1], 0.25, "max"), [x])
    data = np.array([[0, 0, 0], [0.1, 0.2, 0.2]], np.float32)
    close_to_reference(xml, data, np.float32, (data / 0.5).astype(np.float32))


def test_normalize_l2_empty_axes_refused(tmp_path):
    x = ov_parameter([2, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", normalize_l2(x, [], 1e-6, "max"), [x])
    with pytest.raises(UnsupportedLayer, match="no axes"):
        convert(xml)


# -- axes fed at run time ------------------------------------------------------------------------------
def _mvn_ref(x, axes, normalize, eps, inside):
    v = x.astype(np.float64)
    c = v - v.mean(axis=tuple(axes), keepdims=True) if axes else v - v
    if not normalize:
        return c
    var = (c * c).mean(axis=tuple(axes), keepdims=True) if axes else c * c
    return c / (np.sqrt(var + eps) if inside else np.sqrt(var) + eps)


@pytest.mark.parametrize("mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("normalize", [True, False])
def test_mvn_run_time_axes(tmp_path, mode, normalize):
    """MVN-6 axes as a Parameter (negative ones, none), dynamic dims: opset 18 chosen."""
    for count, values in ((1, [[-1], [1]]), (2, [[1, 2], [0, -1]]), (0, [[]])):
        x = ov_parameter([None, 3, None], np.float32, "x")
        a = ov_parameter([count], np.int32, "a")
        xml = ov_save(tmp_path / f"m{count}.xml", ops.mvn(x, a, normalize, 1e-4, mode), [x, a])
        assert convert(xml).opset_import[0].version == 18
        for shape in ((2, 3, 4), (1, 3, 6)):
            data = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
            for axes in values:
                feeds = {"x": data, "a": np.array(axes, np.int32)}
                got = run_onnx(xml, feeds)[0]
                np.testing.assert_allclose(got, _mvn_ref(data, axes, normalize, 1e-4, mode == "inside_sqrt"),
                                           rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())),
                                           rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("eps_mode", ["add", "max"])
def test_normalize_l2_run_time_axes(tmp_path, eps_mode):
    x = ov_parameter([None, 3, None], np.float32, "x")
    a = ov_parameter([2], np.int64, "a")
    from openvino.utils.node_factory import NodeFactory

    node = NodeFactory("opset1").create("NormalizeL2", [x.output(0), a.output(0)], {"eps": 0.5, "eps_mode": eps_mode})
    xml = ov_save(tmp_path / "n.xml", node, [x, a])
    for shape in ((2, 3, 4), (1, 3, 2)):
        data = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32) * 0.3
        for axes in ([1, 2], [0, -1]):
            feeds = {"x": data, "a": np.array(axes)}
            got = run_onnx(xml, feeds)[0]
            total = (data.astype(np.float64) ** 2).sum(axis=tuple(axes), keepdims=True)
            want = data / np.sqrt(np.maximum(total, 0.5) if eps_mode == "max" else total + 0.5)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())),
                                       rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5, atol=1e-6)
