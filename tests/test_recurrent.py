"""LSTMSequence-5, GRUSequence-5 and RNNSequence-5 on OpenVINO-written IR against the float64 oracle
and the OpenVINO runtime, every output (Y, Ho, Co), within rtol 1e-5 / atol 1e-5 (measured: at most
3e-7 with sigmoid/tanh, 2e-6 with relu, whose values grow).

OpenVINO's CPU plugin (2026.4.1) ignores sequence_lengths when the batch or sequence dim is
dynamic (it runs every row to the end); there the runtime is compared on full-length rows only,
and the short rows against the oracle (the spec: zeros past the length, Ho/Co after the last
valid step)."""
from __future__ import annotations

import numpy as np
import onnx
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)
GATES = {"lstm": 4, "gru": 3, "rnn": 1}
B, S, I, H = 3, 4, 3, 5


def _ir(tmp_path, kind, direction="forward", lens=(S, 2, 1), *, lbr=False, clip=0.0, acts=None,
        dims=(B, S, I, H), dynamic=False, compress=False, runtime=False, seed=0):
    """An IR of one sequence layer; inputs x, h0 (c0), and W/R/B too when ``runtime``."""
    batch, seq, size, hidden = dims
    rng = np.random.default_rng(seed)
    nd, g = (2 if direction == "bidirectional" else 1), GATES[kind]
    bdim, sdim = (None, None) if dynamic else (batch, seq)
    x = ov_parameter([bdim, sdim, size], name="x")
    states = [ov_parameter([bdim, nd, hidden], name=n) for n in (("h0", "c0") if kind == "lstm" else ("h0",))]
    shapes = {"W": (nd, g * hidden, size), "R": (nd, g * hidden, hidden), "B": (nd, (g + lbr) * hidden)}
    values = {k: (rng.standard_normal(s) * 0.5).astype(np.float32) for k, s in shapes.items()}
    weights = ([ov_parameter(list(s), name=k) for k, s in shapes.items()] if runtime
               else [ops.constant(values[k]) for k in shapes])
    kw = dict(activations=acts, clip=clip)
    lengths = ops.constant(np.array(lens, np.int32))
    if kind == "lstm":
        node = ops.lstm_sequence(x, *states, lengths, *weights, hidden, direction, **kw)
    elif kind == "gru":
        node = ops.gru_sequence(x, *states, lengths, *weights, hidden, direction, linear_before_reset=lbr, **kw)
    else:
        node = ops.rnn_sequence(x, *states, lengths, *weights, hidden, direction, **kw)
    for i, out in enumerate(node.outputs()):
        out.get_tensor().set_names({("Y", "Ho", "Co")[i]})
    params = [x, *states] + (weights if runtime else [])
    xml = ov_save(tmp_path / f"{kind}.xml", list(node.outputs()), params, compress_to_fp16=compress)
    feeds = {"x": rng.standard_normal((batch, seq, size)).astype(np.float32)}
    feeds.update({p.get_friendly_name(): rng.standard_normal((batch, nd, hidden)).astype(np.float32)
                  for p in states})
    if runtime:
        feeds.update(values)
    return xml, feeds


def _check(xml, feeds, ov_rows=None, opset=None):
    """ONNX vs oracle on everything, vs OpenVINO on ``ov_rows`` (all rows by default)."""
    got = run_onnx(xml, feeds, opset=opset)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    assert len(got) == len(want) == len(ov_out)
    for g, w, o, what in zip(got, want, ov_out, ("Y", "Ho", "Co")):
        assert g.shape == w.shape == o.shape and g.dtype == np.float32, what
        np.testing.assert_allclose(g, w, **TOL, err_msg=f"{what} vs oracle")
        rows = slice(None) if ov_rows is None else ov_rows
        np.testing.assert_allclose(g[rows], o[rows], **TOL, err_msg=f"{what} vs OpenVINO")
    return got


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_directions_and_short_sequences(tmp_path, kind, direction):
    xml, feeds = _ir(tmp_path, kind, direction)
    y, ho, *co = _check(xml, feeds)
    nd = 2 if direction == "bidirectional" else 1
    assert y.shape == (B, nd, S, H) and ho.shape == (B, nd, H) and len(co) == (kind == "lstm")
    assert not y[1, :, 2:].any() and not y[2, :, 1:].any()  # zeros past each row's length
    if direction == "forward":  # Ho is Y at the last valid step
        np.testing.assert_array_equal(ho[:, 0], y[[0, 1, 2], 0, [S - 1, 1, 0]])
    else:  # reverse runs end to start: Ho is Y at step 0
        np.testing.assert_array_equal(ho[:, -1], y[:, -1, 0])


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("lbr", [False, True])
def test_gru_linear_before_reset(tmp_path, lbr, direction):
    xml, feeds = _ir(tmp_path, "gru", direction, lbr=lbr)
    _check(xml, feeds)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_clip(tmp_path, kind):
    xml, feeds = _ir(tmp_path, kind, "bidirectional", clip=0.3, lbr=kind == "gru")
    feeds["x"] *= 4  # pre-activations well past the clip
    _check(xml, feeds)
    model = ir2onnx.convert(xml)
    assert [a.f for n in model.graph.node for a in n.attribute if a.name == "clip"] == [pytest.approx(0.3)]


