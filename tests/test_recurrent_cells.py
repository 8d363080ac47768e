"""LSTMCell-1/-4, GRUCell-3 and RNNCell-1 on OpenVINO-written IR: every output (Ho, Co) of
onnxruntime against the float64 oracle and the OpenVINO runtime, within rtol/atol 1e-5 (f16:
2e-3): activations, clip, linear_before_reset, peepholes, run-time and f16-compressed weights,
dynamic batch."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset3 as ops3
import openvino.opset4 as ops4
import pytest
from openvino.utils.node_factory import NodeFactory

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

GATES = {"lstm": 4, "gru": 3, "rnn": 1}
B, I, H = 3, 4, 5


def _ir(tmp_path, kind, *, acts=None, clip=0.0, lbr=False, runtime=False, compress=False, dynamic=False,
        dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    g = GATES[kind]
    b = None if dynamic else B
    x = ov_parameter([b, I], dtype, "x")
    states = [ov_parameter([b, H], dtype, n) for n in (("h0", "c0") if kind == "lstm" else ("h0",))]
    shapes = {"W": (g * H, I), "R": (g * H, H), "B": ((g + lbr) * H,)}
    values = {k: (rng.standard_normal(s) * 0.5).astype(dtype) for k, s in shapes.items()}
    weights = ([ov_parameter(list(s), dtype, k) for k, s in shapes.items()] if runtime
               else [ops1.constant(values[k]) for k in shapes])
    if kind == "lstm":
        node = ops4.lstm_cell(x, *states, *weights, H, activations=acts or ["sigmoid", "tanh", "tanh"], clip=clip)
    elif kind == "gru":
        node = ops3.gru_cell(x, *states, *weights, H, activations=acts or ["sigmoid", "tanh"], clip=clip,
                             linear_before_reset=lbr)
    else:
        node = ops3.rnn_cell(x, *states, *weights, H, acts or ["tanh"], [], [], clip)
    params = [x, *states] + (weights if runtime else [])
    xml = ov_save(tmp_path / f"{kind}.xml", list(node.outputs()), params, compress_to_fp16=compress)
    return xml, values


def _feeds(kind, dtype=np.float32, batch=B, seed=1, values=None):
    rng = np.random.default_rng(seed)
    f = {"x": rng.standard_normal((batch, I)), "h0": rng.standard_normal((batch, H)) * 0.5}
    if kind == "lstm":
        f["c0"] = rng.standard_normal((batch, H))
    f.update(values or {})
    return {k: v.astype(dtype) for k, v in f.items()}


def _agree(xml, feeds, tol=dict(rtol=1e-5, atol=1e-5), openvino=True):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds) if openvino else want
    assert len(got) == len(want)
    for gv, wv, ov in zip(got, want, ov_out):
        assert gv.dtype == wv.dtype and gv.shape == wv.shape
        np.testing.assert_allclose(gv, wv, **tol)
        np.testing.assert_allclose(gv, ov, **tol)
    return got


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("clip", [0.0, 0.7])
def test_cells(tmp_path, kind, clip):
    xml, _ = _ir(tmp_path, kind, clip=clip)
    got = _agree(xml, _feeds(kind))
    assert all(o.shape == (B, H) for o in got) and len(got) == (2 if kind == "lstm" else 1)


@pytest.mark.parametrize("kind, acts", [("lstm", ["relu", "sigmoid", "tanh"]), ("gru", ["tanh", "relu"]),
                                        ("rnn", ["sigmoid"]), ("rnn", ["relu"])])
def test_cell_activations(tmp_path, kind, acts):
    xml, _ = _ir(tmp_path, kind, acts=acts, seed=3)
    _agree(xml, _feeds(kind, seed=4))


@pytest.mark.parametrize("lbr", [False, True])
def test_gru_cell_linear_before_reset(tmp_path, lbr):
    xml, _ = _ir(tmp_path, "gru", lbr=lbr, seed=5)
    _agree(xml, _feeds("gru", seed=6))
    assert len(convert(xml).graph.initializer[2].dims) == 2  # B as ONNX's [1, 6 * hidden]


def test_gru_cell_without_bias(tmp_path):
    """B is optional in the spec (OpenVINO's own builder insists on it: IRWriter writes the IR)."""
    rng = np.random.default_rng(8)
    w = IRWriter("gru_nob")
    x, h = w.parameter((B, I), "f32", "x"), w.parameter((B, H), "f32", "h0")
    consts = [w.const((rng.standard_normal(s) * 0.5).astype(np.float32)) for s in ((3 * H, I), (3 * H, H))]
    y = w.layer("GRUCell", "opset3", [x, h, *consts], {"hidden_size": H}, [("f32", (B, H))], out_names=["Ho"])[0]
    w.result(y, "Ho")
    _agree(w.save(tmp_path / "gru.xml"), _feeds("gru", seed=9), openvino=False)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_cell_run_time_weights(tmp_path, kind):
    xml, values = _ir(tmp_path, kind, runtime=True, lbr=kind == "gru", seed=10)
    _agree(xml, _feeds(kind, seed=11, values=values))
    if kind != "rnn":  # the gate reordering runs in Split/Concat
        assert "Split" in [n.op_type for n in convert(xml).graph.node]


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cell_f16_compressed_weights_dynamic_batch(tmp_path, kind):
    xml, _ = _ir(tmp_path, kind, compress=True, dynamic=True, seed=12)
    assert "f16" in xml.read_text() or "FP16" in xml.read_text()
    for batch in (1, 4):
        _agree(xml, _feeds(kind, batch=batch, seed=13))


def test_lstm_cell_f16_data(tmp_path):
    xml, _ = _ir(tmp_path, "lstm", dtype=np.float16, seed=14)
    got = _agree(xml, _feeds("lstm", np.float16, seed=15), dict(rtol=2e-3, atol=2e-3))
    assert got[0].dtype == np.float16


def _lstm_cell1(tmp_path, fmt="fico", peephole=True, input_forget=False, seed=16):
    rng = np.random.default_rng(seed)
    x, h, c = ov_parameter([B, I], np.float32, "x"), ov_parameter([B, H], np.float32, "h0"), \
        ov_parameter([B, H], np.float32, "c0")
    shapes = [(4 * H, I), (4 * H, H), (4 * H,)] + [(3 * H,)] * peephole
    consts = [ops1.constant((rng.standard_normal(s) * 0.5).astype(np.float32)) for s in shapes]
    node = NodeFactory("opset1").create(
        "LSTMCell", [v.output(0) for v in (x, h, c, *consts)],
        {"hidden_size": H, "activations": ["sigmoid", "tanh", "tanh"], "activations_alpha": [],
         "activations_beta": [], "clip": 0.0, "input_forget": input_forget, "weights_format": fmt})
    return ov_save(tmp_path / "lstm1.xml", list(node.outputs()), [x, h, c])


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_cell1_peepholes(tmp_path, peephole):
    xml = _lstm_cell1(tmp_path, peephole=peephole)
    _agree(xml, _feeds("lstm", seed=17))


def test_lstm_cell1_weights_format_and_refusals(tmp_path):
    """weights_format other than fico: onnxruntime matches the oracle (OpenVINO's reference
    implements fico only) and differs from the same weights read as fico."""
    feeds = _feeds("lstm", seed=18)
    ifco = run_onnx(_lstm_cell1(tmp_path, fmt="ifco"), feeds)
    oracle = list(evaluate(ir2onnx.load_ir(tmp_path / "lstm1.xml"), feeds).values())
    for g, w in zip(ifco, oracle):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    fico = run_onnx(_lstm_cell1(tmp_path, fmt="fico"), feeds)
    assert not np.allclose(ifco[1], fico[1], atol=1e-3)
    with pytest.raises(UnsupportedLayer, match="input_forget"):
        convert(_lstm_cell1(tmp_path, input_forget=True))


def test_cell_errors(tmp_path):
    xml, _ = _ir(tmp_path, "rnn", acts=["relu"])
    text = xml.read_text().replace('activations="relu"', 'activations="softsign"')
    bad = tmp_path / "bad.xml"
    bad.write_text(text)
    (tmp_path / "bad.bin").write_bytes((tmp_path / "rnn.bin").read_bytes())
    with pytest.raises(UnsupportedLayer, match="softsign"):
        convert(bad)
    text = xml.read_text().replace('hidden_size="5"', 'hidden_size="0"')
    bad.write_text(text)
    with pytest.raises(InvalidLayer, match="hidden_size"):
        convert(bad)


def test_f64_refused_at_conversion(tmp_path):
    """onnxruntime's LSTM/GRU/RNN refuse double at run time, so f64 cells and sequences are refused
    when converting, naming the reason."""
    xml, _ = _ir(tmp_path, "gru", dtype=np.float64)
    with pytest.raises(UnsupportedLayer, match="runs f16 and f32 only"):
        convert(xml)
