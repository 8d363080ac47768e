"""MaxPool-1/-8/-14 and AvgPool-1/-14 on OpenVINO-written IR: a table over rank, kernel,
strides, dilations, pads, auto_pad and rounding_type (floor, ceil, ceil_torch, with windows that
run past the input), compared with the oracle and with the OpenVINO runtime.

MaxPool selects values, so it must match bit for bit. AvgPool (f32): rtol 1e-6, atol 1e-6 (at most
27 terms of magnitude <= 4 are summed in float32; the oracle sums in float64).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset8 as ops8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino

TOL = dict(rtol=1e-6, atol=1e-6)


def _save(tmp_path, x_shape, make, dtype=np.float32):
    x = ops.parameter(x_shape, dtype, name="x")
    x.output(0).get_tensor().set_names({"x"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(make(x).output(0))], [x], "m"), str(path), compress_to_fp16=False)
    return path


def _run_all(xml, x):
    got = run_onnx(xml, {"x": x})[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    return got, want, run_openvino(xml, [x])[0]


# kernel, strides, dilations, pads_begin, pads_end, rounding, auto_pad, x spatial
MAX_CASES = [
    ([3], [2], [1], [1], [1], "floor", "explicit", [9]),
    ([2, 2], [2, 2], [1, 1], [0, 0], [0, 0], "ceil", "explicit", [5, 7]),
    ([3, 2], [3, 2], [1, 1], [1, 0], [1, 1], "ceil", "explicit", [7, 6]),
    ([2, 2], [3, 3], [1, 1], [0, 0], [1, 1], "ceil", "explicit", [5, 5]),  # a window past the input
    ([2, 2], [3, 3], [1, 1], [0, 0], [1, 1], "ceil_torch", "explicit", [5, 5]),
    ([3, 3], [2, 2], [2, 1], [1, 1], [1, 1], "ceil_torch", "explicit", [8, 7]),
    ([3, 2], [2, 2], [1, 2], [0, 0], [0, 0], "floor", "same_upper", [7, 6]),
    ([2, 3], [2, 3], [1, 1], [0, 0], [0, 0], "ceil", "same_lower", [5, 8]),
    ([2, 2], [1, 2], [2, 1], [4, 4], [4, 4], "floor", "valid", [6, 5]),
    ([2, 2, 2], [2, 1, 2], [1, 1, 1], [1, 0, 0], [0, 1, 1], "ceil", "explicit", [3, 4, 5]),
]


def _versions(case):
    """The MaxPool versions that can express a case (dilations from -8, ceil_torch from -14)."""
    dilated, torch = any(v != 1 for v in case[2]), case[5] == "ceil_torch"
    return [v for v in ("opset1", "opset8", "opset14") if not (v == "opset1" and dilated or v != "opset14" and torch)]


@pytest.mark.parametrize("version,case", [(v, c) for c in MAX_CASES for v in _versions(c)],
                         ids=lambda c: c if isinstance(c, str) else f"{len(c[0])}d-{c[5]}-{c[6]}")
def test_max_pool(tmp_path, version, case):
    k, s, d, pb, pe, rounding, auto_pad, spatial = case
    if version == "opset1":
        make = lambda x: ops1.max_pool(x, s, pb, pe, k, rounding, auto_pad)
    elif version == "opset8":
        make = lambda x: ops8.max_pool(x, s, d, pb, pe, k, rounding, auto_pad)
    else:
        make = lambda x: ops.max_pool(x, s, d, pb, pe, k, rounding, auto_pad)
    shape = [2, 3, *spatial]
    xml = _save(tmp_path, shape, make)
    assert f'type="MaxPool" version="{version}"' in xml.read_text()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    got, want, ov_out = _run_all(xml, x)
    assert_bitexact(got, want, "onnxruntime vs oracle")
    assert_bitexact(got, ov_out, "onnxruntime vs OpenVINO")


def test_max_pool_window_without_input_gives_lowest(tmp_path):
    xml = _save(tmp_path, [1, 1, 5], lambda x: ops1.max_pool(x, [3], [0], [1], [2], "ceil"))
    got, want, ov_out = _run_all(xml, np.arange(5, dtype=np.float32).reshape(1, 1, 5))
    assert got[0, 0, -1] == np.finfo(np.float32).min
    assert_bitexact(got, want)
    assert_bitexact(got, ov_out)


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.uint8])
def test_max_pool_other_types(tmp_path, dtype):
    xml = _save(tmp_path, [1, 2, 5, 5], lambda x: ops.max_pool(x, [2, 2], [1, 1], [1, 1], [0, 0], [3, 3], "ceil"), dtype)
    x = np.random.default_rng(1).integers(-100 if dtype == np.int8 else 0, 100, (1, 2, 5, 5)).astype(dtype)
    got, want, ov_out = _run_all(xml, x)
    assert_bitexact(got, want)
    assert_bitexact(got, ov_out)


# kernel, strides, pads_begin, pads_end, rounding, auto_pad, x spatial
AVG_CASES = [
    ([3], [2], [1], [1], "floor", "explicit", [9]),
    ([3, 3], [2, 2], [0, 0], [0, 0], "ceil", "explicit", [6, 7]),  # no pads: clipped divisor
    ([3, 3], [2, 2], [1, 1], [1, 1], "ceil", "explicit", [6, 7]),  # pads: whole-kernel divisor
    ([3, 2], [3, 2], [1, 0], [1, 0], "ceil", "explicit", [7, 5]),
    ([3, 3], [2, 2], [1, 1], [1, 1], "ceil_torch", "explicit", [6, 6]),
    ([3, 2], [3, 2], [1, 0], [1, 1], "ceil", "explicit", [7, 6]),  # include-pad only: a window of pads
    ([2, 3], [2, 2], [0, 0], [0, 0], "floor", "same_upper", [5, 6]),
    ([3, 2], [2, 3], [0, 0], [0, 0], "floor", "same_lower", [5, 7]),
    ([2, 2], [2, 1], [1, 1], [1, 1], "ceil", "valid", [5, 4]),
    ([2, 2, 3], [2, 1, 2], [1, 0, 1], [0, 1, 1], "ceil", "explicit", [3, 4, 5]),
]


@pytest.mark.parametrize("exclude_pad,case", [(e, c) for c in AVG_CASES for e in (False, True)
                                              if not (e and c is AVG_CASES[5])],
                         ids=lambda c: str(c) if isinstance(c, bool) else f"{len(c[0])}d-{c[4]}-{c[5]}")
def test_avg_pool(tmp_path, exclude_pad, case):
    k, s, pb, pe, rounding, auto_pad, spatial = case
    shape = [2, 2, *spatial]
    if rounding == "ceil_torch":
        make = lambda x: ops.avg_pool(x, s, pb, pe, k, exclude_pad, rounding, auto_pad)
    else:
        make = lambda x: ops1.avg_pool(x, s, pb, pe, k, exclude_pad, rounding, auto_pad)
    xml = _save(tmp_path, shape, make)
    x = np.random.default_rng(2).uniform(-4, 4, shape).astype(np.float32)
    got, want, ov_out = _run_all(xml, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(got, ov_out, **TOL)


def test_avg_pool_include_pad_divides_by_the_kernel(tmp_path):
    """6 wide, kernel 3, stride 2, pads 1/1, ceil: the last window holds x[5], a pad and a
    position past the pads; OpenVINO divides by 3 (its reference: whole kernel when padded)."""
    xml = _save(tmp_path, [1, 1, 6], lambda x: ops1.avg_pool(x, [2], [1], [1], [3], False, "ceil"))
    x = (np.arange(1, 7, dtype=np.float32) * 10).reshape(1, 1, 6)
    got, want, ov_out = _run_all(xml, x)
    np.testing.assert_allclose(got.ravel(), [10, 30, 50, 20], **TOL)
    np.testing.assert_allclose(want, got, **TOL)
    np.testing.assert_allclose(ov_out, got, **TOL)


def test_avg_pool_empty_window_is_refused(tmp_path):
    """5 wide, kernel 2, stride 3, pads_end 1, ceil: the third window starts at 6 (past the input);
    OpenVINO's CPU plugin returns -0 or NaN there, so exclude-pad=true is refused; include-pad
    gives 0 (sum of pads / kernel), as OpenVINO does."""
    xml = _save(tmp_path, [1, 1, 5], lambda x: ops1.avg_pool(x, [3], [0], [1], [2], True, "ceil"))
    with pytest.raises(InvalidLayer, match="holds no input element"):
        convert(xml)
    xml = _save(tmp_path, [1, 1, 5], lambda x: ops1.avg_pool(x, [3], [0], [1], [2], False, "ceil"))
    got, want, ov_out = _run_all(xml, np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5))
    np.testing.assert_allclose(got.ravel(), [1.5, 4.5, 0], **TOL)
    np.testing.assert_allclose(want, got, **TOL)
    np.testing.assert_allclose(ov_out, got, **TOL)


def test_used_indices_output_converts(tmp_path):
    """A Result reading MaxPool-8's indices (IRWriter form); more in test_pooling_indices.py."""
    w = IRWriter()
    x = w.parameter([1, 1, 4, 4], "f32", "x")
    attrs = {"strides": "2,2", "dilations": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "kernel": "2,2",
             "rounding_type": "floor", "auto_pad": "explicit", "index_element_type": "i64", "axis": "0"}
    y, idx = w.layer("MaxPool", "opset8", [x], attrs, [("f32", (1, 1, 2, 2)), ("i64", (1, 1, 2, 2))])
    w.result(y)
    w.result(idx)
    xml = w.save(tmp_path / "idx.xml")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    for values, indices in (evaluate(ir2onnx.load_ir(xml), {"x": x}).values(), run_onnx(xml, {"x": x})):
        assert_bitexact(values, np.array([[[[5, 7], [13, 15]]]], np.float32))
        assert_bitexact(indices, np.array([[[[5, 7], [13, 15]]]], np.int64))