@pytest.mark.parametrize("kind,acts", [("rnn", ["relu"]), ("gru", ["relu", "sigmoid"]),
                                       ("lstm", ["tanh", "relu", "sigmoid"])])
def test_activations(tmp_path, kind, acts):
    xml, feeds = _ir(tmp_path, kind, "bidirectional", acts=acts)
    _check(xml, feeds)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_zero_length_row(tmp_path, kind):
    """A row of length 0: Y and the final states are zeros (OpenVINO's runtime and ONNX's)."""
    xml, feeds = _ir(tmp_path, kind, "reverse", lens=(2, 0, S))
    outs = _check(xml, feeds)
    assert all(not o[1].any() for o in outs)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_dynamic_batch_and_seq(tmp_path, kind):
    xml, feeds = _ir(tmp_path, kind, "bidirectional", lens=(S, S, S), dynamic=True)
    _check(xml, feeds)
    xml, feeds = _ir(tmp_path, kind, "bidirectional", lens=(S, 2, 1), dynamic=True)
    _check(xml, feeds, ov_rows=[0])  # OpenVINO runs rows 1 and 2 to the end (module docstring)


@pytest.mark.parametrize("kind,lbr", [("lstm", False), ("gru", True), ("rnn", False)])
def test_f16_compressed_weights(tmp_path, kind, lbr):
    """Big f16 weights (Const -> Convert) are reordered in the file, stay f16, and nothing is
    stored twice: no dead Cast, every initializer used."""
    xml, feeds = _ir(tmp_path, kind, "bidirectional", lbr=lbr, dims=(2, 3, 100, 24), lens=(3, 2), compress=True)
    _check(xml, feeds)
    model = ir2onnx.convert(xml)
    used = {i for n in model.graph.node for i in n.input} | {o.name for o in model.graph.output}
    assert all(o in used for n in model.graph.node for o in n.output)
    assert all(t.name in used for t in model.graph.initializer)
    f16 = [tuple(t.dims) for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16]
    assert (2, GATES[kind] * 24, 100) in f16


@pytest.mark.parametrize("kind,lbr", [("lstm", False), ("gru", True), ("gru", False), ("rnn", False)])
def test_runtime_weights(tmp_path, kind, lbr):
    """W, R, B as model inputs: the gate blocks move by Split and Concat nodes."""
    xml, feeds = _ir(tmp_path, kind, "bidirectional", lbr=lbr, runtime=True)
    _check(xml, feeds)
    ops_used = {n.op_type for n in ir2onnx.convert(xml).graph.node}
    assert "Concat" in ops_used and ("Split" in ops_used) == (kind != "rnn")  # RNN: one gate


def test_opset14_and_full_lengths_omitted(tmp_path):
    xml, feeds = _ir(tmp_path, "lstm", "forward", lens=(S, S, S))
    _check(xml, feeds, opset=14)
    lstm = [n for n in ir2onnx.convert(xml, opset=14).graph.node if n.op_type == "LSTM"][0]
    assert lstm.input[4] == ""  # sequence_lens left out: every row is full length


