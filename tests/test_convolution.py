"""Convolution-1 / GroupConvolution-1 on OpenVINO-written IR: rank 1-3, strides, dilations,
explicit pads and auto_pad same_upper/same_lower/valid (odd totals), f16-compressed weights,
compared with the float64 oracle and with the OpenVINO runtime.

Tolerance (f32): rtol 1e-5, atol 1e-5 against the oracle and OpenVINO; inputs and weights are
standard normal and at most 36 products are summed, so float32 rounding stays near 1e-6.
"""
from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, run_onnx, run_openvino, ov_parameter, ov_save

TOL = dict(rtol=1e-5, atol=1e-5)


_param = ov_parameter


def _save(tmp_path, out, params, compress=False):
    return ov_save(tmp_path / "m.xml", out, params, compress_to_fp16=compress)


def _conv_ir(tmp_path, x_shape, w_shape, strides, pads_begin, pads_end, dilations, auto_pad="explicit",
             group=False, compress=False, dtype=np.float32):
    x = _param(x_shape, dtype)
    w = ops.constant(np.random.default_rng(3).standard_normal(w_shape).astype(dtype))
    fn = ops.group_convolution if group else ops.convolution
    y = fn(x, w, strides, pads_begin, pads_end, dilations, auto_pad)
    return _save(tmp_path, y, [x], compress)


def _check(xml, x, tol=TOL):
    got = run_onnx(xml, {"x": x})[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(got, run_openvino(xml, [x])[0], **tol)
    return got


CASES = [  # x shape, w shape, strides, pads_begin, pads_end, dilations, auto_pad, group
    ((1, 2, 7), (3, 2, 3), [1], [1], [1], [1], "explicit", False),
    ((2, 3, 6, 5), (4, 3, 3, 2), [2, 1], [1, 0], [0, 2], [1, 2], "explicit", False),
    ((1, 2, 7, 6), (3, 2, 3, 3), [2, 2], [0, 0], [0, 0], [1, 1], "same_upper", False),
    ((1, 2, 7, 6), (3, 2, 2, 4), [2, 3], [0, 0], [0, 0], [1, 1], "same_lower", False),
    ((1, 2, 6, 6), (3, 2, 2, 2), [3, 3], [5, 5], [5, 5], [2, 1], "valid", False),
    ((1, 2, 4, 5, 4), (2, 2, 2, 3, 2), [1, 2, 1], [1, 1, 0], [0, 1, 1], [1, 1, 2], "explicit", False),
    ((1, 4, 6, 6), (2, 3, 2, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], "explicit", True),
    ((1, 6, 5, 7), (6, 1, 1, 3, 3), [2, 2], [0, 0], [0, 0], [1, 1], "same_upper", True),
    ((1, 4, 9), (2, 2, 2, 2), [2], [0], [0], [3], "same_lower", True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[6]}{'-group' if c[7] else ''}")
def test_against_oracle_and_openvino(tmp_path, case):
    x_shape, w_shape, strides, pb, pe, dil, auto_pad, group = case
    xml = _conv_ir(tmp_path, x_shape, w_shape, strides, pb, pe, dil, auto_pad, group)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    _check(xml, x)
    model = convert(xml)
    conv = [n for n in model.graph.node if n.op_type == "Conv"]
    assert len(conv) == 1 and all(a.name != "auto_pad" for a in conv[0].attribute)


def test_same_upper_puts_the_odd_pad_at_the_end(tmp_path):
    """7 wide, kernel 4, stride 1: total pad 3 -> same_upper (1, 2), same_lower (2, 1)."""
    for mode, pads in (("same_upper", [1, 2]), ("same_lower", [2, 1])):
        xml = _conv_ir(tmp_path, (1, 1, 7), (1, 1, 4), [1], [0], [0], [1], mode)
        conv = next(n for n in convert(xml).graph.node if n.op_type == "Conv")
        assert list(next(a for a in conv.attribute if a.name == "pads").ints) == pads
        _check(xml, np.arange(7, dtype=np.float32).reshape(1, 1, 7))


def test_f16_compressed_weights_and_dynamic_batch(tmp_path):
    xml = _conv_ir(tmp_path, (None, 3, 5, 5), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], compress=True)
    assert 'element_type="f16"' in xml.read_text()
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert _check(xml, x).shape == (2, 4, 5, 5)


def test_f16_data(tmp_path):
    xml = _conv_ir(tmp_path, (1, 2, 5, 5), (3, 2, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], dtype=np.float16)
    x = np.random.default_rng(4).standard_normal((1, 2, 5, 5)).astype(np.float16)
    _check(xml, x, dict(rtol=1e-2, atol=1e-2))


def test_same_upper_on_dynamic_spatial_dims(tmp_path):
    """Stride 1: the same_* padding (K-1)*d is known without the size."""
    xml = _conv_ir(tmp_path, (1, 2, None, None), (3, 2, 3, 2), [1, 1], [0, 0], [0, 0], [1, 2], "same_upper")
    _check(xml, np.random.default_rng(5).standard_normal((1, 2, 6, 7)).astype(np.float32))


@pytest.mark.parametrize("mode", ["same_upper", "same_lower"])
@pytest.mark.parametrize("group", [False, True])
def test_same_with_stride_on_dynamic_spatial_dims(tmp_path, mode, group):
    """Stride > 1: the pads depend on the run-time size (odd and even totals, none at all):
    computed in the graph, then Pad(zeros) -> Conv; one static spatial dim beside."""
    w_shape = (2, 2, 2, 3, 2) if group else (3, 4, 3, 2)
    xml = _conv_ir(tmp_path, (None, 4, None, 6), w_shape, [2, 3], [0, 0], [0, 0], [2, 1], mode, group=group)
    for shape in ((1, 4, 7, 6), (2, 4, 8, 6), (1, 4, 3, 6), (1, 4, 10, 6)):
        _check(xml, np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32))


