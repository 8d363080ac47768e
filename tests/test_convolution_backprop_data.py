"""ConvolutionBackpropData-1 / GroupConvolutionBackpropData-1 on OpenVINO-written IR: the spec's
worked examples, a table over rank/strides/dilations/pads/output_padding/auto_pad/output_shape/
groups, both formulations, compared with the float64 oracle and with the OpenVINO runtime.

Tolerance: onnxruntime and OpenVINO accumulate in float32, the oracle in float64. Recursive
summation of n terms errs by at most ~n*eps*sum|terms|, so every element must lie within
(n + 2) * 2^-23 * (|x| * |w| oracle) of the oracle, n = C_IN/GROUPS * prod(K) (a bound, not a guess).

With output_shape, ir2onnx and the oracle crop what OpenVINO's runtime crops and its ONNX frontend
relies on: the pads_begin attribute for explicit, nothing for valid, the spec's split of the total
for same_upper/same_lower (test_output_shape_crop; the ONNX round trips in
test_convolution_backprop_roundtrip.py check it against the original ONNX model).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx.ops.convolution_backprop_data as cbd
from ir2onnx.api import convert
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.registry import oracle_for
from ir2onnx.testing import run_onnx, run_openvino
from util import runtime_ops

ROOT = Path(__file__).resolve().parents[1]
EPS32 = 2.0 ** -23


def _samples():
    spec = importlib.util.spec_from_file_location("make_cbd", ROOT / "samples" / "make_convolution_backprop_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def oracle_with_bound(xml, x, w, out_shape=None):
    """The oracle's output and the per-element error bound for float32 accumulation."""
    graph = load_ir(xml)
    layer = next(l for l in graph.order if l.type.endswith("ConvolutionBackpropData"))
    if out_shape is None and len(layer.sources) == 3:
        out_shape = graph.producer(layer, 2)[0].const.array()  # a Const output_shape
    fn = oracle_for(layer.type, layer.version)
    extra = [] if out_shape is None else [np.asarray(out_shape, np.int64)]
    ref = fn(layer, [x, w] + extra)[0]
    mag = fn(layer, [np.abs(x), np.abs(w)] + extra)[0]
    grouped = layer.type.startswith("Group")
    terms = w.shape[1 + grouped] * math.prod(w.shape[2 + grouped:])
    return ref, (terms + 2) * EPS32 * mag.astype(np.float64) + 1e-30


def assert_close(got, ref, bound, what=""):
    assert got.shape == ref.shape, f"{what} shape {got.shape} != {ref.shape}"
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert np.all(err <= bound), f"{what} error {err[worst]} > bound {bound[worst]} at {worst}"


def save(node, params, path, fp16=False):
    ov.save_model(ov.Model([node], params), str(path), compress_to_fp16=fp16)
    return path


def build(tmp_path, data_shape, w, strides, pads_begin, pads_end, dilations, auto_pad="explicit",
          output_padding=None, output_shape=None, grouped=False, param_shape=None, fp16=False):
    p = ops.parameter(param_shape or data_shape, np.float32, name="data")
    fn = ops.group_convolution_backprop_data if grouped else ops.convolution_backprop_data
    osh = None if output_shape is None else ops.constant(np.array(output_shape, np.int64))
    rank = len(strides)
    node = fn(p, ops.constant(w), strides, osh, pads_begin, pads_end, dilations, auto_pad,
              output_padding or [0] * rank)
    return save(node, [p], tmp_path / "model.xml", fp16)


def check_all(xml, x, w, out_shape=None, feeds=None):
    """onnxruntime and OpenVINO, each within the bound of the oracle."""
    feeds = feeds or [x]
    got = run_onnx(xml, feeds)[0]
    ref, bound = oracle_with_bound(xml, x, w, out_shape)
    assert_close(got, ref, bound, "onnxruntime vs oracle")
    assert_close(run_openvino(xml, feeds)[0], ref, bound, "OpenVINO vs oracle")
    return got


@pytest.fixture(params=[None, "convtranspose", "phase"])
def formulation(request, monkeypatch):
    monkeypatch.setattr(cbd, "FORMULATION", request.param)
    return request.param


def conv_nodes(model):
    return [n for n in model.graph.node if n.op_type in ("ConvTranspose", "Conv")]


