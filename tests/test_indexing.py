"""The gathers on OpenVINO-written IR: GatherElements-6, GatherND-8, NonZero-3 and Gather-1/-7/-8,
against the oracle, numpy and the OpenVINO runtime, bit for bit (data movement)."""
from __future__ import annotations


import numpy as np
import openvino.opset1 as ops1
import openvino.opset3 as o3
import openvino.opset6 as o6
import openvino.opset7 as ops7
import openvino.opset8 as o8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import all_outputs_bitexact, bitexact_everywhere, const, iota, node_types, random_data, save_model

RNG = np.random.default_rng(5)
DTYPES = [np.int8, np.uint8, np.float16, np.float32, np.int64]


def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather_elements_types_negative(tmp_path, dtype, itype):
    x, i = ov_parameter([3, 4], dtype, "x"), ov_parameter([3, 2], itype, "i")
    xml = ov_save(tmp_path / "m.xml", o6.gather_elements(x, i, -1), [x, i])
    data, idx = random_data(RNG, (3, 4), dtype), np.array([[0, -1], [3, -4], [-2, 1]], itype)
    bitexact_everywhere(xml, {"x": data, "i": idx}, np.take_along_axis(data, idx.astype(np.int64) % 4, 1))


def test_gather_elements_f16_signalling_nan_and_dynamic_batch(tmp_path):
    x, i = ov_parameter([None, 3], np.float16, "x"), ov_parameter([None, 3], np.int64, "i")
    xml = ov_save(tmp_path / "m.xml", o6.gather_elements(x, i, 0), [x, i])
    for n in (2, 5):
        data = np.arange(n * 3, dtype=np.uint16).reshape(n, 3) | 0x7C00  # sNaNs and infinities
        idx = RNG.integers(-n, n, (n, 3)).astype(np.int64)
        got = run_onnx(xml, {"x": data.view(np.float16), "i": idx})[0]
        assert_bitexact(got.view(np.uint16), np.take_along_axis(data, idx % n, 0))
        assert_bitexact(got, _oracle(xml, {"x": data.view(np.float16), "i": idx}))


# -- GatherND-8 ------------------------------------------------------------------------------
# Against the oracle, numpy and the OpenVINO runtime, bit for bit (data movement).
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather_nd_spec_example(tmp_path, itype):
    """GatherND-8: data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]] -> [1, 3]."""
    x = ov_parameter([2, 2], np.int32, "x")
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, ops.constant(np.array([[0, 0], [1, 0]], itype))), [x])
    bitexact_everywhere(xml, {"x": np.array([[1, 2], [3, 4]], np.int32)}, np.array([1, 3], np.int32))


def test_gather_nd_slices_negative(tmp_path):
    x = ov_parameter([3, 4, 2], np.float32, "x")
    idx = np.array([[[2], [-1]], [[0], [1]]], np.int64)  # [2, 2, 1]: slices [4, 2]
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, ops.constant(idx)), [x])
    data = np.random.default_rng(1).standard_normal((3, 4, 2)).astype(np.float32)
    bitexact_everywhere(xml, {"x": data}, data[idx[..., 0] % 3])


@pytest.mark.parametrize("bd", [1, 2])
def test_gather_nd_batch_dims(tmp_path, bd):
    x = ov_parameter([2, 3, 4, 5], np.float32, "x")
    rng = np.random.default_rng(9)
    shape = [2, 3][:bd] + [2, 1]
    idx = rng.integers(0, 3 if bd == 1 else 4, shape).astype(np.int32)
    i = ov_parameter(shape, np.int32, "i")
    xml = ov_save(tmp_path / "m.xml", o8.gather_nd(x, i, bd), [x, i])
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = bitexact_everywhere(xml, {"x": data, "i": idx})
    assert got.shape == tuple(shape[:-1]) + data.shape[bd + 1:]


# -- NonZero-3 -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.uint16, np.int32,
                                   np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("otype", ["i64", "i32"])
