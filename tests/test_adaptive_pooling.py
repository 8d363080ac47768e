"""AdaptiveAvgPool-8 and AdaptiveMaxPool-8 on OpenVINO-written IR: torch's modules through
openvino.convert_model (samples/torch_adaptive_pooling, every dim dynamic) compared with torch's
own outputs, and a table of 1-D/2-D/3-D bins (overlapping, unequal, dynamic spatial dims, a
run-time output_size) compared with the oracle and OpenVINO.

Max values and indices must match bit for bit. Average (f32): rtol 1e-6, atol 1e-6 (a bin holds at
most 4 * 3 * 3 terms of magnitude < 4; onnxruntime sums per axis, the oracle in float64).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset8 as o8
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-6, atol=1e-6)
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "torch_adaptive_pooling"


def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


@pytest.mark.parametrize("suffix", ["", "_b"])
def test_torch_round_trip(suffix):
    """torch's AdaptiveAvgPool2d((3, 4)), AdaptiveMaxPool2d((2, 3), return_indices) and
    AdaptiveAvgPool2d(1), as OpenVINO converts them (dynamic N, C, H, W), against torch."""
    xml = SAMPLE / "adaptive.xml"
    text = xml.read_text()
    assert 'type="AdaptiveAvgPool"' in text and 'type="AdaptiveMaxPool"' in text
    feeds = {"x": np.load(SAMPLE / f"x{suffix}.npy")}
    avg, mx, idx, glob = run_onnx(xml, feeds)
    want = {n: np.load(SAMPLE / f"{n}{suffix}.npy") for n in ("avg", "max", "indices", "global")}
    np.testing.assert_allclose(avg, want["avg"], **TOL)
    np.testing.assert_allclose(glob, want["global"], **TOL)
    assert_bitexact(mx, want["max"], "max vs torch")
    assert_bitexact(idx, want["indices"], "indices vs torch")
    for other in (run_openvino(xml, feeds), _oracle(xml, feeds)):
        np.testing.assert_allclose(avg, other[0], **TOL)
        assert_bitexact(mx, other[1])
        assert_bitexact(idx, other[2])


# declared data shape (None: dynamic), run shape, output size
CASES = [
    ([1, 2, 7], (1, 2, 7), [3]),
    ([None, 3, None], (2, 3, 10), [4]),
    ([2, 2, 5, 7], (2, 2, 5, 7), [3, 2]),
    ([None, None, None, None], (1, 3, 6, 4), [4, 3]),
    ([1, 2, None, 6, None], (1, 2, 3, 6, 5), [2, 4, 3]),
    ([1, 1, 4, 4], (1, 1, 4, 4), [4, 4]),  # identity bins
    ([1, 1, 3, 8], (1, 1, 3, 8), [5, 3]),  # more bins than elements along H: repeated rows
]


def _ids(case):
    return "x".join(map(str, case[1])) + "-to-" + "x".join(map(str, case[2]))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_avg_pool(tmp_path, case):
    declared, shape, out = case
    x = ov_parameter(declared)
    xml = ov_save(tmp_path / "a.xml", o8.adaptive_avg_pool(x, o8.constant(np.array(out, np.int32))), [x])
    feeds = {"x": np.random.default_rng(0).uniform(-4, 4, shape).astype(np.float32)}
    got = run_onnx(xml, feeds)[0]
    assert got.shape == (*shape[:2], *out)
    np.testing.assert_allclose(got, _oracle(xml, feeds)[0], **TOL)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_max_pool_values_and_indices(tmp_path, case):
    """Integer-valued data with many ties: the first largest element of a box in row-major order."""
    declared, shape, out = case
    x = ov_parameter(declared)
    node = o8.adaptive_max_pool(x, o8.constant(np.array(out, np.int64)), "i32")
    xml = ov_save(tmp_path / "m.xml", [node.output(0), node.output(1)], [x])
    feeds = {"x": np.random.default_rng(1).integers(-3, 3, shape).astype(np.float32)}
    got = run_onnx(xml, feeds)
    assert got[1].dtype == np.int32 and got[0].shape == (*shape[:2], *out)
    for other in (_oracle(xml, feeds), run_openvino(xml, feeds)):
        assert_bitexact(got[0], other[0], "values")
        assert_bitexact(got[1], other[1], "indices")


def test_run_time_output_size(tmp_path):
    """output_size fed at run time: one ONNX file pools to any size."""
    x, size = ov_parameter([None, 2, None, None]), ov_parameter([2], np.int32, "size")
    node = o8.adaptive_max_pool(x, size, "i32")
    avg = o8.adaptive_avg_pool(x, size)
    xml = ov_save(tmp_path / "r.xml", [node.output(0), node.output(1), avg.output(0)], [x, size])
    assert 'name="size"' in xml.read_text()
    for shape, out in (((1, 2, 7, 5), [3, 2]), ((2, 2, 4, 9), [4, 5]), ((1, 2, 6, 6), [1, 1])):
        feeds = {"x": np.random.default_rng(2).standard_normal(shape).astype(np.float32),
                 "size": np.array(out, np.int32)}
        got = run_onnx(xml, feeds)
        assert got[0].shape == (*shape[:2], *out)
        for other in (_oracle(xml, feeds), run_openvino(xml, feeds)):
            assert_bitexact(got[0], other[0])
            assert_bitexact(got[1], other[1])
            np.testing.assert_allclose(got[2], other[2], **TOL)


def test_i64_indices_and_f16(tmp_path):
    """index_element_type i64 (OpenVINO's CPU plugin refuses to load it: oracle only) and f16 data
    (max exact; average within f16's rounding)."""
    x = ov_parameter([1, 3, None, None], np.float16)
    node = o8.adaptive_max_pool(x, o8.constant(np.array([3, 2], np.int64)), "i64")
    avg = o8.adaptive_avg_pool(x, o8.constant(np.array([2, 3], np.int64)))
    xml = ov_save(tmp_path / "h.xml", [node.output(0), node.output(1), avg.output(0)], [x])
    feeds = {"x": np.random.default_rng(3).standard_normal((1, 3, 5, 7)).astype(np.float16)}
    got, want = run_onnx(xml, feeds), _oracle(xml, feeds)
    assert got[0].dtype == np.float16 and got[1].dtype == np.int64
    assert_bitexact(got[0], want[0])
    assert_bitexact(got[1], want[1])
    np.testing.assert_allclose(got[2].astype(np.float32), want[2].astype(np.float32), rtol=2e-3, atol=2e-3)


def test_static_shapes_use_constant_tables(tmp_path):
    """Static dims and sizes: the bin tables are constants (no Range); all sizes 1: GlobalAveragePool."""
    x = ov_parameter([1, 2, 7, 9])
    y = o8.adaptive_avg_pool(x, o8.constant(np.array([3, 4], np.int32)))
    ops = {n.op_type for n in convert(ov_save(tmp_path / "s.xml", y, [x]), verify=False).graph.node}
    assert "Range" not in ops and "Gather" in ops
    y = o8.adaptive_avg_pool(x, o8.constant(np.array([1, 1], np.int32)))
    xml = ov_save(tmp_path / "g.xml", y, [x])
    ops = [n.op_type for n in convert(xml, verify=False).graph.node]
    assert "GlobalAveragePool" in ops and "Gather" not in ops
    feeds = {"x": np.random.default_rng(4).standard_normal((1, 2, 7, 9)).astype(np.float32)}
    np.testing.assert_allclose(run_onnx(xml, feeds)[0], run_openvino(xml, feeds)[0], **TOL)


def test_refusals(tmp_path):
    from ir2onnx.testing import IRWriter

    w = IRWriter()
    x = w.parameter([1, 2, 6], "i32", "x")
    size = w.const(np.array([3], np.int64))
    w.result(w.layer("AdaptiveAvgPool", "opset8", [x, size], {}, [("i32", (1, 2, 3))])[0])
    with pytest.raises(UnsupportedLayer, match="floats only"):
        convert(w.save(tmp_path / "i.xml"))
    w = IRWriter()
    x = w.parameter([1, 2, 6, 6], "f32", "x")
    size = w.const(np.array([3, 0], np.int64))
    w.result(w.layer("AdaptiveAvgPool", "opset8", [x, size], {}, [("f32", (1, 2, 3, 0))])[0])
    with pytest.raises(InvalidLayer, match="positive"):
        convert(w.save(tmp_path / "z.xml"))