def assert_clean_convtranspose(model):
    """No auto_pad, no output_shape, pads non-negative and symmetric on every ConvTranspose."""
    for node in model.graph.node:
        if node.op_type != "ConvTranspose":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert "auto_pad" not in attrs and "output_shape" not in attrs
        pads = list(attrs.get("pads", []))
        assert all(p >= 0 for p in pads) and pads[: len(pads) // 2] == pads[len(pads) // 2:], pads


# -- the spec's worked examples ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["example1", "example2", "example3"])
def test_worked_examples(name):
    samples = _samples()
    xml = ROOT / "samples" / "convolution_backprop_data" / f"{name}.xml"
    x = samples.example_input(name)
    w = samples.example_filters(name).astype(np.float16).astype(np.float32)  # stored compressed
    got = check_all(xml, x, w)
    assert got.shape == samples.EXAMPLES[name]["expected"]
    ref = run_openvino(xml, [x])[0]
    assert np.abs(got - ref).max() <= 1e-4 * np.abs(ref).max()
    assert_clean_convtranspose(convert(xml))


def test_sample_script_regenerates(tmp_path):
    samples = _samples()
    written = samples.main(tmp_path)
    assert [p.name for p in written] == ["example1.xml", "example2.xml", "example3.xml"]
    assert all(p.with_suffix(".bin").stat().st_size < 8192 for p in written)
    x = samples.example_input("example2")
    assert run_onnx(written[1], [x])[0].shape == (1, 10, 8, 8)


def test_spec_small_examples(tmp_path):
    """The spec's measured cases: output_padding zeros, and output_shape beyond the natural size."""
    x = np.array([[[1.0, 2.0]]], np.float32)
    w = np.ones((1, 1, 3), np.float32)
    xml = build(tmp_path, x.shape, w, [2], [0], [0], [1], output_padding=[1])
    np.testing.assert_array_equal(run_onnx(xml, [x])[0].reshape(-1), [1, 1, 3, 2, 2, 0])
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    w = np.array([1, 10, 100], np.float32).reshape(1, 1, 3)
    for auto_pad in ("explicit", "valid", "same_upper", "same_lower"):
        xml = build(tmp_path, x.shape, w, [1], [0], [0], [1], auto_pad, output_shape=[7])
        natural = np.convolve(x.reshape(-1), w.reshape(-1))
        np.testing.assert_array_equal(run_onnx(xml, [x])[0].reshape(-1), np.append(natural, 0))


@pytest.mark.parametrize("auto_pad,begin", [("explicit", 2), ("valid", 0), ("same_lower", 1),
                                            ("same_upper", 1)])
def test_output_shape_crop(tmp_path, auto_pad, begin):
    """x=[1,2,3], w=[1,10,100], stride 1, pads_begin 2: natural output F=[1,12,123,230,300];
    output_shape 3 -> total 2. OpenVINO's runtime crops the pads_begin attribute (2) for explicit,
    nothing for valid, total//2 (same_lower) or total - total//2 (same_upper) = 1; its ONNX
    frontend relies on the explicit rule. The spec text's total//2 for every mode would give
    [12,123,230] for explicit and valid: the oracle and the lowering must not."""
    x = np.array([[[1.0, 2.0, 3.0]]], np.float32)
    w = np.array([[[1.0, 10.0, 100.0]]], np.float32)
    natural = np.convolve(x.reshape(-1), w.reshape(-1))
    np.testing.assert_array_equal(natural, [1, 12, 123, 230, 300])
    xml = build(tmp_path, x.shape, w, [1], [2], [0], [1], auto_pad, output_shape=[3])
    layer = next(l for l in load_ir(xml).order if l.type == "ConvolutionBackpropData")
    ref = oracle_for(layer.type, layer.version)(layer, [x, w, np.array([3], np.int64)])[0]
    np.testing.assert_array_equal(ref.reshape(-1), natural[begin:begin + 3])
    np.testing.assert_array_equal(run_onnx(xml, [x])[0], ref)
    np.testing.assert_array_equal(run_openvino(xml, [x])[0], ref)


# -- the table -----------------------------------------------------------------------------------
# (data spatial, kernel, strides, dilations, pads_begin, pads_end, output_padding)
GEOMETRIES = [
    ((7,), (3,), (2,), (1,), (1,), (1,), (0,)),
    ((5,), (4,), (3,), (2,), (0,), (2,), (2,)),
    ((6, 5), (4, 4), (2, 2), (1, 1), (1, 1), (1, 1), (0, 0)),
    ((5, 6), (3, 2), (2, 3), (1, 2), (2, 0), (0, 1), (1, 2)),
    ((4, 4), (3, 3), (1, 1), (2, 1), (0, 1), (2, 0), (0, 0)),
    ((3, 4, 3), (2, 3, 2), (2, 1, 3), (1, 1, 2), (1, 0, 1), (0, 2, 0), (1, 0, 2)),
    ((3, 3, 4), (4, 2, 2), (2, 2, 2), (1, 1, 1), (1, 0, 0), (1, 0, 0), (0, 1, 1)),
]
OUTPUT_SHAPES = [None, "natural-2", "natural-3", "natural+3"]  # even, odd, negative total


def _output_shape(kind, natural):
    if kind is None:
        return None
    delta = int(kind[7:])
    return [max(1, n + delta) for n in natural]


@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: f"{len(g[0])}d-s{''.join(map(str, g[2]))}")
@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "same_lower", "valid"])
@pytest.mark.parametrize("out_kind", OUTPUT_SHAPES)
def test_table(tmp_path, formulation, geo, auto_pad, out_kind):
    spatial, kernel, strides, dilations, pb, pe, op = geo
    rng = np.random.default_rng(len(spatial) * 7 + strides[0])
    natural = [s * (x - 1) + (k - 1) * d + 1 for x, k, s, d in zip(spatial, kernel, strides, dilations)]
    out_shape = _output_shape(out_kind, natural)
    x = rng.standard_normal((2, 3) + spatial).astype(np.float32)
    w = rng.standard_normal((3, 2) + kernel).astype(np.float32)
    xml = build(tmp_path, x.shape, w, list(strides), list(pb), list(pe), list(dilations), auto_pad,
                list(op), out_shape)
    check_all(xml, x, w, out_shape)
    assert_clean_convtranspose(convert(xml))


