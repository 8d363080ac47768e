"""The reductions (constant axes, keep_dims) on OpenVINO-written IR, against the oracle and the
OpenVINO runtime: ReduceMean, ReduceMax, ReduceMin here (max/min bit for bit, float means within
f32 rtol 1e-5), ReduceL1/L2 and ReduceProd/ReduceSum below."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import close_to_reference, small_ints

REDUCE = {"ReduceMean": ops.reduce_mean, "ReduceMax": ops.reduce_max, "ReduceMin": ops.reduce_min}


def _ir(tmp_path, op, dtype, axes, keep, shape=(2, 3, 4)):
    x = ov_parameter(shape, dtype, "x")
    return ov_save(tmp_path / "r.xml", REDUCE[op](x, ops.constant(np.array(axes, np.int64)), keep), [x])


def _data(dtype, shape=(2, 3, 4)):
    rng = np.random.default_rng(6)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -50
    return rng.integers(low, 50, shape).astype(dtype)


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([2], True), ([0, 1, 2], False)])
@pytest.mark.parametrize("op", list(REDUCE))
def test_float(tmp_path, op, axes, keep, opset):
    xml = _ir(tmp_path, op, np.float32, axes, keep)
    x = _data(np.float32)
    got = run_onnx(xml, {"x": x}, opset=opset)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    expected = {"ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min}[op](
        x, axis=tuple(axes), keepdims=keep)
    assert got.shape == expected.shape
    if op == "ReduceMean":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, run_openvino(xml, {"x": x})[0], rtol=1e-5, atol=1e-6)
    else:
        assert_bitexact(got, want)
        assert_bitexact(got, run_openvino(xml, {"x": x})[0])
        assert_bitexact(got, expected)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8, np.float16])
@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_max_min_types(tmp_path, op, dtype):
    xml = _ir(tmp_path, op, dtype, [1], True)
    x = _data(dtype)
    got = run_onnx(xml, {"x": x})[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())))
    assert_bitexact(got, run_openvino(xml, {"x": x})[0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_mean_truncates(tmp_path, dtype):
    """sum / count truncated toward zero (OpenVINO's reference and CPU plugin agree)."""
    xml = _ir(tmp_path, "ReduceMean", dtype, [1], False, shape=(2, 3))
    x = np.array([[1, 2, 2], [-7, -1, 0]], dtype)
    got = run_onnx(xml, {"x": x})[0]
    assert got.tolist() == [1, -2]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())))
    assert_bitexact(got, run_openvino(xml, {"x": x})[0])


def test_narrow_integer_mean_is_refused(tmp_path):
    """OpenVINO's CPU plugin saturates the u8 sum (mean of [250, 255, 3] is 85): refused."""
    xml = _ir(tmp_path, "ReduceMean", np.uint8, [1], False, shape=(2, 3))
    with pytest.raises(InvalidLayer, match="ReduceMean on u8 is not supported"):
        convert(xml)


def test_f16_mean(tmp_path):
    xml = _ir(tmp_path, "ReduceMean", np.float16, [-1], True)
    x = _data(np.float16)
    got = run_onnx(xml, {"x": x})[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": x})[0], rtol=2e-3, atol=2e-3)


def test_constant_folds(tmp_path):
    x = ov_parameter([2], np.float32, "x")
    k = ops.reduce_mean(ops.constant(np.array([[1, 2], [3, 5]], np.float32)), ops.constant(np.array([0])), False)
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]
    assert_bitexact(run_onnx(xml, {"x": np.zeros(2, np.float32)})[0], np.array([2, 3.5], np.float32))


def test_axis_out_of_range(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("ReduceMax", "opset1", [x, w.const(np.array([2]))], {"keep_dims": False},
                     [("f32", [2])], name="rmax")[0])
    with pytest.raises(InvalidLayer, match="rmax.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("opset", [14, 18])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shape,axes,keep", [((5, 3), [0], False), ((2, 7, 3), [0, -1], True), ((4, 0), [1], True)])
