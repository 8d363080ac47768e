"""The scatters on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime, bit for
bit (data movement): ScatterNDUpdate-3 (IR version opset4) here, ScatterElementsUpdate-3/-12 and
ScatterUpdate-3 below."""
from __future__ import annotations

import numpy as np
import openvino.opset3 as o3
import openvino.opset4 as o4
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere, random_data


def test_scatter_nd_update_spec_example(tmp_path):
    """ScatterNDUpdate-3: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]."""
    x = ov_parameter([8], np.int32, "x")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[4], [3], [1], [7]], np.int64)),
                                ops.constant(np.array([9, 10, 11, 12], np.int32)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    bitexact_everywhere(xml, {"x": np.arange(1, 9, dtype=np.int32)}, np.array([1, 11, 3, 10, 9, 6, 7, 12], np.int32))


def test_scatter_nd_update_slices_runtime_updates(tmp_path):
    x, u = ov_parameter([4, 3, 2], np.float32, "x"), ov_parameter([2, 3, 2], np.float32, "u")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[2], [0]], np.int32)), u)
    xml = ov_save(tmp_path / "m.xml", node, [x, u])
    rng = np.random.default_rng(7)
    data, upd = rng.standard_normal((4, 3, 2)).astype(np.float32), rng.standard_normal((2, 3, 2)).astype(np.float32)
    want = data.copy()
    want[[2, 0]] = upd
    bitexact_everywhere(xml, {"x": data, "u": upd}, want)


def test_scatter_nd_update_bad_updates(tmp_path):
    w = IRWriter()
    x = w.parameter([4, 3], "f32", "x")
    out = w.layer("ScatterNDUpdate", "opset4", [x, w.const(np.array([[1]], np.int64)),
                                                w.const(np.zeros((1, 3, 1), np.float32))],
                  {}, [("f32", [4, 3])], name="snu")[0]
    w.result(out)
    with pytest.raises(InvalidLayer, match="snu.*updates"):
        convert(w.save(tmp_path / "bad.xml"))