def _writer_conv(tmp_path, x_shape, w_shape, x_type="f32", attrs=None, op="Convolution"):
    w = IRWriter()
    x = w.parameter(list(x_shape), x_type, "x")
    f = w.const(np.ones(w_shape, dtype=np.float32 if x_type == "f32" else np.int32), x_type)
    a = {"strides": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "dilations": "1,1", **(attrs or {})}
    y = w.layer(op, "opset1", [x, f], a, [(x_type, None)])[0]
    w.result(y)
    return w.save(tmp_path / "w.xml")


@pytest.mark.parametrize("x_shape,w_shape,attrs,op,err,match", [
    ((1, 3, 4, 4), (2, 2, 1, 1), {}, "Convolution", InvalidLayer, "3 channels but the filters expect 2"),
    ((1, 4, 4, 4), (2, 2, 3, 1, 1), {}, "GroupConvolution", InvalidLayer, "expect 6"),
    ((1, 2, 4, 4), (2, 2, 1, 1), {"strides": "1"}, "Convolution", InvalidLayer, "strides has 1 values"),
    ((1, 2, 4, 4), (2, 2, 1, 1), {"pads_begin": "-1,0"}, "Convolution", InvalidLayer, "negative pads_begin"),
    ((1, 2, 2, 2), (2, 2, 5, 1), {}, "Convolution", InvalidLayer, "smaller than the dilated kernel"),
    ((1, 2, 4, 4, 4, 4), (2, 2, 1, 1, 1, 1), {"strides": "1,1,1,1", "pads_begin": "0,0,0,0",
     "pads_end": "0,0,0,0", "dilations": "1,1,1,1"}, "Convolution", InvalidLayer, "1-D, 2-D or 3-D"),
])
def test_invalid_layers_are_refused(tmp_path, x_shape, w_shape, attrs, op, err, match):
    xml = _writer_conv(tmp_path, x_shape, w_shape, attrs=attrs, op=op)
    with pytest.raises(err, match=match):
        convert(xml)


def test_8_bit_convolution_is_refused(tmp_path):
    """i32 converts (tests/test_convolution_integer.py); 8-bit integers are refused."""
    from ir2onnx.errors import UnsupportedLayer

    xml = _writer_conv(tmp_path, (1, 2, 3, 3), (1, 2, 1, 1), x_type="u8")
    with pytest.raises(UnsupportedLayer, match="element type u8 is not supported"):
        convert(xml)


def test_model_passes_full_check(tmp_path):
    xml = _conv_ir(tmp_path, (1, 4, 6, 6), (2, 3, 2, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], group=True)
    onnx.checker.check_model(convert(xml), full_check=True)