def test_integer_product_wraps(tmp_path, dtype, shape, axes, keep, opset):
    """Regression (fuzzing): onnxruntime's integer ReduceProd saturates on overflow (i32
    2^20 * 2^20 -> 2^31-1); the spec, numpy and OpenVINO wrap. The lowering now multiplies by
    halving each reduced axis (Slice, Mul). OpenVINO is compared on i32 only: it computes i64 in
    32 bits and saturates u8 (README, Where OpenVINO's runtime differs from the spec)."""
    x = ov_parameter(list(shape), dtype, "x")
    xml = ov_save(tmp_path / "r.xml", ops.reduce_prod(x, ops.constant(np.array(axes, np.int64)), keep), [x])
    rng = np.random.default_rng(2)
    data = rng.integers(1, 2**12 if dtype != np.uint8 else 255, shape).astype(dtype)
    want = np.prod(data, axis=tuple(a % len(shape) for a in axes), keepdims=keep, dtype=dtype)
    got = run_onnx(xml, {"x": data}, opset=opset)[0]
    assert_bitexact(got, want, "onnxruntime vs numpy")
    assert_bitexact(next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), want, "oracle vs numpy")
    if dtype == np.int32:
        assert_bitexact(run_openvino(xml, {"x": data})[0], want, "OpenVINO vs numpy")


# -- ReduceL1-4, ReduceL2-4 ------------------------------------------------------------------
# Against the oracle, numpy and the OpenVINO runtime: f32 within rtol 1e-5, atol 1e-6; f16 within 2e-3.
def _norm_data(shape, dtype=np.float32):
    return np.random.default_rng(8).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([0, 1, 2], False)])
@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2"])
def test_reduce_l1_l2(tmp_path, op, axes, keep, dtype):
    x = ov_parameter([2, 3, 4], dtype, "x")
    fn = ops.reduce_l1 if op == "ReduceL1" else ops.reduce_l2
    xml = ov_save(tmp_path / "m.xml", fn(x, ops.constant(np.array(axes)), keep), [x])
    data = _norm_data((2, 3, 4), dtype)
    d = data.astype(np.float64)
    ax = tuple(a % 3 for a in axes)
    ref = np.abs(d).sum(ax, keepdims=keep) if op == "ReduceL1" else np.sqrt((d * d).sum(ax, keepdims=keep))
    close_to_reference(xml, data, dtype, ref.astype(dtype))


def test_reduce_l2_axis_out_of_range(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("ReduceL2", "opset4", [x, w.const(np.array([2]))], {"keep_dims": False},
                     [("f32", [2])], name="rl2")[0])
    with pytest.raises(InvalidLayer, match="rl2.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("shape,axes", [((2, 3), []), ((), [])])
@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2"])
def test_reduce_l1_l2_over_no_axis_is_abs(tmp_path, op, shape, axes):
    """Regression (fuzzing): an empty axes list (or a scalar input) reduces every element on its
    own, so ReduceL1/L2 give |x|; the shared reduction lowering returned x unchanged."""
    x = ov_parameter(list(shape), np.float32, "x")
    fn = ops.reduce_l1 if op == "ReduceL1" else ops.reduce_l2
    xml = ov_save(tmp_path / "m.xml", fn(x, ops.constant(np.array(axes, np.int64)), True), [x])
    data = _norm_data(shape)
    close_to_reference(xml, data, np.float32, np.abs(data))


# -- ReduceProd-1, ReduceSum-1 ---------------------------------------------------------------
# Integer products and sums wrap: bit for bit; floats within the tolerances above.
_param = ov_parameter


def _save_model(tmp_path, outputs, params, name="m") -> Path:
    return ov_save(tmp_path / f"{name}.xml", outputs, params)


def _oracle_output(xml, feeds):
    return next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))