def test_scatter_nd_update_negative_index(tmp_path):
    x = ov_parameter([4], np.float32, "x")
    node = o4.scatter_nd_update(x, ops.constant(np.array([[-1]], np.int64)), ops.constant(np.array([5], np.float32)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    bitexact_everywhere(xml, {"x": np.zeros(4, np.float32)}, np.array([0, 0, 0, 5], np.float32))


# -- ScatterElementsUpdate-3/-12, ScatterUpdate-3 --------------------------------------------
# GatherElements-6, ScatterElementsUpdate-3/-12 and ScatterUpdate-3 on OpenVINO-written IR
# against the oracle, numpy and the OpenVINO runtime (bit for bit where the op only moves data).
RNG = np.random.default_rng(5)
DTYPES = [np.int8, np.uint8, np.float16, np.float32, np.int64]


def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]


def test_scatter_elements_update3_spec_example(tmp_path):
    x = ov_parameter([3, 4], np.int32, "x")
    node = o3.scatter_elements_update(x, ops.constant(np.array([[1, 2], [0, 3]], np.int64)),
                                      ops.constant(np.array([[11, 12], [13, 14]], np.int32)), ops.constant(np.int64(1)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    want = np.array([[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]], np.int32)
    bitexact_everywhere(xml, {"x": np.zeros((3, 4), np.int32)}, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_elements_none_runtime_indices_dynamic(tmp_path, dtype):
    x, i, u = ov_parameter([None, 4], dtype, "x"), ov_parameter([None, 2], np.int32, "i"), ov_parameter([None, 2], dtype, "u")
    xml = ov_save(tmp_path / "m.xml", ops.scatter_elements_update(x, i, u, ops.constant(np.int32(-1))), [x, i, u])
    for n in (1, 3):
        data, upd = random_data(RNG, (n, 4), dtype), random_data(RNG, (n, 2), dtype)
        idx = np.array([RNG.permutation(4)[:2] - 4 * (r % 2) for r in range(n)], np.int32)  # distinct, some negative
        want = data.copy()
        np.put_along_axis(want, idx.astype(np.int64) % 4, upd, 1)
        bitexact_everywhere(xml, {"x": data, "i": idx, "u": upd}, want)


def test_scatter_elements_f16_none_keeps_signalling_nans(tmp_path):
    x, u = ov_parameter([4], np.float16, "x"), ov_parameter([2], np.float16, "u")
    xml = ov_save(tmp_path / "m.xml", ops.scatter_elements_update(x, ops.constant(np.array([2, 0])), u, ops.constant(0)), [x, u])
    data, upd = np.array([0x7D01, 0xFC01, 1, 2], np.uint16), np.array([0x7C05, 0xFE00], np.uint16)
    got = run_onnx(xml, {"x": data.view(np.float16), "u": upd.view(np.float16)})[0]
    assert_bitexact(got.view(np.uint16), np.array([0xFE00, 0xFC01, 0x7C05, 2], np.uint16))


def test_scatter_elements_duplicates_last_wins(tmp_path):
    """The spec leaves the order undefined; OpenVINO and onnxruntime both let the last update win."""
    x = ov_parameter([2, 3], np.float32, "x")
    idx = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [0, 0, 0]], np.int64)
    upd = np.arange(12, dtype=np.float32).reshape(4, 3)
    xml = ov_save(tmp_path / "m.xml", ops.scatter_elements_update(x, ops.constant(idx), ops.constant(upd), ops.constant(0)), [x])
    bitexact_everywhere(xml, {"x": np.zeros((2, 3), np.float32)}, np.array([[9, 10, 11], [6, 7, 8]], np.float32))


@pytest.mark.parametrize("init", [True, False])
def test_scatter_elements_sum_spec_examples(tmp_path, init):
    x = ov_parameter([4], np.float32, "x")
    idx = [1, 0, 0, -2, -1, 2] if init else [1, 0, 0, 2, 3, 2]
    node = ops.scatter_elements_update(x, ops.constant(np.array(idx)), ops.constant(np.array([10, 20, 30, 40, 70, 60], np.float32)),
                                       ops.constant(np.array([0])), "sum", init)
    xml = ov_save(tmp_path / "m.xml", node, [x])
    want = np.array([52, 13, 104, 76] if init else [50, 10, 100, 70], np.float32)
    bitexact_everywhere(xml, {"x": np.array([2, 3, 4, 6], np.float32)}, want)


@pytest.mark.parametrize("reduction", ["sum", "prod", "min", "max"])
@pytest.mark.parametrize("init", [True, False])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.float32])
def test_scatter_elements_reductions_exact(tmp_path, reduction, init, dtype):
    x, u = ov_parameter([3, 4], dtype, "x"), ov_parameter([3, 5], dtype, "u")
    idx = np.array([[0, 0, 3, -1, 1], [2, 2, 2, 0, 1], [1, 1, 0, 0, 0]], np.int64)
    node = ops.scatter_elements_update(x, ops.constant(idx), u, ops.constant(1), reduction, init)
    xml = ov_save(tmp_path / "m.xml", node, [x, u])
    data, upd = RNG.integers(1, 5, (3, 4)).astype(dtype), RNG.integers(1, 5, (3, 5)).astype(dtype)
    bitexact_everywhere(xml, {"x": data, "u": upd}, opset=18)


def test_scatter_elements_f16_sum_runs_in_f32(tmp_path):
    x, u = ov_parameter([5], np.float16, "x"), ov_parameter([4], np.float16, "u")
    node = ops.scatter_elements_update(x, ops.constant(np.array([0, 0, 4, 4])), u, ops.constant(0), "sum")
    xml = ov_save(tmp_path / "m.xml", node, [x, u])
    data, upd = random_data(RNG, 5, np.float16), random_data(RNG, 4, np.float16)
    got = run_onnx(xml, {"x": data, "u": upd})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, run_openvino(xml, {"x": data, "u": upd})[0], rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got, _oracle(xml, {"x": data, "u": upd}), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("init", [True, False])
def test_scatter_elements_mean_float(tmp_path, init):
    x, u = ov_parameter([3, 4], np.float32, "x"), ov_parameter([2, 4], np.float32, "u")
    node = ops.scatter_elements_update(x, ops.constant(np.array([[0, 0, 2, 1], [0, 2, 2, 1]])), u, ops.constant(0), "mean", init)
    xml = ov_save(tmp_path / "m.xml", node, [x, u])
    feeds = {"x": random_data(RNG, (3, 4), np.float32), "u": random_data(RNG, (2, 4), np.float32)}
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, _oracle(xml, feeds), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("init", [True, False])
def test_scatter_elements_mean_integer_rounds_down(tmp_path, init):
    """Spec: integer mean rounds toward negative infinity. OpenVINO 2026.4's CPU plugin truncates
    toward zero instead (measured: mean(-7, 0, 0) = -2); we follow the spec."""
    x = ov_parameter([4], np.int32, "x")
    node = ops.scatter_elements_update(x, ops.constant(np.array([0, 0, 1, 2])), ops.constant(np.array([0, 0, 2, -9], np.int32)),
                                       ops.constant(0), "mean", init)
    xml = ov_save(tmp_path / "m.xml", node, [x])
    data = np.array([-7, 3, 4, 6], np.int32)
    want = np.array([-3, 2, -3, 6] if init else [0, 2, -9, 6], np.int32)
    bitexact_everywhere(xml, {"x": data}, want, openvino=False)
    if init:
        assert run_openvino(xml, {"x": data})[0][0] == -2  # the measured deviation