def test_nonzero(tmp_path, dtype, otype):
    x = ov_parameter([2, 3, 4], dtype, "x")
    xml = ov_save(tmp_path / "nz.xml", o3.non_zero(x, otype), [x])
    rng = np.random.default_rng(3)
    data = (rng.integers(-2, 3, (2, 3, 4)) * (rng.random((2, 3, 4)) < 0.5)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        data.reshape(-1)[[1, 5]] = [np.nan, -0.0]
    for feed in (data, np.zeros_like(data)):
        got = run_onnx(xml, {"x": feed})[0]
        assert_bitexact(got, list(evaluate(ir2onnx.load_ir(xml), {"x": feed}).values())[0], "oracle")
        assert_bitexact(got, run_openvino(xml, {"x": feed})[0], "openvino")
        assert_bitexact(got, np.array(np.nonzero(feed), dtype=got.dtype).reshape(3, -1), "numpy")


def test_nonzero_scalar_and_dynamic(tmp_path):
    x = ov_parameter([], np.float32, "x")
    xml = ov_save(tmp_path / "s.xml", o3.non_zero(x, "i32"), [x])
    for v, count in ((2.5, 1), (0.0, 0)):
        feed = {"x": np.array(v, np.float32)}
        got = run_onnx(xml, feed)[0]
        assert got.shape == (1, count)
        assert_bitexact(got, run_openvino(xml, feed)[0])
    x = ov_parameter([None, 5], np.float32, "x")
    xml = ov_save(tmp_path / "d.xml", o3.non_zero(x, "i64"), [x])
    feed = {"x": np.eye(3, 5, dtype=np.float32)}
    assert_bitexact(run_onnx(xml, feed)[0], run_openvino(xml, feed)[0])


# -- Gather-1/-7/-8 --------------------------------------------------------------------------
# Alone and in the shape subgraphs OpenVINO writes: data movement, bit for bit.
_param = ov_parameter


@pytest.mark.parametrize("module,negative", [(ops1, False), (ops7, False), (ops, True)])
@pytest.mark.parametrize("axis,indices", [(0, [[2, -1], [0, 5]]), (1, [3, -4, -5, 4, 0]), (-1, 1), (-2, [-3])])
def test_gather_runtime_indices(tmp_path, module, negative, axis, indices):
    """Negative indices count from the end in Gather-8; anything out of range gives zeros."""
    x = _param([3, 4], np.float32)
    idx = np.asarray(indices, np.int32)
    i = _param(list(idx.shape), np.int32, "i")
    xml = save_model(tmp_path, [module.gather(x, i, const(axis))], [x, i])
    got = all_outputs_bitexact(xml, {"x": iota((3, 4)), "i": idx})[0]
    if negative and axis == 1:
        assert got[0].tolist() == [4.0, 1.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int64, np.uint16, np.bool_])
def test_gather_constant_indices(tmp_path, dtype):
    x = _param([2, 3, 4], dtype)
    xml = save_model(tmp_path, [ops.gather(x, const([[1, -1], [0, 2]]), const(1))], [x])
    data = iota((2, 3, 4)) % 3 == 1 if dtype == np.bool_ else iota((2, 3, 4), dtype)
    all_outputs_bitexact(xml, {"x": data})
    assert node_types(ir2onnx.convert(xml)) == ["Gather", "Identity"]  # in range: no mask


def test_gather_dynamic_axis_size(tmp_path):
    x = _param([None, 2])
    xml = save_model(tmp_path, [ops.gather(x, const([-1, 0, 3]), const(0))], [x])
    for n in (1, 3, 5):
        all_outputs_bitexact(xml, {"x": iota((n, 2))})


@pytest.mark.parametrize("module", [ops7, ops])
@pytest.mark.parametrize("batch_dims,axis,idx_shape", [(1, 1, [2, 5]), (-1, 1, [2, 5]), (2, 2, [2, 3, 2]),
                                                       (1, 2, [2, 2, 3]), (1, -1, [2]), (0, 2, [2])])
def test_gather_batch_dims(tmp_path, module, batch_dims, axis, idx_shape):
    x = _param([2, 3, 4], np.float32)
    i = _param(idx_shape, np.int64, "i")
    xml = save_model(tmp_path, [module.gather(x, i, const(axis), batch_dims)], [x, i])
    idx = np.random.default_rng(len(idx_shape)).integers(-5, 6, idx_shape)
    all_outputs_bitexact(xml, {"x": iota((2, 3, 4)), "i": idx})


@pytest.mark.parametrize("axis,negative", [(0, False), (1, True)])
def test_gather_f16_out_of_range_keeps_signalling_nans(tmp_path, axis, negative):
    """Run-time indices are masked to zeros without a Where on the data (onnxruntime's f16
    Where quiets signalling NaNs): out-of-range indices pick an appended zero slab."""
    snan = np.array([0x7C01, 0x7D00, 0xFC05, 0x7C10, 0xFD55, 0x7E01], np.uint16)
    data = snan.view(np.float16).reshape(2, 3)
    size = data.shape[axis]
    idx = np.array([0, -1, size, -size - 1, size - 1], np.int64) if negative else np.array([1, 0, 5, 1], np.int64)
    pd, pi = ov_parameter([2, 3], np.float16, "d"), ov_parameter([len(idx)], np.int64, "i")
    node = ops.gather(pd, pi, ops.constant(np.int64(axis)))
    xml = ov_save(tmp_path / "g.xml", node, [pd, pi])
    (y,) = run_onnx(xml, [data, idx])
    expected = np.zeros(tuple(len(idx) if a == axis else d for a, d in enumerate(data.shape)), np.float16)
    for k, i in enumerate(idx):
        if -size <= i < size:
            np.moveaxis(expected, axis, 0)[k] = np.take(data, i, axis=axis)
    assert_bitexact(y, expected)