# -- reductions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["ReduceProd", "ReduceSum"])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([-2], True), ([0, 1, 2], False)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.int64])
@pytest.mark.parametrize("opset", [17, 18])
def test_reduce_prod_and_sum(tmp_path, op, axes, keep, dtype, opset):
    x = _param([2, 3, 2], dtype, "x")
    fn = ops.reduce_prod if op == "ReduceProd" else ops.reduce_sum
    xml = _save_model(tmp_path, [fn(x, ops.constant(np.array(axes, np.int64)), keep)], [x])
    data = small_ints(np.random.default_rng(3), (2, 3, 2), dtype) if dtype != np.float32 else \
        np.random.default_rng(3).standard_normal((2, 3, 2)).astype(np.float32)
    got = run_onnx(xml, {"x": data}, opset=opset)[0]
    want = _oracle_output(xml, {"x": data})
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=1e-5, atol=1e-6)
    else:
        assert_bitexact(got, want)
        if dtype in (np.int32, np.int64) or op == "ReduceSum":
            assert_bitexact(got, run_openvino(xml, {"x": data})[0])


def test_reduce_prod_sum_with_empty_axes_is_identity(tmp_path):
    w = IRWriter("r")
    x = w.parameter([2, 3], "i32", "x")
    y = w.layer("ReduceProd", "opset1", [x, w.const(np.zeros(0, np.int64))], {"keep_dims": False},
                [("i32", [2, 3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "r.xml")
    data = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_bitexact(run_onnx(xml, {"x": data})[0], data)  # (OpenVINO cannot read an empty Const)
    assert_bitexact(_oracle_output(xml, {"x": data}), data)


RUN_TIME = {"ReduceMean": ops.reduce_mean, "ReduceMax": ops.reduce_max, "ReduceMin": ops.reduce_min,
            "ReduceSum": ops.reduce_sum, "ReduceProd": ops.reduce_prod, "ReduceL1": ops.reduce_l1,
            "ReduceL2": ops.reduce_l2}
NP = {"ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceSum": np.sum,
      "ReduceProd": np.prod, "ReduceL1": lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
      "ReduceL2": lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims))}


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("op", list(RUN_TIME))
def test_run_time_axes(tmp_path, op, keep):
    """axes fed at run time (i32, negative ones normalised in the graph, none at all), on dynamic
    dims resolved to two sizes (the output's rank is dynamic in the IR without keep_dims); the opset
    chosen is 18 (13 would do for ReduceSum: 17 stays)."""
    for count, values in ((1, [[1], [-1], [0]]), (2, [[0, -1], [2, 1]]), (0, [[]])):
        x = ov_parameter([None, 3, None], np.float32, "x")
        a = ov_parameter([count], np.int32, "a")
        xml = ov_save(tmp_path / f"r{count}.xml", RUN_TIME[op](x, a, keep), [x, a])
        assert convert(xml).opset_import[0].version == (17 if op == "ReduceSum" else 18)
        for shape in ((2, 3, 4), (1, 3, 5)):
            data = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
            for axes in values:
                feeds = {"x": data, "a": np.array(axes, np.int32)}
                got = run_onnx(xml, feeds)[0]
                want = NP[op](data, axis=tuple(axes), keepdims=keep) if axes else NP[op](data, axis=(), keepdims=True)
                if op in ("ReduceL1", "ReduceL2") and not axes:
                    want = np.abs(data)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"numpy {axes}")
                np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())),
                                           rtol=1e-5, atol=1e-6, err_msg=f"oracle {axes}")
                if keep:  # (OpenVINO 2026.4's CPU plugin refuses keep_dims=false: "dynamic rank")
                    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5, atol=1e-6,
                                               err_msg=f"OpenVINO {axes}")