@pytest.mark.parametrize("groups,cin_g,cout_g", [(2, 2, 3), (4, 1, 1), (3, 1, 2)])
@pytest.mark.parametrize("geo", [GEOMETRIES[0], GEOMETRIES[2], GEOMETRIES[3], GEOMETRIES[6]],
                         ids=["1d", "2d-k4s2", "2d-mixed", "3d"])
def test_groups(tmp_path, formulation, groups, cin_g, cout_g, geo):
    spatial, kernel, strides, dilations, pb, pe, op = geo
    rng = np.random.default_rng(groups * 10 + len(spatial))
    x = rng.standard_normal((1, groups * cin_g) + spatial).astype(np.float32)
    w = rng.standard_normal((groups, cin_g, cout_g) + kernel).astype(np.float32)
    xml = build(tmp_path, x.shape, w, list(strides), list(pb), list(pe), list(dilations), "explicit",
                list(op), grouped=True)
    check_all(xml, x, w)
    model = convert(xml)
    assert_clean_convtranspose(model)
    assert all(next(a.i for a in n.attribute if a.name == "group") == groups for n in conv_nodes(model))


@pytest.mark.parametrize("strides,kernel", [((3, 2, 2), (3, 4, 2)), ((1, 2, 2), (2, 4, 4)), ((2, 1, 1), (4, 3, 2))])
def test_3d_interleave(tmp_path, strides, kernel, monkeypatch):
    """The 3-D stride-phase interleave (depth to batch, DepthToSpace, depth phases back), dynamic batch."""
    monkeypatch.setattr(cbd, "FORMULATION", "phase")
    rng = np.random.default_rng(8)
    w = rng.standard_normal((3, 2) + kernel).astype(np.float32)
    xml = build(tmp_path, None, w, list(strides), [1, 0, 1], [0, 1, 1], [1, 1, 1], output_padding=[1, 1, 0],
                param_shape=[-1, 3, 3, 4, 5])
    assert "Conv" in [n.op_type for n in convert(xml).graph.node]
    check_all(xml, rng.standard_normal((2, 3, 3, 4, 5)).astype(np.float32), w)


def test_dynamic_batch_and_spatial(tmp_path, formulation):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)
    xml = build(tmp_path, None, w, [2, 2], [1, 0], [2, 1], [1, 1], output_padding=[1, 0],
                param_shape=[-1, 3, -1, -1])
    for shape in [(1, 3, 5, 6), (3, 3, 2, 7)]:
        x = rng.standard_normal(shape).astype(np.float32)
        check_all(xml, x, w)