def test_scatter_elements_reduction_opset_requirements(tmp_path):
    x = ov_parameter([4], np.float32, "x")
    node = ops.scatter_elements_update(x, ops.constant(np.array([0])), ops.constant(np.array([1], np.float32)), ops.constant(0), "max")
    xml = ov_save(tmp_path / "m.xml", node, [x])
    with pytest.raises(UnsupportedLayer, match="opset >= 18"):
        convert(xml, opset=17)
    node = ops.scatter_elements_update(x, ops.constant(np.array([0])), ops.constant(np.array([1], np.float32)), ops.constant(0), "sum")
    xml = ov_save(tmp_path / "s.xml", node, [x])
    with pytest.raises(UnsupportedLayer, match="opset >= 16"):
        convert(xml, opset=15)


def test_scatter_elements_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([3, 4], "f32", "x")
    out = w.layer("ScatterElementsUpdate", "opset3", [x, w.const(np.zeros((2, 2), np.int64)),
                                                      w.const(np.zeros((2, 3), np.float32)), w.const(np.int64(5))],
                  outputs=[("f32", (3, 4))])[0]
    w.result(out)
    xml = w.save(tmp_path / "bad.xml")
    with pytest.raises(InvalidLayer):
        convert(xml)
    with pytest.raises(InvalidLayer):
        evaluate(ir2onnx.load_ir(xml), {"x": np.zeros((3, 4), np.float32)})


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_update_kv_cache(tmp_path, dtype):
    """[B, H, S, D] cache, new tokens written at run-time positions along S (axis 2)."""
    x, u = ov_parameter([None, 2, 5, 3], dtype, "x"), ov_parameter([None, 2, 2, 3], dtype, "u")
    i = ov_parameter([2], np.int64, "i")
    xml = ov_save(tmp_path / "m.xml", o3.scatter_update(x, i, u, ops.constant(np.int64(-2))), [x, i, u])
    for b in (1, 3):
        data, upd = random_data(RNG, (b, 2, 5, 3), dtype), random_data(RNG, (b, 2, 2, 3), dtype)
        idx = np.array([4, 1], np.int64)
        want = data.copy()
        want[:, :, idx] = upd
        bitexact_everywhere(xml, {"x": data, "i": idx, "u": upd}, want)


@pytest.mark.parametrize("idx", [np.int32(2), np.array([[3, 0], [1, 2]], np.int32)], ids=["0d", "2d"])
def test_scatter_update_index_ranks(tmp_path, idx):
    """Scalar indices are valid per spec, but OpenVINO's CPU plugin refuses them ("do not support
    scalar input"): that case is checked against the oracle and numpy only."""
    x = ov_parameter([4, 3], np.float32, "x")
    ushape = idx.shape + (3,)
    u = ov_parameter(list(ushape), np.float32, "u")
    xml = ov_save(tmp_path / "m.xml", o3.scatter_update(x, ops.constant(idx), u, ops.constant(np.int64(0))), [x, u])
    data, upd = random_data(RNG, (4, 3), np.float32), random_data(RNG, ushape, np.float32)
    want = data.copy()
    for pos in np.ndindex(idx.shape):
        want[idx[pos]] = upd[pos]
    bitexact_everywhere(xml, {"x": data, "u": upd}, want, openvino=idx.ndim > 0)


def test_scatter_update_negative_index_refused(tmp_path):
    """ScatterUpdate-3's bounds are [0, dim - 1]; OpenVINO's CPU plugin raises on -1 as well."""
    x = ov_parameter([4, 2], np.float32, "x")
    node = o3.scatter_update(x, ops.constant(np.array([-1, 0])), ops.constant(np.zeros((2, 2), np.float32)), ops.constant(0))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    with pytest.raises(InvalidLayer, match="negative"):
        convert(xml)
    with pytest.raises(InvalidLayer, match="negative"):
        evaluate(ir2onnx.load_ir(xml), {"x": np.zeros((4, 2), np.float32)})