def test_run_time_axes_forced_opset_17_is_refused(tmp_path):
    from ir2onnx.errors import NeedsOpset

    x = ov_parameter([2, 3], np.float32, "x")
    a = ov_parameter([1], np.int64, "a")
    xml = ov_save(tmp_path / "m.xml", ops.reduce_max(x, a, False), [x, a])
    with pytest.raises(NeedsOpset, match="axes known only at run time needs ONNX opset >= 18"):
        convert(xml, opset=17)


def test_run_time_axes_integer_mean_and_prod(tmp_path):
    x = ov_parameter([None, 3], np.int32, "x")
    a = ov_parameter([1], np.int64, "a")
    xml = ov_save(tmp_path / "m.xml", ops.reduce_mean(x, a, True), [x, a])
    data = np.array([[7, -8, 1], [2, 5, -9]], np.int32)
    for axes in ([0], [-1]):
        feeds = {"x": data, "a": np.array(axes)}
        got = run_onnx(xml, feeds)[0]
        total = data.astype(np.int64).sum(axis=axes[0], keepdims=True)
        want = (np.abs(total) // data.shape[axes[0]] * np.sign(total)).astype(np.int32)  # toward zero
        assert_bitexact(got, want, f"truncated mean {axes}")
        assert_bitexact(got, run_openvino(xml, feeds)[0], "OpenVINO")
    xml = ov_save(tmp_path / "p.xml", ops.reduce_prod(x, a, True), [x, a])
    with pytest.raises(InvalidLayer, match="integer ReduceProd over axes known only at run time"):
        convert(xml)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.uint32])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, 2], True), ([0, 1, 2], False)])
def test_integer_sum_is_exact_and_wraps(tmp_path, dtype, axes, keep):
    """Integer ReduceSum adds exactly and wraps, as numpy, torch and the spec do: onnxruntime's
    ReduceSum rounds i64 sums above 2^53 and saturates, so the lowering sums by CumSum. OpenVINO's
    CPU plugin sums integers in f32 (exact only below 2^24; i64 cut to 32 bits first: measured),
    so it is compared on small values only. Dynamic dims, an empty axis included."""
    x = ov_parameter([None, None, 4], dtype, "x")
    xml = ov_save(tmp_path / "s.xml", ops.reduce_sum(x, ops.constant(np.array(axes, np.int64)), keep), [x])
    info = np.iinfo(dtype)
    rng = np.random.default_rng(11)
    big = rng.integers(info.max // 4, info.max, (2, 3, 4), dtype=np.int64 if dtype != np.uint32 else np.uint64)
    big = big.astype(dtype)
    big[0, 0, 0] = 2**53 + 1 if dtype == np.int64 else big[0, 0, 0]
    for data in (big, np.zeros((0, 3, 4), dtype), _data(dtype)):
        with np.errstate(over="ignore"):
            want = np.sum(data, axis=tuple(axes), keepdims=keep, dtype=dtype)
        got = run_onnx(xml, {"x": data})[0]
        assert_bitexact(got, want, "numpy")
        assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), "oracle")
    small = _data(dtype)
    assert_bitexact(run_onnx(xml, {"x": small})[0], run_openvino(xml, {"x": small})[0], "openvino")


def test_openvino_sums_integers_in_f32(tmp_path):
    """The deviation in the README: 2^24 + 1 + 2 is 2^24 + 3 (ir2onnx, numpy) but 2^24 + 2 in
    OpenVINO 2026.4's CPU plugin; i64 2^33 + 1 + 2 gives 3 there (the high bits dropped)."""
    for dtype, first, want in ((np.int32, 2**24 + 1, 2**24 + 3), (np.int64, 2**33 + 1, 2**33 + 3)):
        x = ov_parameter([None, 3], dtype, "x")
        xml = ov_save(tmp_path / "d.xml", ops.reduce_sum(x, ops.constant(np.array([1])), False), [x])
        data = np.array([[first, 2, 0]], dtype)
        assert run_onnx(xml, {"x": data})[0].tolist() == [want]
        assert run_openvino(xml, {"x": data})[0].tolist() != [want]
