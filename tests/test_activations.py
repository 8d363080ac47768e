"""The activations (ReLU, Sigmoid, Tanh, Clamp, Gelu erf/tanh, HSwish, Swish, PReLU, Elu,
SoftPlus, Mish) and, in the same float sweep, Exp, Sqrt and SoftMax-1/-8 (see also
test_unary.py, test_softmax.py) on OpenVINO-written IR, against the float64 oracle and the OpenVINO runtime.

Tolerances: f32 rtol 1e-5, atol 1e-6 (one transcendental function and a few roundings; OpenVINO's
CPU plugin uses its own vectorised approximations, hence rtol 1e-5 rather than a few ulp);
f16 rtol 2e-3, atol 2e-3 (a couple of f16 ulps). ReLU and Clamp select values: bit for bit.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset2 as ops2
import openvino.opset4 as ops4
import openvino.opset7 as ops7
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.lowering import precision
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

from util import close_everywhere, save_one_input

TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}
SHAPE = (2, 3, 4)


def _all(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    return got, want, run_openvino(xml, feeds)[0]


UNARY = {
    "ReLU": (ops.relu, (-3, 3)),
    "Sigmoid": (ops.sigmoid, (-8, 8)),
    "Tanh": (ops.tanh, (-4, 4)),
    "Exp": (ops.exp, (-5, 5)),
    "Sqrt": (ops.sqrt, (0, 9)),
    "Gelu-erf": (lambda x: ops7.gelu(x, "erf"), (-4, 4)),
    "Gelu-tanh": (lambda x: ops7.gelu(x, "tanh"), (-4, 4)),
    "Gelu-2": (ops2.gelu, (-4, 4)),
    "HSwish": (ops4.hswish, (-5, 5)),
    "Swish": (lambda x: ops4.swish(x, ops.constant(np.array(0.75, x.get_element_type().to_dtype()))), (-5, 5)),
    "SoftMax-1": (lambda x: ops1.softmax(x, 1), (-5, 5)),
    "SoftMax-8": (lambda x: ops.softmax(x, -1), (-5, 5)),
    "Clamp": (lambda x: ops.clamp(x, -0.5, 1.25), (-2, 2)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", list(UNARY))
def test_float_activation(tmp_path, name, dtype):
    make, (low, high) = UNARY[name]
    xml = save_one_input(tmp_path, make, dtype)
    if name == "Gelu-2":
        assert 'type="Gelu" version="opset2"' in xml.read_text()
    x = np.random.default_rng(0).uniform(low, high, SHAPE).astype(dtype)
    got, want, ov_out = _all(xml, {"x": x})
    assert got.dtype == dtype and got.shape == SHAPE
    if name in ("ReLU", "Clamp"):
        assert_bitexact(got, want)
        assert_bitexact(got, ov_out)
    else:
        np.testing.assert_allclose(got, want, **TOLS[dtype])
        np.testing.assert_allclose(got, ov_out, **TOLS[dtype])


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("mode", ["erf", "tanh"])
def test_gelu_both_forms(tmp_path, mode, opset):
    """Below opset 20 Gelu is composed of Erf / Tanh; from 20 it is the Gelu node."""
    xml = save_one_input(tmp_path, lambda x: ops7.gelu(x, mode))
    model = convert(xml, opset=opset)
    assert ("Gelu" in [n.op_type for n in model.graph.node]) == (opset >= 20)
    x = np.linspace(-5, 5, 24, dtype=np.float32).reshape(SHAPE)
    got = run_onnx(xml, {"x": x}, opset=opset)[0]
    np.testing.assert_allclose(got, run_openvino(xml, [x])[0], **TOLS[np.float32])


def test_swish_with_beta(tmp_path):
    beta = ops.parameter([], np.float32, name="beta")
    beta.output(0).get_tensor().set_names({"beta"})
    xml = save_one_input(tmp_path, lambda x, b: ops4.swish(x, b), extra=(beta,))
    feeds = {"x": np.linspace(-4, 4, 24, dtype=np.float32).reshape(SHAPE), "beta": np.array(1.7, np.float32)}
    got, want, ov_out = _all(xml, feeds)
    np.testing.assert_allclose(got, want, **TOLS[np.float32])
    np.testing.assert_allclose(got, ov_out, **TOLS[np.float32])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_integer_relu_and_clamp(tmp_path, dtype):
    """Integer Clamp takes ceil(min) and floor(max): -1.5 -> -1, 2.5 -> 2 (as OpenVINO does)."""
    x = np.arange(-6, 18).astype(dtype).reshape(SHAPE) if dtype != np.uint8 else np.arange(24, dtype=dtype).reshape(SHAPE)
    for make in (ops.relu, lambda p: ops.clamp(p, -1.5, 2.5)):
        xml = save_one_input(tmp_path, make, dtype)
        got, want, ov_out = _all(xml, {"x": x})
        assert_bitexact(got, want)
        assert_bitexact(got, ov_out)


@pytest.mark.parametrize("op,version,attrs,match", [
    ("SoftMax", "opset1", {"axis": "3"}, "axis 3 is out of range"),
    ("SoftMax", "opset1", {"axis": "-1"}, "axis -1 is out of range"),
    ("SoftMax", "opset8", {"axis": "-4"}, "axis -4 is out of range"),
    ("Clamp", "opset1", {"min": "2", "max": "1"}, "must not be greater"),
])
def test_invalid_attributes(tmp_path, op, version, attrs, match):
    w = IRWriter()
    x = w.parameter(list(SHAPE), "f32", "x")
    w.result(w.layer(op, version, [x], attrs, [("f32", SHAPE)])[0])
    with pytest.raises(InvalidLayer, match=match):
        convert(w.save(tmp_path / "bad.xml"))


def test_integer_sigmoid_is_refused(tmp_path):
    w = IRWriter()
    x = w.parameter(list(SHAPE), "i32", "x")
    w.result(w.layer("Sigmoid", "opset1", [x], None, [("i32", SHAPE)])[0])
    with pytest.raises(InvalidLayer, match="Sigmoid on element type i32 is not supported"):
        convert(w.save(tmp_path / "bad.xml"))


def test_constant_input_is_folded(tmp_path):
    x = ops.parameter(SHAPE, np.float32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    scale = ops.sqrt(ops.constant(np.array([4.0, 9.0, 16.0, 25.0], np.float32)))
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(ops.multiply(x, scale))], [x], "m"), str(path), compress_to_fp16=False)
    assert 'type="Sqrt"' in path.read_text()
    assert [n.op_type for n in convert(path).graph.node] == ["Mul", "Identity"]
    data = np.ones(SHAPE, np.float32)
    assert_bitexact(run_onnx(path, {"x": data})[0], np.broadcast_to(np.float32([2, 3, 4, 5]), SHAPE).copy())


# -- PReLU-1, Elu-1, SoftPlus-4, Mish-4 --------------------------------------------------------
# On OpenVINO-written IR against the float64 oracle and the OpenVINO runtime: f32 rtol 1e-5,
# atol 1e-6; f16 rtol 2e-3, atol 2e-3 (as above).
def _normal_data(shape, dtype=np.float32, scale=4.0):
    return (np.random.default_rng(5).standard_normal(shape) * scale).astype(dtype)


SMOOTH = {
    "Elu": (lambda x: ops.elu(x, 0.7), lambda v: np.where(v > 0, v, 0.7 * np.expm1(v))),
    "SoftPlus": (ops.softplus, lambda v: np.logaddexp(0, v)),
    "Mish": (ops.mish, lambda v: v * np.tanh(np.logaddexp(0, v))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", list(SMOOTH))
def test_smooth_activation(tmp_path, op, dtype):
    make, ref = SMOOTH[op]
    x = ov_parameter([2, 3, 4], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", make(x), [x])
    data = _normal_data((2, 3, 4), dtype)
    got = close_everywhere(xml, {"x": data}, dtype, opsets=(17, 18))
    np.testing.assert_allclose(got, ref(data.astype(np.float64)), **TOLS[dtype])


def test_softplus_large_inputs(tmp_path):
    x = ov_parameter([6], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.softplus(x), [x])
    data = np.array([-100, -20, 0, 15, 30, 80], np.float32)
    got = close_everywhere(xml, {"x": data}, ov_atol=5e-6)  # OpenVINO's CPU softplus(-20) is -1.9e-6
    assert np.isfinite(got).all() and got[-1] == np.float32(80)


@pytest.mark.parametrize("shape,slope", [
    ((2, 3, 4), [0.1, -0.5, 2.0]),          # per channel (dim 1)
    ((2, 3, 4), [0.1, 0.2, 0.3, 0.4]),     # numpy broadcast along the last dim
    ((3, 3), [0.5, 1.5, -1.0]),            # rank 2: dim 1 is both
    ((2, 3, 4), [[0.25]]),                 # scalar-like
])
def test_prelu(tmp_path, shape, slope):
    x = ov_parameter(list(shape), np.float32, "x")
    s = np.array(slope, np.float32)
    xml = ov_save(tmp_path / "m.xml", ops.prelu(x, ops.constant(s)), [x])
    data = _normal_data(shape)
    got = close_everywhere(xml, {"x": data})
    k = s.reshape(-1, *([1] * (len(shape) - 2))) if s.ndim == 1 and s.size == shape[1] else s
    np.testing.assert_allclose(got, np.where(data < 0, data * k, data), rtol=1e-6)


def test_prelu_runtime_slope(tmp_path):
    x, s = ov_parameter([1, 3, 2, 2], np.float32, "x"), ov_parameter([3], np.float32, "s")
    xml = ov_save(tmp_path / "m.xml", ops.prelu(x, s), [x, s])
    close_everywhere(xml, {"x": _normal_data((1, 3, 2, 2)), "s": np.array([0.1, 0.2, 0.3], np.float32)})


def test_prelu_and_smooth_constants_fold(tmp_path):
    x = ov_parameter([3], np.float32, "x")
    k = ops.elu(ops.constant(np.array([-1, 0, 2], np.float32)), 1.0)
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]


@pytest.mark.parametrize("op", list(SMOOTH))
def test_smooth_f64_refused_below_opset18(tmp_path, op):
    """onnxruntime has no f64 Elu/Softplus kernel; Mish-18 has one."""
    x = ov_parameter([2, 3], np.float64, "x")
    xml = ov_save(tmp_path / "m.xml", SMOOTH[op][0](x), [x])
    with pytest.raises(UnsupportedLayer, match="on f64 is not supported"):
        convert(xml, opset=17)
    if op == "Mish":
        data = _normal_data((2, 3), np.float64)
        got = run_onnx(xml, {"x": data}, opset=18)[0]
        np.testing.assert_allclose(got, SMOOTH[op][1](data), rtol=1e-12)


@pytest.mark.parametrize("version", [10, 11])
def test_prelu_f32_slope_on_f16_data(tmp_path, version):
    """IR v10 FP16 models written by the Model Optimizer (person-reidentification-retail-0277)
    feed an f32 slope to PReLU on f16 data. OpenVINO runs them, computing in f32 and rounding to
    f16 once: a slope cast to f16 first (0.1 -> 0.0999755859375) would change about a third of
    the negative outputs; the result must equal OpenVINO's bit for bit."""
    w = IRWriter(version=version)
    x = w.parameter([1, 3, 16, 16], "f16", name="x")
    slope = w.const(np.array([0.1, -0.3337, 1.0001], np.float32), "f32")
    y, = w.layer("PReLU", "opset1", [x, slope], None, [("f16", [1, 3, 16, 16])], out_names=["y"])
    w.result(y)
    xml = w.save(tmp_path / "m.xml")
    xv = (np.random.default_rng(0).standard_normal((1, 3, 16, 16)) * 4).astype(np.float16)
    feed = xv.astype(np.float32) if version == 10 else xv  # v10: f32 inputs and outputs, as OpenVINO
    got = run_onnx(xml, [feed])[0]
    assert got.dtype == feed.dtype
    want = run_openvino(xml, [feed])[0].astype(got.dtype)
    np.testing.assert_array_equal(got, want)
    narrow = np.where(xv < 0, xv * np.float16(0.1), xv)[:, :1]
    assert np.count_nonzero(narrow != got[:, :1]) > 10, "the slope was cast to f16 before the product"
    graph = precision.apply(ir2onnx.load_ir(xml), "f32")
    np.testing.assert_array_equal(evaluate(graph, {"x": feed})["y"], got)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_relu_and_clamp_on_16_bit_integers(tmp_path, dtype):
    """onnxruntime's CPU Clip has no 16-bit kernels: Clip runs in i32/u32, bit for bit."""
    x = ov_parameter([None, 6], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", [ops.relu(x), ops.clamp(x, 2.5, 300.5)], [x])
    info = np.iinfo(dtype)
    data = np.array([[info.min, -5 if info.min else 1, 0, 3, 301, info.max]], dtype)
    got = run_onnx(xml, {"x": data})
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())
    for g, w, o in zip(got, want, run_openvino(xml, {"x": data})):
        assert_bitexact(g, w, "oracle")
        assert_bitexact(g, o, "openvino")
    assert_bitexact(got[0], np.maximum(data, 0))
    assert_bitexact(got[1], np.clip(data, 3, 300).astype(dtype))


def test_hswish_f64_and_gelu_erf_f64(tmp_path):
    """onnxruntime's CPU provider has no f64 HardSwish (an Add/Clip/Div/Mul chain instead) and
    no f64 Erf/Gelu (Gelu erf on f64 is refused; the tanh form converts)."""
    x = ov_parameter([None, 5], np.float64, "x")
    xml = ov_save(tmp_path / "h.xml", [ops.hswish(x), ops7.gelu(x, "tanh")], [x])
    data = np.array([[-4.0, -3.0, -1.5, 0.7, 3.5]])
    got = run_onnx(xml, {"x": data})
    np.testing.assert_allclose(got[0], data * np.clip(data + 3, 0, 6) / 6, rtol=1e-15, atol=1e-300)
    want = list(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)
    erf = ov_save(tmp_path / "g.xml", ops7.gelu(x, "erf"), [x])
    with pytest.raises(UnsupportedLayer, match="Gelu.*f64.*no f64 Erf"):
        convert(erf)
