"""(Group)ConvolutionBackpropData-1 with its inputs in every form OpenVINO writes: f16-compressed
filters (Const -> Convert), filters as a run-time input, output_shape as a Parameter or computed by
ShapeOf -> Gather, dynamic spatial dims with a constant output_shape, and a following bias Add
folded into the ConvTranspose / Conv bias input where exact. Compared with the oracle (error bound
as in test_convolution_backprop_data.py) and the OpenVINO runtime."""
from __future__ import annotations

import math

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

EPS32 = 2.0 ** -23


def oracle(xml, x, w, out_shape=None, bias=None):
    """Oracle output (plus bias) and the float32 accumulation error bound per element."""
    layer = next(l for l in load_ir(xml).order if l.type.endswith("ConvolutionBackpropData"))
    fn = oracle_for(layer.type, layer.version)
    extra = [] if out_shape is None else [np.asarray(out_shape, np.int64)]
    ref = fn(layer, [x, w] + extra)[0].astype(np.float64)
    mag = fn(layer, [np.abs(x), np.abs(w)] + extra)[0].astype(np.float64)
    if bias is not None:
        ref, mag = ref + bias, mag + np.abs(bias)
    grouped = layer.type.startswith("Group")
    terms = w.shape[1 + grouped] * math.prod(w.shape[2 + grouped:]) + (bias is not None)
    return ref, (terms + 2) * EPS32 * mag + 1e-30


def assert_close(got, ref, bound, what=""):
    assert got.shape == ref.shape, f"{what} shape {got.shape} != {ref.shape}"
    err = np.abs(got.astype(np.float64) - ref)
    assert np.all(err <= bound), f"{what}: max excess {np.max(err - bound)}"


def save(outputs, params, path, fp16=False):
    ov.save_model(ov.Model(outputs, params), str(path), compress_to_fp16=fp16)
    return path


def op_types(xml, **kw):
    return runtime_ops(convert(xml, **kw))


@pytest.fixture(params=[None, "phase"])
def formulation(request, monkeypatch):
    monkeypatch.setattr(cbd, "FORMULATION", request.param)
    return request.param


def test_f16_compressed_filters(tmp_path, formulation):
    """OpenVINO's default f16 Const -> Convert: large filters stay f16 in the ONNX file."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 32, 4, 4)).astype(np.float32)  # 8192 elements: a Cast remains
    x = rng.standard_normal((1, 16, 6, 5)).astype(np.float32)
    p = ops.parameter(x.shape, np.float32, name="data")
    node = ops.convolution_backprop_data(p, ops.constant(w), [2, 2], None, [1, 1], [1, 1], [1, 1])
    xml = save([node], [p], tmp_path / "m.xml", fp16=True)
    model = convert(xml)
    big = [t for t in model.graph.initializer if math.prod(t.dims) == w.size]
    assert [t.data_type for t in big] == [onnx.TensorProto.FLOAT16]
    w16 = w.astype(np.float16).astype(np.float32)
    ref, bound = oracle(xml, x, w16)
    assert_close(run_onnx(xml, [x])[0], ref, bound, "onnxruntime")
    assert_close(run_openvino(xml, [x])[0], ref, bound, "OpenVINO")


@pytest.mark.parametrize("grouped", [False, True])
def test_filters_as_runtime_input(tmp_path, formulation, grouped):
    rng = np.random.default_rng(2)
    wshape = (2, 2, 3, 4, 4) if grouped else (4, 3, 4, 4)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    px = ops.parameter(x.shape, np.float32, name="data")
    pw = ops.parameter(w.shape, np.float32, name="filters")
    fn = ops.group_convolution_backprop_data if grouped else ops.convolution_backprop_data
    node = fn(px, pw, [2, 2], None, [1, 0], [2, 1], [1, 1], "explicit", [1, 0])
    xml = save([node], [px, pw], tmp_path / "m.xml")
    ref, bound = oracle(xml, x, w)
    assert_close(run_onnx(xml, [x, w])[0], ref, bound, "onnxruntime")
    assert_close(run_openvino(xml, [x, w])[0], ref, bound, "OpenVINO")


@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "same_lower", "valid"])
@pytest.mark.parametrize("opset,dynamic", [(14, True), (17, True), (17, False)])
def test_output_shape_parameter(tmp_path, auto_pad, opset, dynamic):
    """One converted model, pads computed at run time for several requested sizes (odd, even and
    negative total padding). OpenVINO's CPU plugin only compiles a Parameter output_shape when
    the data's shape is dynamic too, so the static variant is compared with the oracle only."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    px = ops.parameter([-1, 3, -1, -1] if dynamic else x.shape, np.float32, name="data")
    out_type = np.int64 if dynamic else np.int32  # T2 is any integer type
    po = ops.parameter([2], out_type, name="output_shape")
    node = ops.convolution_backprop_data(px, ops.constant(w), [2, 2], po, [1, 2], [0, 0], [1, 1],
                                         auto_pad, [1, 0])
    xml = save([node], [px, po], tmp_path / "m.xml")
    assert "Slice" in op_types(xml, opset=opset)
    for out in ([9, 11], [8, 9], [7, 10], [12, 15], [1, 1]):  # natural: 9 x 12
        o = np.array(out, out_type)
        ref, bound = oracle(xml, x, w, o)
        assert_close(run_onnx(xml, [x, o], opset=opset)[0], ref, bound, f"onnxruntime {out}")
        if dynamic:
            assert_close(run_openvino(xml, [x, o])[0], ref, bound, f"OpenVINO {out}")