def test_choice_per_shape(tmp_path):
    """The automatic choice (run-time ops, folded index tables left out): stride phases where the
    kernel splits into whole phases (kernel 4 stride 2 in 1-D/2-D/3-D, stride 1 with or without
    dilation) and for 3-D kernels with residues of unequal taps (one Conv per residue, kernel 3
    stride 2), interleaved by one GatherElements for a static batch, by the 3-D DepthToSpace chain
    for a dynamic one; ConvTranspose for 2-D kernel 3 stride 2 (worked example 1), for kernel ==
    stride (no overlap), for dilation on a strided axis and where output_shape asks for zeros past F."""
    rng = np.random.default_rng(0)

    def ops_of(data, kernel, strides, pads, dilations=None, output_shape=None, param_shape=None):
        w = rng.standard_normal((data[1], 2) + kernel).astype(np.float32)
        xml = build(tmp_path, data, w, list(strides), list(pads), list(pads), dilations or [1] * len(strides),
                    output_shape=output_shape, param_shape=param_shape)
        return runtime_ops(convert(xml))

    gathered = ["Conv", "Reshape", "GatherElements", "Reshape", "Identity"]
    assert ops_of((1, 4, 8, 8), (4, 4), (2, 2), (1, 1)) == gathered
    assert ops_of((1, 4, 8), (4,), (2,), (1,)) == gathered
    assert ops_of((1, 4, 4, 4, 4), (4, 4, 4), (2, 2, 2), (1, 1, 1)) == gathered
    assert ops_of((1, 4, 4, 4, 4), (4, 4, 4), (2, 2, 2), (1, 1, 1), param_shape=[-1, 4, 4, 4, 4])[:4] == [
        "Conv", "Transpose", "Reshape", "DepthToSpace"]
    assert ops_of((1, 4, 4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1)) == ["Conv"] * 8 + ["Concat"] + gathered[1:]
    assert ops_of((1, 4, 4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), param_shape=[-1, 4, 4, 4, 4])[0] == "ConvTranspose"
    assert ops_of((1, 4, 8, 8), (3, 3), (1, 1), (1, 1), [2, 1]) == ["Conv", "Identity"]
    assert ops_of((1, 4, 8, 8), (3, 3), (2, 2), (1, 1))[0] == "ConvTranspose"
    assert ops_of((1, 4, 8, 8), (2, 2), (2, 2), (0, 0))[0] == "ConvTranspose"
    assert ops_of((1, 4, 8, 8), (4, 4), (2, 2), (1, 1), [2, 2])[0] == "ConvTranspose"
    assert ops_of((1, 4, 8, 8), (4, 4), (2, 2), (1, 1), output_shape=[20, 20])[0] == "ConvTranspose"
    assert ops_of((1, 4, 8, 8), (4, 1), (2, 2), (1, 0))[0] == "ConvTranspose"  # a residue without taps


def test_gather_index_is_folded_not_stored(tmp_path):
    """The GatherElements index is as large as the output but the file holds only per-axis tables."""
    w = np.random.default_rng(3).standard_normal((8, 8, 4, 4)).astype(np.float32)
    xml = build(tmp_path, (1, 8, 64, 64), w, [2, 2], [1, 1], [1, 1], [1, 1])
    model = convert(xml)
    assert "GatherElements" in runtime_ops(model)
    stored = sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in (6, 7))
    assert stored < 1000 < 8 * 128 * 128


