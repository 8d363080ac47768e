"""FakeQuantize as QuantizeLinear -> DequantizeLinear (``quantized="qdq"`` / ``"qdq-symmetric"``).

NNCF-style IRs written by OpenVINO (``ir2onnx.testing.quantized_models``). A QDQ element equals the exact
float emulation's or is one quantization step from it (a near-tie rounded the other way); with
onnxruntime's int8 kernels (QLinearConv quantizes the float bias to int32 and requantizes with one
combined scale) about 0.1% of a conv layer's elements are one step off, and the flips cascade.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import openvino.opset15 as ops
import pytest

from ir2onnx.testing import quantized_models as qm
from ir2onnx.cli.main import main
from ir2onnx.ir.reader import load_ir
from ir2onnx.lowering.convert import convert_graph
from ir2onnx.testing import ov_parameter, ov_save, run_openvino

S = np.float32(4 / 255)


def _convert(xml, mode, opset=17):
    return convert_graph(load_ir(xml), opset, quantized=mode)


def _run(model, x, optimized_path=None):
    opts = ort.SessionOptions()
    if optimized_path:
        opts.optimized_model_filepath = str(optimized_path)
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})


def _ops(model):
    return [n.op_type for n in model.graph.node]


def _steps(a, b, step):
    """|a - b| in quantization steps."""
    return np.abs(a.astype(np.float64) - b) / np.broadcast_to(step, a.shape)


@pytest.mark.parametrize("relu", [True, False])
def test_activation_fake_quantize_becomes_q_dq(tmp_path, relu):
    x = ov_parameter([None, 3, 8, 8], name="x")
    s = np.float32(1) * S
    per_channel = False
    lo, hi = (0 * s, 255 * s) if relu else (-128 * s, 127 * s)
    xml = ov_save(tmp_path / "a.xml", qm.fake_quantize(x, lo, hi), [x], compress_to_fp16=True)
    conv = _convert(xml, "qdq")
    model = conv.to_model_proto()
    assert _ops(model)[:2] == ["QuantizeLinear", "DequantizeLinear"] and "Round" not in _ops(model)
    assert conv.summary[0].startswith("1 of 1 FakeQuantize")
    zp = next(t for t in model.graph.initializer if "zero_point" in t.name)
    assert zp.data_type == onnx.TensorProto.UINT8
    assert set(onnx.numpy_helper.to_array(zp).reshape(-1)) == ({0} if relu else {128})
    data = np.random.default_rng(0).uniform(-3, 3, (16, 3, 8, 8)).astype(np.float32) * (s.max() / S)
    data.flat[:3] = [lo.min(), hi.max(), (hi.max() + lo.min()) / 2]  # the ends and a tie
    got = _run(model, data)[0]
    exact = _run(_convert(xml, "exact").to_model_proto(), data)[0]
    steps = _steps(got, exact, s)
    assert steps.max() <= 1 + 1e-3 and np.mean(steps < 1e-3) >= 0.999
    want = run_openvino(xml, {"x": data})[0]
    assert np.mean(_steps(got, want, s) < 1e-3) >= 0.999


def test_weights_are_stored_int8_per_output_channel(tmp_path):
    w = np.random.default_rng(1).standard_normal((8, 4, 3, 3)).astype(np.float32)
    x = ov_parameter([1])
    xml = ov_save(tmp_path / "w.xml", [qm.weight_fq(w, compress=True), x], [x])
    model = _convert(xml, "qdq").to_model_proto()
    int8 = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert len(int8) == 1 and list(int8[0].dims) == [8, 4, 3, 3]
    q = onnx.numpy_helper.to_array(int8[0])
    assert q.min() >= -127 and q.max() <= 127 and q.min() == -127 or q.max() == 127
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear")
    assert len(dq.input) == 2 and dq.attribute[0].i == 0  # symmetric: no zero point; axis 0
    feed = np.zeros(1, np.float32)
    got = _run(model, feed)[0]
    exact = _run(_convert(xml, "exact").to_model_proto(), feed)[0]
    # the same levels; (q - zp) * s is 0 where fma(q, s, -127 s') leaves an ulp of the range
    np.testing.assert_allclose(got, exact, rtol=1e-6, atol=1e-6 * np.abs(exact).max())
    assert np.array_equal(got == 0, np.abs(exact) <= 1e-6 * np.abs(exact).max())


def test_symmetric_mode_keeps_only_zero_points_of_zero(tmp_path, capsys):
    x = ov_parameter([None, 4])
    signed = qm.fake_quantize(x, -128 * S, 127 * S)
    unsigned = qm.fake_quantize(ops.relu(x), 0 * S, 255 * S)
    xml = ov_save(tmp_path / "s.xml", [signed, unsigned], [x])
    conv = _convert(xml, "qdq-symmetric")
    model = conv.to_model_proto()
    assert _ops(model).count("QuantizeLinear") == 1 and "Round" in _ops(model)
    zp = next(t for t in model.graph.initializer if "zero_point" in t.name)
    assert zp.data_type == onnx.TensorProto.INT8 and not onnx.numpy_helper.to_array(zp).any()
    assert conv.summary == ["1 of 2 FakeQuantize layer(s) became QuantizeLinear/DequantizeLinear (weights "
                            "stored int8: 0); the others stay exact float emulation",
                            "1 FakeQuantize layer(s) could not be made symmetric (int8, zero point 0) exactly"]
    assert main(["convert", str(xml), "-o", str(tmp_path / "s.onnx"), "--quantized", "qdq-symmetric"]) == 0
    assert "could not be made symmetric" in capsys.readouterr().err


@pytest.mark.parametrize("levels, ranges", [
    (16, (-8 * S, 7 * S, -8 * S, 7 * S)),  # not 8-bit
    (256, (-128 * S, 127 * S, -1.0, 1.0)),  # output range != input range
    (256, (-100.3 * S, 154.7 * S, -100.3 * S, 154.7 * S)),  # zero is not a level
])
def test_what_does_not_fit_stays_exact(tmp_path, levels, ranges):
    x = ov_parameter([None, 4])
    lo, hi, olo, ohi = (ops.constant(np.float32(r)) for r in ranges)
    xml = ov_save(tmp_path / "n.xml", ops.fake_quantize(x, lo, hi, olo, ohi, levels), [x])
    conv = _convert(xml, "qdq")
    assert "QuantizeLinear" not in _ops(conv.to_model_proto())
    assert conv.summary[0].startswith("0 of 1 FakeQuantize")
    assert _ops(conv.to_model_proto()) == _ops(_convert(xml, "exact").to_model_proto())


def test_resnet_runs_int8_kernels_and_matches_openvino(tmp_path):
    """onnxruntime's optimized graph of the hand-built INT8 ResNet-style IR has QLinearConv
    nodes, and its quantized feature map is within one step of OpenVINO's; the share of equal
    elements is measured against the float emulation (see the module docstring). The IRs NNCF
    itself writes: test_quantization_nncf.py."""
    xml = qm.resnet(tmp_path / "r.xml", blocks=1)
    x = np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32)
    conv = _convert(xml, "qdq")
    assert conv.summary[0].startswith("10 of 10 FakeQuantize") and "weights stored int8: 4" in conv.summary[0]
    got = _run(conv.to_model_proto(), x, tmp_path / "opt.onnx")
    optimized = _ops(onnx.load(tmp_path / "opt.onnx"))
    assert optimized.count("QLinearConv") == 3 and "QLinearAdd" in optimized
    want = run_openvino(xml, {"x": x})
    assert np.mean(_steps(got[1], want[1], S) <= 1 + 1e-3) >= 0.995
    exact = _run(_convert(xml, "exact").to_model_proto(), x)
    assert np.mean(_steps(got[1], exact[1], S) <= 1 + 1e-3) >= 0.98
    assert np.abs(got[0] - want[0]).max() <= 0.05 * np.abs(want[0]).max()


def test_single_quantized_conv_is_within_one_step_of_openvino(tmp_path):
    xml = qm.resnet(tmp_path / "c.xml", blocks=0)
    x = np.random.default_rng(1).standard_normal((4, 3, 32, 32)).astype(np.float32)
    got = _run(_convert(xml, "qdq").to_model_proto(), x)[1]
    steps = _steps(got, run_openvino(xml, {"x": x})[1], S)
    assert steps.max() <= 1 + 1e-3 and np.mean(steps < 1e-3) >= 0.999


def test_transformer_block_weights_stored_transposed_for_int8_matmuls(tmp_path):
    """MatMul(transpose_b) of a quantized weight: the int8 initializer is stored transposed (no
    Transpose between DequantizeLinear and MatMul), so onnxruntime runs integer MatMuls."""
    xml = qm.transformer_block(tmp_path / "t.xml", tokens=16, dim=32, heads=2)
    model = _convert(xml, "qdq").to_model_proto()
    int8 = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) == 2]
    assert sorted(tuple(t.dims) for t in int8) == [(32, 32)] * 4 + [(32, 128), (128, 32)]
    x = np.random.default_rng(2).standard_normal((2, 16, 32)).astype(np.float32)
    got = _run(model, x, tmp_path / "opt.onnx")[0]
    assert "MatMulIntegerToFloat" in _ops(onnx.load(tmp_path / "opt.onnx"))
    want = run_openvino(xml, {"x": x})[0]
    assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()  # measured: equal


@pytest.mark.parametrize("per_group", [1, 2])
def test_group_convolution_filters_stored_in_conv_layout(tmp_path, per_group):
    """GroupConvolution filters [G, C/G, 1, k, k] with per-channel ranges [G, C/G, 1, 1, 1]: the
    int8 initializer is stored as [C, 1, k, k] (no Reshape before the Conv), so onnxruntime runs
    QLinearConv; depthwise (C/G = 1) and two channels per group."""
    groups = 8
    w = np.random.default_rng(3).standard_normal((groups, per_group, 1, 3, 3)).astype(np.float32)
    hi = np.abs(w).reshape(groups, per_group, -1).max(axis=2).reshape(groups, per_group, 1, 1, 1)
    x = ov_parameter([None, groups, 10, 10])
    wq = qm.fake_quantize(ops.convert(ops.constant(w.astype(np.float16)), np.float32), -hi, hi, 255)
    y = ops.group_convolution(qm.activation_fq(x, 3.0, False), wq, [1, 1], [1, 1], [1, 1], [1, 1])
    xml = ov_save(tmp_path / "g.xml", qm.activation_fq(ops.relu(y), 4.0, True), [x])
    model = _convert(xml, "qdq").to_model_proto()
    int8 = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT8 and len(t.dims) == 4]
    assert [list(t.dims) for t in int8] == [[groups * per_group, 1, 3, 3]] and "Reshape" not in _ops(model)
    data = np.random.default_rng(4).standard_normal((2, groups, 10, 10)).astype(np.float32)
    got = _run(model, data, tmp_path / "opt.onnx")[0]
    assert "QLinearConv" in _ops(onnx.load(tmp_path / "opt.onnx"))
    exact = _run(_convert(xml, "exact").to_model_proto(), data)[0]
    steps = _steps(got, exact, S)
    assert steps.max() <= 1 + 1e-3 and np.mean(steps < 1e-3) >= 0.99


def test_weights_varying_along_two_axes_without_a_consumer_layout(tmp_path):
    """Ranges along two neighbouring axes and no consumer that re-lays the filters: per axis on
    the flattened axes, then Reshape back (exact levels)."""
    w = np.random.default_rng(5).standard_normal((3, 2, 4)).astype(np.float32)
    hi = np.abs(w).max(axis=2, keepdims=True)
    x = ov_parameter([1])
    xml = ov_save(tmp_path / "w2.xml", [qm.fake_quantize(ops.constant(w), -hi, hi, 255), x], [x])
    model = _convert(xml, "qdq").to_model_proto()
    assert _ops(model)[:2] == ["DequantizeLinear", "Reshape"]
    feed = np.zeros(1, np.float32)
    got, exact = _run(model, feed)[0], _run(_convert(xml, "exact").to_model_proto(), feed)[0]
    np.testing.assert_allclose(got, exact, rtol=1e-6, atol=1e-6 * np.abs(exact).max())


# -- per-channel activations (Open Model Zoo's FP16-INT8 IRs): exact float emulation --------
C = 4
PER_CHANNEL = np.array([1.0, 2.0, 0.5, 1.5], np.float32)


def _act(t, per_channel=False, relu=False, axis=1, rank=4):
    shape = [1] * rank
    shape[axis] = C
    s = (PER_CHANNEL.reshape(shape) if per_channel else np.float32(1)) * S
    return qm.fake_quantize(t, 0 * s if relu else -128 * s, 255 * s if relu else 127 * s)


def _conv(t, seed, groups=0):
    w = np.random.default_rng(seed).standard_normal((C, 1 if groups else C, 3, 3)).astype(np.float32)
    if groups:
        hi = np.abs(w).reshape(C, -1).max(axis=1).reshape(C, 1, 1, 1, 1)
        wq = qm.fake_quantize(ops.constant(w.reshape(C, 1, 1, 3, 3)), -hi, hi, 255)
        return ops.group_convolution(t, wq, [1, 1], [1, 1], [1, 1], [1, 1])
    y = ops.convolution(t, qm.weight_fq(w, compress=True), [1, 1], [1, 1], [1, 1], [1, 1])
    return ops.add(y, ops.constant(np.linspace(-0.2, 0.2, C, dtype=np.float32).reshape(1, C, 1, 1)))


def _matmul(t):
    w = np.random.default_rng(7).standard_normal((8, C)).astype(np.float32)
    flat = ops.reshape(t, ops.constant(np.array([0, -1, C])), True)
    return _act(ops.matmul(_act(flat, True, axis=2, rank=3), qm.weight_fq(w, compress=False), False, True))


PER_CHANNEL_PATTERNS = {  # name: (graph on x [N, C, 8, 8], how many FakeQuantize stay exact)
    "conv_output": (lambda x: _act(_conv(_act(x), 1), True), 1),
    "conv_output_relu": (lambda x: _act(ops.relu(_conv(_act(x), 1)), True, relu=True), 1),
    "conv_chain": (lambda x: _act(_conv(_act(_conv(_act(x), 1), True), 2)), 1),
    "group_conv_input": (lambda x: _act(_conv(_act(x, True), 3, groups=True), True), 2),
    "avg_pool": (lambda x: _act(ops.avg_pool(_act(x, True), [1, 1], [0, 0], [0, 0], [2, 2], True), True), 2),
    "sigmoid": (lambda x: _act(ops.sigmoid(_act(x, True)), True, relu=True), 2),
    "add": (lambda x: _act(ops.add(_act(x, True), _act(ops.relu(x), True, relu=True)), True), 3),
    "matmul_input": (_matmul, 1),
}


@pytest.mark.parametrize("mode", ["qdq", "qdq-symmetric"])
@pytest.mark.parametrize("pattern", sorted(PER_CHANNEL_PATTERNS))
def test_per_channel_activations_run_with_default_optimizations(tmp_path, pattern, mode):
    """Activation FakeQuantize with ranges per channel ([1, C, 1, 1]) after or before a Conv,
    GroupConvolution, AvgPool, Sigmoid, Add or MatMul: a per-axis QuantizeLinear there is fused by
    onnxruntime's default optimizations into QLinearConv (and the like), whose kernels take scalar
    activation parameters only, and the first run failed ("IsScalarOr1ElementVector(Y_zero_point)
    was false"). They stay exact float emulation, the per-tensor ones around them become QDQ, and
    the model runs with ORT_ENABLE_ALL within one step of the exact mode."""
    make, exact_count = PER_CHANNEL_PATTERNS[pattern]
    x = ov_parameter([None, C, 8, 8], name="x")
    xml = ov_save(tmp_path / "p.xml", make(x), [x], compress_to_fp16=True)
    conv = _convert(xml, mode)
    assert f"{exact_count} FakeQuantize layer(s) on activations vary per channel" in " ".join(conv.summary)
    data = np.random.default_rng(8).standard_normal((2, C, 8, 8)).astype(np.float32)
    opts = ort.SessionOptions()
    assert opts.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    got = _run(conv.to_model_proto(), data)[0]
    exact = _run(_convert(xml, "exact").to_model_proto(), data)[0]
    step = S * PER_CHANNEL.max()
    steps = np.abs(got.astype(np.float64) - exact) / step
    assert steps.max() <= 1 + 1e-3 and np.mean(steps < 1e-3) >= 0.98


def test_per_channel_conv_output_matches_openvino(tmp_path):
    """The Open Model Zoo detector pattern (Conv -> per-channel FakeQuantize) through the CLI:
    converted with --quantized qdq (the verification runs it), then run and compared with
    OpenVINO."""
    make, _ = PER_CHANNEL_PATTERNS["conv_output"]
    x = ov_parameter([1, C, 8, 8], name="x")
    xml = ov_save(tmp_path / "d.xml", make(x), [x], compress_to_fp16=True)
    assert main(["convert", str(xml), "-o", str(tmp_path / "d.onnx"), "--quantized", "qdq"]) == 0
    data = np.random.default_rng(9).standard_normal((1, C, 8, 8)).astype(np.float32)
    sess = ort.InferenceSession(str(tmp_path / "d.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": data})[0]
    steps = np.abs(got.astype(np.float64) - run_openvino(xml, {"x": data})[0]) / (S * PER_CHANNEL.reshape(1, C, 1, 1))
    assert steps.max() <= 1 + 1e-3 and np.mean(steps < 1e-3) >= 0.99
