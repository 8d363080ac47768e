"""(Group)ConvolutionBackpropData-1: invalid layers give clear errors naming the layer (converter
and oracle alike), the oracle's own definition on hand-checked cases, and a hypothesis property
test of the converted model against the oracle on hand-written IR."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ir2onnx.ops.convolution_backprop_data as cbd
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.registry import oracle_for
from ir2onnx.testing import IRWriter, run_onnx

EPS32 = 2.0 ** -23
GOOD = dict(strides="2,2", pads_begin="1,1", pads_end="1,1", dilations="1,1", auto_pad="explicit",
            output_padding="0,0")


def write(path, attrs, data=(1, 4, 5, 5), filters=(4, 3, 3, 3), grouped=False, out_shape=None,
          etype="f32", out_dims=None):
    ir = IRWriter("cbd")
    x = ir.parameter(data, etype, name="data")
    rng = np.random.default_rng(0)
    w = ir.const(rng.standard_normal(filters).astype({"f32": np.float32, "i32": np.int32}[etype]), name="filters")
    ins = [x, w] + ([ir.const(np.array(out_shape, np.int64), name="output_shape")] if out_shape is not None else [])
    op = "GroupConvolutionBackpropData" if grouped else "ConvolutionBackpropData"
    rank = len(data) if data is not None else len(filters) - grouped
    dims = out_dims or [None] * rank
    (y,) = ir.layer(op, "opset1", ins, attrs, [(etype, dims)], name="deconv")
    ir.result(y)
    return ir.save(path / "m.xml")


BAD = [
    (dict(strides="0,1"), {}, "strides=[0, 1]: every value must be >= 1"),
    (dict(strides="-2,1"), {}, "strides=[-2, 1]"),
    (dict(dilations="1,0"), {}, "dilations=[1, 0]: every value must be >= 1"),
    (dict(pads_begin="-1,0"), {}, "pads_begin=[-1, 0]: every value must be >= 0"),
    (dict(pads_end="0,-2"), {}, "pads_end=[0, -2]"),
    (dict(output_padding="-1,0"), {}, "output_padding=[-1, 0]"),
    (dict(strides="2"), {}, "strides has 1 values, a 2-D op needs 2"),
    (dict(pads_begin="1,1,1"), {}, "pads_begin has 3 values"),
    (dict(output_padding="1"), {}, "output_padding has 1 values"),
    ({}, dict(data=(1, 5, 5, 5)), "data has 5 channels but the filters expect 4"),
    ({}, dict(data=(1, 4, 5)), "data of rank 3 does not fit filters of rank 4"),
    ({}, dict(data=(1, 5, 5, 5), filters=(2, 2, 3, 3, 3), grouped=True), "2 groups do not divide the 5 input channels"),
    ({}, dict(data=(1, 6, 5, 5), filters=(2, 2, 3, 3, 3), grouped=True), "data has 6 channels but the filters expect 4"),
    ({}, dict(data=(1, 4, 5, 5, 5, 5), filters=(4, 3, 3, 3, 3, 3)), "do not describe a 1-D, 2-D or 3-D op"),
    ({}, dict(out_shape=[9, 9, 9]), "output_shape must be a 1-D integer tensor of 2 values"),
    ({}, dict(out_shape=[0, 9]), "output_shape=[0, 9] must be positive"),
    (dict(pads_begin="6,5", pads_end="5,6"), {}, "the pads leave no output"),
]


@pytest.mark.parametrize("attrs,kw,message", BAD, ids=[m[:30] for _, _, m in BAD])
def test_invalid_layers(tmp_path, attrs, kw, message):
    xml = write(tmp_path, {**GOOD, **attrs}, **kw)
    with pytest.raises(InvalidLayer) as e:
        convert(xml)
    assert "'deconv' (" in str(e.value) and message in str(e.value)
    if "does not fit" in message or "describe" in message or "output_shape must" in message:
        return  # shapes the oracle never sees as such
    layer = load_ir(xml).order[-2]
    grouped = kw.get("grouped", False)
    x = np.zeros(kw.get("data", (1, 4, 5, 5)), np.float32)
    w = np.zeros(kw.get("filters", (4, 3, 3, 3)), np.float32)
    extra = [np.array(kw["out_shape"], np.int64)] if "out_shape" in kw else []
    with pytest.raises(InvalidLayer):
        oracle_for(layer.type, layer.version)(layer, [x, w] + extra)
    assert grouped == layer.type.startswith("Group")


def test_unknown_auto_pad(tmp_path):
    xml = write(tmp_path, {**GOOD, "auto_pad": "same"})
    with pytest.raises(InvalidLayer, match=r"'deconv'.*auto_pad='same' is not one of: explicit, same_upper"):
        convert(xml)


def test_integer_data_is_unsupported(tmp_path):
    xml = write(tmp_path, GOOD, etype="i32")
    with pytest.raises(InvalidLayer, match=r"'deconv'.*element type i32 has no ONNX ConvTranspose"):
        convert(xml)


# -- the oracle's definition, by hand ------------------------------------------------------------
def _layer(tmp_path, attrs, **kw):
    return load_ir(write(tmp_path, attrs, **kw)).order[-2]


def test_oracle_scatter_add_by_hand(tmp_path):
    """x=[1,2], w=[1,1,1], stride 2, output_padding 1 -> [1,1,3,2,2,0] (the spec's measured case);
    pads_begin 1 / pads_end 2 crop [1,3] of it; dilation 2 spreads the taps."""
    attrs = dict(strides="2", pads_begin="0", pads_end="0", dilations="1", output_padding="1")
    layer = _layer(tmp_path, attrs, data=(1, 1, 2), filters=(1, 1, 3))
    fn = oracle_for(layer.type, layer.version)
    x, w = np.array([[[1.0, 2.0]]], np.float32), np.ones((1, 1, 3), np.float32)
    np.testing.assert_array_equal(fn(layer, [x, w])[0].reshape(-1), [1, 1, 3, 2, 2, 0])
    layer.attrs.update(pads_begin=[1], pads_end=[2], output_padding=[0])
    np.testing.assert_array_equal(fn(layer, [x, w])[0].reshape(-1), [1, 3])
    layer.attrs.update(pads_begin=[0], pads_end=[0], strides=[1], dilations=[2])
    w = np.array([[[1.0, 10.0, 100.0]]], np.float32)  # taps at 0, 2, 4
    np.testing.assert_array_equal(fn(layer, [x, w])[0].reshape(-1), [1, 2, 10, 20, 100, 200])


@pytest.mark.parametrize("auto_pad,pads_begin,pads_end,expected", [
    ("same_upper", "2", "7", [2, 3, 4]),  # total 3: the odd element cropped at the beginning
    ("same_upper", "0", "0", [2, 3, 4]),  # (the pads attributes play no part)
    ("same_lower", "2", "7", [1, 2, 3]),  # at the end
    ("same_lower", "0", "0", [1, 2, 3]),
    ("explicit", "2", "7", [2, 3, 4]),  # the pads_begin attribute, as OpenVINO's runtime
    ("explicit", "0", "0", [0, 1, 2]),
    ("explicit", "4", "0", [4, 5, 6]),  # past the natural output (index 6): a zero
    ("valid", "2", "7", [0, 1, 2]),  # nothing cropped at the start
    ("valid", "0", "0", [0, 1, 2]),
])
def test_oracle_output_shape_split(tmp_path, auto_pad, expected, pads_begin, pads_end):
    """Natural output 0..5 (x = one-hot, w = 0..5); output_shape 3: the window starts where
    OpenVINO's runtime starts it (pads_begin for explicit, 0 for valid, the split of total 3 for
    same_*); pads_end plays no part; ir2onnx too."""
    attrs = dict(strides="1", pads_begin=pads_begin, pads_end=pads_end, dilations="1", auto_pad=auto_pad,
                 output_padding="0")
    layer = _layer(tmp_path, attrs, data=(1, 1, 1), filters=(1, 1, 6), out_shape=[3])
    fn = oracle_for(layer.type, layer.version)
    out = fn(layer, [np.ones((1, 1, 1), np.float32), np.arange(6, dtype=np.float32).reshape(1, 1, 6),
                     np.array([3])])[0]
    np.testing.assert_array_equal(out.reshape(-1), np.append(np.arange(6), 0)[expected])
    xml = write(tmp_path, attrs, data=(1, 1, 1), filters=(1, 1, 6), out_shape=[3], out_dims=[1, 1, 3])
    w = load_ir(xml).order[1].const.array()
    got = run_onnx(xml, [np.ones((1, 1, 1), np.float32)])[0]
    np.testing.assert_array_equal(got.reshape(-1), np.append(w.reshape(-1), 0)[expected])


# -- property test against the oracle ----------------------------------------------------------------
@st.composite
def cases(draw):
    rank = draw(st.integers(1, 3))
    axes = [dict(x=draw(st.integers(1, 4)), k=draw(st.integers(1, 4)), s=draw(st.integers(1, 3)),
                 d=draw(st.integers(1, 2)), pb=draw(st.integers(0, 2)), pe=draw(st.integers(0, 2)),
                 op=draw(st.integers(0, 2))) for _ in range(rank)]
    # sampled_from shrinks (and, derandomized, leans) toward its first entries: interesting first
    auto_pad = draw(st.sampled_from(["same_upper", "explicit", "same_lower", "valid"]))
    with_shape = draw(st.sampled_from([True, False]))
    for a in axes:
        a["nat"] = a["s"] * (a["x"] - 1) + (a["k"] - 1) * a["d"] + 1
        a["o"] = max(1, a["nat"] + draw(st.sampled_from([-3, 2, -1, 1, -2, 3, 0])))
        if not with_shape and auto_pad == "explicit":  # keep at least one output element
            a["pb"] = min(a["pb"], a["nat"] - 1)
            a["pe"] = min(a["pe"], a["nat"] + a["op"] - a["pb"] - 1)
    groups = draw(st.sampled_from([1, 2]))
    return dict(rank=rank, axes=axes, auto_pad=auto_pad, with_shape=with_shape, groups=groups,
                grouped=groups > 1 or draw(st.booleans()), cin_g=draw(st.integers(1, 2)),
                cout_g=draw(st.integers(1, 2)), n=draw(st.integers(1, 2)),
                mode=draw(st.sampled_from(["phase", None, "convtranspose"])), seed=draw(st.integers(0, 99)))


@given(cases())
def test_property_against_oracle(tmp_path_factory, case):
    tmp = tmp_path_factory.mktemp("prop")
    axes, g = case["axes"], case["groups"]
    attrs = {k: ",".join(str(a[v]) for a in axes) for k, v in
             (("strides", "s"), ("pads_begin", "pb"), ("pads_end", "pe"), ("dilations", "d"), ("output_padding", "op"))}
    attrs["auto_pad"] = case["auto_pad"]
    data = (case["n"], g * case["cin_g"]) + tuple(a["x"] for a in axes)
    kernel = tuple(a["k"] for a in axes)
    filters = ((g, case["cin_g"], case["cout_g"]) if case["grouped"] else (g * case["cin_g"], case["cout_g"])) + kernel
    out_shape = [a["o"] for a in axes] if case["with_shape"] else None
    xml = write(tmp, attrs, data=data, filters=filters, grouped=case["grouped"], out_shape=out_shape)
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal(data).astype(np.float32)
    w = load_ir(xml).order[1].const.array()
    layer = load_ir(xml).order[-2]
    fn = oracle_for(layer.type, layer.version)
    extra = [] if out_shape is None else [np.array(out_shape, np.int64)]
    ref = fn(layer, [x, w] + extra)[0].astype(np.float64)
    bound = (case["cin_g"] * math.prod(kernel) + 2) * EPS32 * fn(layer, [np.abs(x), np.abs(w)] + extra)[0] + 1e-30
    saved = cbd.FORMULATION
    cbd.FORMULATION = case["mode"]
    try:
        got = run_onnx(xml, [x])[0]
    finally:
        cbd.FORMULATION = saved
    assert got.shape == ref.shape
    assert np.all(np.abs(got - ref) <= bound)