@pytest.mark.parametrize("make", [
    lambda x: ops8.max_pool(x, [2, 1], [1, 2], [1, 0], [0, 1], [3, 2]),
    lambda x: ops1.max_pool(x, [1, 1], [0, 0], [0, 0], [3, 2], "floor", "same_upper"),
    lambda x: ops1.avg_pool(x, [2, 2], [1, 1], [1, 0], [3, 2], True),
    lambda x: ops1.avg_pool(x, [2, 2], [1, 1], [1, 0], [3, 2], False),
    lambda x: ops1.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 3], False, "floor", "same_lower"),
], ids=["max-floor", "max-same-stride1", "avg-exclude", "avg-include", "avg-same-stride1"])
def test_dynamic_spatial_dims(tmp_path, make):
    xml = _save(tmp_path, ov.PartialShape([1, 2, -1, -1]), make)
    for shape in ((1, 2, 7, 6), (1, 2, 4, 9)):
        x = np.random.default_rng(3).uniform(-4, 4, shape).astype(np.float32)
        got, want, ov_out = _run_all(xml, x)
        assert got.shape == want.shape == ov_out.shape
        np.testing.assert_allclose(got, want, **TOL)
        np.testing.assert_allclose(got, ov_out, **TOL)


# kernel, strides, pads_begin, pads_end, rounding, auto_pad: output sizes that depend on the
# run-time size (computed in the graph); sizes chosen so that ceil_torch drops a window at some
DYNAMIC_CASES = [
    ([3, 3], [2, 2], [0, 0], [0, 0], "ceil_torch", "explicit"),  # squeezenet / googlenet
    ([3, 3], [1, 1], [1, 1], [1, 1], "ceil_torch", "explicit"),  # googlenet's inception pool branch
    ([2, 3], [3, 2], [1, 1], [1, 0], "ceil_torch", "explicit"),  # a window starting in the padding
    ([3, 2], [2, 3], [1, 0], [1, 1], "ceil", "explicit"),  # (AvgPool: refused, a window may be empty)
    ([3, 3], [2, 2], [1, 1], [1, 1], "ceil", "explicit"),  # googlenet's AvgPool
    ([2, 2], [3, 3], [0, 0], [1, 1], "ceil", "explicit"),  # windows past the input (MaxPool: lowest)
    ([3, 2], [2, 3], [0, 0], [0, 0], "floor", "same_upper"),
    ([2, 3], [3, 2], [0, 0], [0, 0], "ceil", "same_lower"),
    ([2, 2], [2, 2], [0, 0], [0, 0], "floor", "same_lower"),  # no pads at even sizes (8, 8)
]
DYNAMIC_SIZES = ((1, 2, 7, 6), (2, 2, 4, 9), (1, 2, 8, 8), (1, 2, 5, 3))