@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "valid"])
def test_output_shape_from_shapeof(tmp_path, auto_pad):
    """A decoder skip connection: output_shape = ShapeOf(skip)[2:], skip of dynamic size."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    w = rng.standard_normal((4, 2, 4, 4)).astype(np.float32)
    px = ops.parameter([1, 4, -1, -1], np.float32, name="data")
    skip = ops.parameter([1, 2, -1, -1], np.float32, name="skip")
    osh = ops.gather(ops.shape_of(skip), ops.constant(np.array([2, 3], np.int64)), ops.constant(np.int64(0)))
    node = ops.convolution_backprop_data(px, ops.constant(w), [2, 2], osh, [1, 1], [1, 1], [1, 1], auto_pad)
    out = ops.add(node, skip)
    xml = save([out], [px, skip], tmp_path / "m.xml")
    for size in ([10, 10], [11, 9], [13, 14]):
        s = rng.standard_normal([1, 2] + size).astype(np.float32)
        ref, bound = oracle(xml, x, w, size)
        ref, bound = ref + s, bound + np.abs(s) * EPS32 * 2
        for who, run in (("onnxruntime", run_onnx), ("OpenVINO", run_openvino)):
            assert_close(run(xml, [x, s])[0], ref, bound, f"{who} {size}")


@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "same_lower", "valid"])
def test_dynamic_spatial_with_constant_output_shape(tmp_path, auto_pad):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 2, 3)).astype(np.float32)
    px = ops.parameter([-1, 3, -1], np.float32, name="data")
    osh = ops.constant(np.array([12], np.int64))
    node = ops.convolution_backprop_data(px, ops.constant(w), [2], osh, [2], [0], [1], auto_pad, [1])
    xml = save([node], [px], tmp_path / "m.xml")
    for n in (3, 5, 6, 8):  # natural 7, 11, 13, 17: zeros, odd, even and larger crops
        x = rng.standard_normal((2, 3, n)).astype(np.float32)
        ref, bound = oracle(xml, x, w, [12])
        assert_close(run_onnx(xml, [x])[0], ref, bound, f"onnxruntime n={n}")
        assert_close(run_openvino(xml, [x])[0], ref, bound, f"OpenVINO n={n}")


# -- bias folding ----------------------------------------------------------------------------------
def _with_bias(tmp_path, bias_shape, *, grouped=False, output_shape=None, swap=False, pads=(1, 1),
               kernel=(4, 4), fp16=False):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal(((2, 2, 3) if grouped else (4, 6)) + kernel).astype(np.float32)
    b = rng.standard_normal(bias_shape).astype(np.float32)
    p = ops.parameter(x.shape, np.float32, name="data")
    fn = ops.group_convolution_backprop_data if grouped else ops.convolution_backprop_data
    osh = None if output_shape is None else ops.constant(np.array(output_shape, np.int64))
    node = fn(p, ops.constant(w), [2, 2], osh, list(pads), list(pads), [1, 1])
    out = ops.add(ops.constant(b), node) if swap else ops.add(node, ops.constant(b))
    xml = save([out], [p], tmp_path / "m.xml", fp16)
    if fp16:
        w, b = (v.astype(np.float16).astype(np.float32) for v in (w, b))
    ref, bound = oracle(xml, x, w, output_shape, bias=b)
    assert_close(run_onnx(xml, [x])[0], ref, bound, "onnxruntime")
    assert_close(run_openvino(xml, [x])[0], ref, bound, "OpenVINO")
    return xml


@pytest.mark.parametrize("case", [
    dict(bias_shape=(1, 6, 1, 1)),
    dict(bias_shape=(6, 1, 1), swap=True),
    dict(bias_shape=(1, 6, 1, 1), grouped=True),
    dict(bias_shape=(1, 6, 1, 1), fp16=True),
    dict(bias_shape=(1, 1, 1, 1), kernel=(3, 3)),
    dict(bias_shape=(1, 6, 1, 1), output_shape=[8, 9], pads=(0, 0)),
])
def test_bias_folded(tmp_path, formulation, case):
    xml = _with_bias(tmp_path, **case)
    types = op_types(xml)
    assert "Add" not in types
    conv = [n for n in convert(xml).graph.node if n.op_type in ("ConvTranspose", "Conv")]
    split = formulation == "phase" and case.get("kernel") == (3, 3)  # one Conv per residue pair
    assert len(conv) == (4 if split else 1)  # no dead ConvTranspose left behind
    assert all(len(n.input) == 3 for n in conv)


@pytest.mark.parametrize("case", [
    dict(bias_shape=(1, 1, 1, 12)),  # not per channel
    dict(bias_shape=(12,)),  # one value per column, not per channel
    dict(bias_shape=(2, 6, 1, 1)),  # broadcasts the batch
])
def test_bias_not_folded(tmp_path, formulation, case):
    xml = _with_bias(tmp_path, **case)
    assert op_types(xml).count("Add") == 1


def test_bias_folded_over_phase_zeros(tmp_path, monkeypatch):
    """The stride-phase Conv computes the zeros past the natural output itself: they get the bias."""
    monkeypatch.setattr(cbd, "FORMULATION", "phase")
    xml = _with_bias(tmp_path, (1, 6, 1, 1), output_shape=[13, 14])
    assert op_types(xml) == ["Conv", "Reshape", "GatherElements", "Reshape", "Identity"]


def test_bias_not_folded_over_padded_zeros(tmp_path, monkeypatch):
    """Zeros appended by a Pad must become bias values too, which the bias input cannot do."""
    monkeypatch.setattr(cbd, "FORMULATION", "convtranspose")
    xml = _with_bias(tmp_path, (1, 6, 1, 1), output_shape=[13, 14])
    types = op_types(xml)
    assert "Pad" in types and types.count("Add") == 1


@pytest.mark.parametrize("opset", [14, 17])
def test_f16_data_and_opsets(tmp_path, formulation, opset):
    """f16 data and filters (onnxruntime's CPU has f16 ConvTranspose and Conv), at the lowest
    and the default opset; bound with the f16 unit roundoff (accumulation may be in f16)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float16)
    w = (rng.standard_normal((4, 3, 4, 4)) * 0.5).astype(np.float16)
    p = ops.parameter(x.shape, np.float16, name="data")
    node = ops.convolution_backprop_data(p, ops.constant(w), [2, 2], None, [1, 0], [1, 2], [1, 1], "explicit", [0, 1])
    xml = save([node], [p], tmp_path / "m.xml")
    layer = next(l for l in load_ir(xml).order if l.type == "ConvolutionBackpropData")
    fn = oracle_for(layer.type, layer.version)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref, mag = fn(layer, [x64, w64])[0], fn(layer, [np.abs(x64), np.abs(w64)])[0]
    got = run_onnx(xml, [x], opset=opset)[0]
    assert got.dtype == np.float16
    assert_close(got, ref, (4 * 16 + 2) * 2.0 ** -11 * mag + 2.0 ** -24, "onnxruntime f16")


def test_bias_not_folded_when_the_output_is_also_used_elsewhere(tmp_path, formulation):
    """Folding would need the ConvTranspose twice (with and without bias): keep one and an Add."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 6, 4, 4)).astype(np.float32)
    b = rng.standard_normal((1, 6, 1, 1)).astype(np.float32)
    p = ops.parameter(x.shape, np.float32, name="data")
    node = ops.convolution_backprop_data(p, ops.constant(w), [2, 2], None, [1, 1], [1, 1], [1, 1])
    xml = save([ops.add(node, ops.constant(b)), node], [p], tmp_path / "m.xml")
    types = op_types(xml)
    assert types.count("Add") == 1 and types.count("ConvTranspose") + types.count("Conv") == 1
    ref, bound = oracle(xml, x, w, bias=b)
    got = run_onnx(xml, [x])
    assert_close(got[0], ref, bound, "onnxruntime biased")
    assert_close(got[1], ref - b, bound, "onnxruntime without bias")