@pytest.mark.parametrize("module", [ops1, ops7, ops])
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.uint16, np.uint64])
def test_gather_runtime_indices_types_without_where(tmp_path, module, dtype):
    """Types onnxruntime's CPU Where lacks (boolean: the attention masks of BERT-like models) are
    masked by an appended zero slab; with batch_dims too. Out-of-range indices give zeros."""
    x, i = _param([None, 4], dtype), _param([2, 3], np.int64, "i")
    j = _param([3, 2], np.int64, "j")
    extra = [module.gather(x, j, const(1), 1)] if module is not ops1 else []
    xml = save_model(tmp_path, [module.gather(x, i, const(1)), *extra], [x, i, j][:2 + len(extra)])
    data = iota((3, 4)) % 3 == 1 if dtype == np.bool_ else iota((3, 4), dtype)
    feeds = {"x": data, "i": np.array([[0, 3, 4], [-1, -5, 2]], np.int64), "j": np.array([[1, 9], [-4, 0], [3, 2]])}
    got = all_outputs_bitexact(xml, {k: v for k, v in feeds.items() if k in ("x", "i") or extra})
    negative = module is ops
    expected = np.where(np.array([[1, 1, 0], [negative, 0, 1]], bool), data[:, [[0, 3, 0], [3, 0, 2]]], 0)
    assert_bitexact(got[0], expected.astype(dtype))


def test_gather_axis_computed_from_shapes_folds(tmp_path):
    """axis = rank(x) - 1 computed by the graph (ShapeOf, ShapeOf, Subtract) on dynamic dims:
    the rank is static, so the axis folds and ONNX's Gather gets it as its attribute."""
    x = ov_parameter([None, 3, None], np.float32, "x")
    rank = ops.shape_of(ops.shape_of(x))
    axis = ops.squeeze(ops.subtract(rank, ops.constant(np.array([1], np.int64))), ops.constant(np.array([0])))
    xml = ov_save(tmp_path / "g.xml", ops.gather(x, ops.constant(np.array([1, 0])), axis), [x])
    for shape in ((2, 3, 4), (1, 3, 2)):
        data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        got = run_onnx(xml, {"x": data})[0]
        assert_bitexact(got, data[..., [1, 0]], "numpy")
        assert_bitexact(got, run_openvino(xml, {"x": data})[0], "OpenVINO")


def test_gather_bf16_out_of_range_indices_at_opset_17(tmp_path):
    """bf16 data gathers through a zero slab (out-of-range indices pick it): ConstantOfShape takes
    bf16 only from opset 20, so the slab is f32 zeros and a Cast (the ONNX node test
    test_compress_bfloat16 failed onnx.checker here)."""
    import ml_dtypes
    import openvino as ov

    from ir2onnx.testing import run_onnx, run_openvino

    x = ops.parameter([2, 5], ov.Type.bf16, name="x")
    x.output(0).get_tensor().set_names({"x"})
    y = o8.gather(x, ops.constant(np.array([4, -1, 7, 0], np.int64)), ops.constant(np.int64(1)))
    xml = tmp_path / "g.xml"
    ov.save_model(ov.Model([y], [x]), str(xml))
    data = np.arange(10, dtype=np.float32).reshape(2, 5).astype(ml_dtypes.bfloat16)
    got = run_onnx(xml, {"x": data}, opset=17)[0]
    want = np.stack([data[:, 4], data[:, 4], np.zeros(2, data.dtype), data[:, 0]], 1)
    assert got.dtype == data.dtype and np.array_equal(got.astype(np.float32), want.astype(np.float32))
    ov_out = run_openvino(xml, {"x": data})[0]  # OpenVINO's Python API gives bf16 as f16 bits
    assert np.array_equal(ov_out.view(data.dtype).astype(np.float32), want.astype(np.float32))


def test_gather_1_ignores_an_attribute_named_batch_dims(tmp_path):
    """Gather-1 has no batch_dims: a stray attribute of that name (unparsed, a string) is not
    read as Gather-7's (fuzz case 6504: a TypeError, exit 3, before)."""
    w = IRWriter("gather1")
    x = w.parameter([4, 3], "f32", "x")
    idx = w.const(np.array([2, 0], np.int64))
    axis = w.const(np.array(0, np.int64))
    y = w.layer("Gather", "opset1", [x, idx, axis], {"batch_dims": "1"}, [("f32", [2, 3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "g.xml")
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    (out,) = run_onnx(xml, {"x": data})
    assert_bitexact(out, data[[2, 0]])