def _check_sizes(xml, exact: bool, sizes=DYNAMIC_SIZES):
    for shape in sizes:
        x = np.random.default_rng(sum(shape)).uniform(-4, 4, shape).astype(np.float32)
        got, want, ov_out = _run_all(xml, x)
        assert got.shape == want.shape == ov_out.shape, shape
        if exact:
            assert_bitexact(got, want, f"onnxruntime vs oracle at {shape}")
            assert_bitexact(got, ov_out, f"onnxruntime vs OpenVINO at {shape}")
        else:
            np.testing.assert_allclose(got, want, **TOL)
            np.testing.assert_allclose(got, ov_out, **TOL)


@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=lambda c: f"{c[4]}-{c[5]}-s{c[1]}")
def test_max_pool_dynamic_output_size_computed_in_graph(tmp_path, case):
    k, s, pb, pe, rounding, auto_pad = case
    xml = _save(tmp_path, ov.PartialShape([-1, 2, -1, -1]),
                lambda x: ops.max_pool(x, s, [1, 1], pb, pe, k, rounding, auto_pad))
    assert "Pad" in [n.op_type for n in convert(xml).graph.node]
    _check_sizes(xml, exact=True)


@pytest.mark.parametrize("exclude", [True, False], ids=["exclude", "include"])
@pytest.mark.parametrize("case", [c for c in DYNAMIC_CASES if c[4] != "ceil" or c[1] == [2, 2]],
                         ids=lambda c: f"{c[4]}-{c[5]}-s{c[1]}")