def test_lstm_gate_order(tmp_path):
    """OpenVINO's blocks are f, i, c, o: forget closed, input and output open, so
    Co = tanh(0.5 x) and Ho = tanh(Co); any other reading of the order gives other values."""
    w = IRWriter()
    x = w.parameter([1, 1, 1], "f32", "x")
    h0, c0 = w.const(np.zeros((1, 1, 1), np.float32)), w.const(np.zeros((1, 1, 1), np.float32))
    big = 30.0
    wts = w.const(np.array([[[-big], [big], [0.5], [big]]], np.float32))
    lens = w.const(np.array([1], np.int64))
    outs = w.layer("LSTMSequence", "opset5", [x, h0, c0, lens, wts, w.const(np.zeros((1, 4, 1), np.float32)),
                                              w.const(np.zeros((1, 4), np.float32))],
                   {"hidden_size": 1, "direction": "forward", "activations": "sigmoid,tanh,tanh"},
                   [("f32", (1, 1, 1, 1)), ("f32", (1, 1, 1)), ("f32", (1, 1, 1))], out_names=["Y", "Ho", "Co"])
    for o in outs:
        w.result(o)
    xml = w.save(tmp_path / "gates.xml")
    feeds = {"x": np.array([[[1.0]]], np.float32)}
    y, ho, co = _check(xml, feeds)
    np.testing.assert_allclose(co.ravel(), [np.tanh(0.5)], rtol=1e-6)
    np.testing.assert_allclose(ho.ravel(), [np.tanh(np.tanh(0.5))], rtol=1e-6)


def _writer_layer(tmp_path, attrs, lens=(2,), w_rows=3 * H, hidden=H):
    w = IRWriter()
    x = w.parameter([1, 2, I], "f32", "x")
    h0 = w.parameter([1, 1, H], "f32", "h0")
    ins = [x, h0, w.const(np.array(lens, np.int32)), w.const(np.zeros((1, w_rows, I), np.float32)),
           w.const(np.zeros((1, w_rows, H), np.float32)), w.const(np.zeros((1, 3 * H), np.float32))]
    outs = w.layer("GRUSequence", "opset5", ins, {"hidden_size": hidden, "direction": "forward", **attrs},
                   [("f32", (1, 1, 2, H)), ("f32", (1, 1, H))])
    w.result(outs[0])
    w.result(outs[1])
    return w.save(tmp_path / "bad.xml")


@pytest.mark.parametrize("attrs,lens,rows,error,words", [
    ({"activations": "hardsigmoid,tanh"}, (2,), 3 * H, UnsupportedLayer, "hardsigmoid"),
    ({"activations": "sigmoid"}, (2,), 3 * H, InvalidLayer, "activations"),
    ({}, (3,), 3 * H, InvalidLayer, "sequence_lengths"),
    ({}, (2,), 4 * H, InvalidLayer, "W is"),
    ({"clip": -1.0}, (2,), 3 * H, InvalidLayer, "clip"),
])
def test_refused(tmp_path, attrs, lens, rows, error, words):
    xml = _writer_layer(tmp_path, attrs, lens, rows)
    with pytest.raises(error, match=words):
        ir2onnx.convert(xml)
    if error is InvalidLayer and words != "clip":  # the oracle validates like the spec
        feeds = {"x": np.zeros((1, 2, I), np.float32), "h0": np.zeros((1, 1, H), np.float32)}
        with pytest.raises(InvalidLayer):
            evaluate(ir2onnx.load_ir(xml), feeds)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_f16_layers_run_on_onnxruntime(tmp_path, kind):
    """f16 data and weights: ONNX LSTM/GRU/RNN in f16 (onnxruntime's CPU has them); within f16
    resolution of OpenVINO and of the float64 oracle. (f64 layers are refused at conversion:
    onnxruntime's CPU kernels refuse double at run time; tests/test_recurrent_cells.py.)"""
    rng = np.random.default_rng(3)
    g, nd = GATES[kind], 1
    x = ov_parameter([2, 3, I], np.float16, name="x")
    h0 = ops.constant(np.zeros((2, nd, H), np.float16))
    weights = [ops.constant((rng.standard_normal(s) * 0.5).astype(np.float16))
               for s in ((nd, g * H, I), (nd, g * H, H), (nd, g * H))]
    lengths = ops.constant(np.array([3, 2], np.int32))
    if kind == "lstm":
        node = ops.lstm_sequence(x, h0, h0, lengths, *weights, H, "forward")
    elif kind == "gru":
        node = ops.gru_sequence(x, h0, lengths, *weights, H, "forward")
    else:
        node = ops.rnn_sequence(x, h0, lengths, *weights, H, "forward")
    xml = ov_save(tmp_path / f"{kind}16.xml", [node.output(0)], [x])
    feeds = {"x": rng.standard_normal((2, 3, I)).astype(np.float16)}
    got = run_onnx(xml, feeds)[0]
    assert got.dtype == np.float16
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=5e-3, atol=5e-3)