@pytest.mark.parametrize("kernel,strides,pads,op,data", [
    ((3,), (2,), (1, 0), (1,), (2, 4, 7)),
    ((5, 3), (3, 2), (2, 1), (1, 0), (1, 4, 5, 6)),
    ((3, 4, 3), (2, 2, 2), (1, 0), (0, 1, 1), (2, 2, 3, 4, 5)),
    ((3, 3, 3), (2, 2, 2), (0, 2), (1, 1, 1), (1, 2, 3, 3, 3)),
])
@pytest.mark.parametrize("grouped", [False, True])
def test_phases_with_unequal_taps(tmp_path, monkeypatch, kernel, strides, pads, op, data, grouped):
    """Residues with different tap counts get their own Convs (no zero-filled taps); Concat and
    one GatherElements interleave and crop them, for a static batch of 1 or 2."""
    monkeypatch.setattr(cbd, "FORMULATION", "phase")
    rng = np.random.default_rng(sum(kernel))
    r = len(kernel)
    w = rng.standard_normal(((2, data[1] // 2, 3) if grouped else (data[1], 3)) + kernel).astype(np.float32)
    xml = build(tmp_path, data, w, list(strides), [pads[0]] * r, [pads[1]] * r, [1] * r, output_padding=list(op),
                grouped=grouped)
    types = runtime_ops(convert(xml))
    split = math.prod(s for k, s in zip(kernel, strides) if k % s)
    assert types.count("Conv") == split and "GatherElements" in types
    check_all(xml, rng.standard_normal(data).astype(np.float32), w)


def test_phases_fall_back_past_the_gather_cap(tmp_path, monkeypatch):
    """Past MAX_GATHER_ELEMENTS a single Conv is interleaved by the DepthToSpace chain, and
    residues with unequal taps keep ConvTranspose."""
    monkeypatch.setattr(cbd.forms, "MAX_GATHER_ELEMENTS", 16)
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 2, 4, 4, 4)).astype(np.float32)
    xml = build(tmp_path, (1, 3, 2, 3, 4), w, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1])
    assert runtime_ops(convert(xml))[:4] == ["Conv", "Transpose", "Reshape", "DepthToSpace"]
    check_all(xml, rng.standard_normal((1, 3, 2, 3, 4)).astype(np.float32), w)
    w = rng.standard_normal((3, 2, 3, 3, 3)).astype(np.float32)
    xml = build(tmp_path, (1, 3, 2, 3, 4), w, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1])
    assert runtime_ops(convert(xml))[0] == "ConvTranspose"


def test_choice_keeps_convtranspose_without_known_finite_filters(tmp_path):
    """The stride-phase form is exact only for finite filters: runtime or non-finite filters keep
    ConvTranspose even where the shape would choose phases."""
    w = np.random.default_rng(1).standard_normal((4, 2, 4, 4)).astype(np.float32)
    w[0, 0, 0, 0] = np.inf
    xml = build(tmp_path, (1, 4, 8, 8), w, [2, 2], [1, 1], [1, 1], [1, 1])
    assert [n.op_type for n in convert(xml).graph.node][0] == "ConvTranspose"
    px, pw = ops.parameter([1, 4, 8, 8], np.float32, name="data"), ops.parameter(w.shape, np.float32, name="w")
    node = ops.convolution_backprop_data(px, pw, [2, 2], None, [1, 1], [1, 1], [1, 1])
    xml = save(node, [px, pw], tmp_path / "runtime_w.xml")
    assert [n.op_type for n in convert(xml).graph.node][0] == "ConvTranspose"


@pytest.mark.parametrize("kernel", [(4, 4), (3, 3, 3)])
def test_non_finite_inputs_match_the_definition(tmp_path, formulation, kernel):
    """inf/NaN inputs: the same inf and NaN positions as the scatter-add definition (and OpenVINO)
    for each formulation of a kernel-4 stride-2 layer and of a 3-D kernel-3 stride-2 layer (one
    Conv per residue: no zero-filled taps)."""
    rng = np.random.default_rng(2)
    r = len(kernel)
    w = rng.standard_normal((4, 2) + kernel).astype(np.float32)
    x = rng.standard_normal((1, 4) + (6,) * r).astype(np.float32)
    x[(0, 1) + (2, 3, 1)[:r]], x[(0, 2) + (4, 0, 2)[:r]], x[(0, 0) + (5, 5, 5)[:r]] = np.inf, -np.inf, np.nan
    xml = build(tmp_path, x.shape, w, [2] * r, [1] * r, [1] * r, [1] * r)
    got = run_onnx(xml, [x])[0]
    ref, bound = oracle_with_bound(xml, x, w)
    for name, want in (("onnxruntime", got), ("OpenVINO", run_openvino(xml, [x])[0])):
        np.testing.assert_array_equal(np.isnan(want), np.isnan(ref), err_msg=name)
        np.testing.assert_array_equal(np.isposinf(want), np.isposinf(ref), err_msg=name)
        np.testing.assert_array_equal(np.isneginf(want), np.isneginf(ref), err_msg=name)
    finite = np.isfinite(ref)
    assert_close(got[finite], ref[finite], bound[finite])