def test_avg_pool_dynamic_output_size_computed_in_graph(tmp_path, case, exclude):
    k, s, pb, pe, rounding, auto_pad = case
    xml = _save(tmp_path, ov.PartialShape([-1, 2, -1, -1]),
                lambda x: ops.avg_pool(x, s, pb, pe, k, exclude, rounding, auto_pad))
    _check_sizes(xml, exact=False)


def test_avg_pool_dynamic_one_static_axis(tmp_path):
    xml = _save(tmp_path, ov.PartialShape([1, 2, 7, -1]),
                lambda x: ops.avg_pool(x, [2, 2], [1, 1], [1, 0], [3, 3], True, "ceil_torch"))
    _check_sizes(xml, exact=False, sizes=((1, 2, 7, 6), (1, 2, 7, 9)))


def test_avg_pool_dynamic_window_without_input_is_refused(tmp_path):
    make = lambda x: ops1.avg_pool(x, [3, 3], [0, 0], [1, 1], [2, 2], True, "ceil")  # noqa: E731
    xml = _save(tmp_path, ov.PartialShape([1, 2, -1, -1]), make)
    with pytest.raises(InvalidLayer, match="holds no input element on a dynamic dim"):
        convert(xml)


def test_avg_pool_f64_is_refused(tmp_path):
    """onnxruntime's CPU provider has no f64 AveragePool kernel: refused, not a file it cannot run."""
    from ir2onnx.errors import UnsupportedLayer
    from ir2onnx.testing import ov_parameter, ov_save

    x = ov_parameter([1, 2, 4, 4], np.float64, "x")
    xml = ov_save(tmp_path / "a.xml", ops.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 2], True), [x])
    with pytest.raises(UnsupportedLayer, match="f64"):
        convert(xml)
