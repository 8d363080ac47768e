"""Selftest cases of LSTMSequence-5, GRUSequence-5, RNNSequence-5, LSTMCell-1/-4, GRUCell-3 and
RNNCell-1. Compared with the oracle within
the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, ir_build, ov_build, param

GATES = {"lstm": 4, "gru": 3, "rnn": 1}


def _seq(kind, direction, lens, *, batch=3, seq=4, size=3, hidden=5, lbr=False, clip=0.0,
         dynamic=False):
    def make(ops):
        rng = np.random.default_rng(5)
        nd, g = (2 if direction == "bidirectional" else 1), GATES[kind]
        b, s = (None, None) if dynamic else (batch, seq)
        x = param(ops, [b, s, size], name="x")
        states = [param(ops, [b, nd, hidden], name=n) for n in (("h0", "c0") if kind == "lstm" else ("h0",))]
        shapes = [(nd, g * hidden, size), (nd, g * hidden, hidden), (nd, (g + lbr) * hidden)]
        w, r, bias = (ops.constant((rng.standard_normal(sh) * 0.5).astype(np.float32)) for sh in shapes)
        lengths = ops.constant(np.array(lens, np.int32))
        if kind == "lstm":
            node = ops.lstm_sequence(x, *states, lengths, w, r, bias, hidden, direction, clip=clip)
        elif kind == "gru":
            node = ops.gru_sequence(x, *states, lengths, w, r, bias, hidden, direction, clip=clip,
                                    linear_before_reset=lbr)
        else:
            node = ops.rnn_sequence(x, *states, lengths, w, r, bias, hidden, direction, clip=clip)
        names = ("Y", "Ho", "Co")
        return [(out, names[i]) for i, out in enumerate(node.outputs())], [x, *states]
    return make


def _shapes(kind, nd=1, batch=3, seq=4, hidden=5):
    out = {"Y": (batch, nd, seq, hidden), "Ho": (batch, nd, hidden)}
    return {**out, "Co": (batch, nd, hidden)} if kind == "lstm" else out


def _cell(kind, version, *, batch=3, size=3, hidden=5, lbr=False, clip=0.0, peephole=False, dynamic=False):
    def make(ops):
        mod = importlib.import_module(f"openvino.opset{version}")
        rng = np.random.default_rng(6)
        g = GATES[kind]
        b = None if dynamic else batch
        x = param(ops, [b, size], name="x")
        states = [param(ops, [b, hidden], name=n) for n in (("h0", "c0") if kind == "lstm" else ("h0",))]
        shapes = [(g * hidden, size), (g * hidden, hidden), ((g + lbr) * hidden,)] + [(3 * hidden,)] * peephole
        consts = [ops.constant((rng.standard_normal(sh) * 0.5).astype(np.float32)) for sh in shapes]
        if kind == "lstm":
            node = mod.lstm_cell(x, *states, *consts[:3], hidden, clip=clip)
            if peephole:
                from openvino.utils.node_factory import NodeFactory

                node = NodeFactory("opset1").create(
                    "LSTMCell", [v.output(0) for v in (x, *states, *consts)],
                    {"hidden_size": hidden, "activations": ["sigmoid", "tanh", "tanh"], "activations_alpha": [],
                     "activations_beta": [], "clip": clip, "input_forget": False, "weights_format": "fico"})
        elif kind == "gru":
            node = mod.gru_cell(x, *states, *consts, hidden, clip=clip, linear_before_reset=lbr)
        else:
            node = mod.rnn_cell(x, *states, *consts, hidden, ["tanh"], [], [], clip)
        return [(out, name) for out, name in zip(node.outputs(), ("Ho", "Co"))], [x, *states]
    return make


def _rnn_cell3(w):
    """RNNCell with version="opset3", as older IR writes it (OpenVINO reads it as RNNCell-1)."""
    rng = np.random.default_rng(7)
    x, h = w.parameter((2, 3), "f32", "x"), w.parameter((2, 4), "f32", "h0")
    consts = [w.const((rng.standard_normal(sh) * 0.5).astype(np.float32)) for sh in ((4, 3), (4, 4), (4,))]
    y = w.layer("RNNCell", "opset3", [x, h, *consts], {"hidden_size": 4, "activations": ["relu"], "clip": 0.0},
                [("f32", (2, 4))], out_names=["Ho"])[0]
    w.result(y, "Ho")


_DYNAMIC = {"x": (3, 4, 3), "h0": (3, 2, 5), "c0": (3, 2, 5)}


CASES = [
    Case("lstm/forward-short-rows", ("LSTMSequence", "opset5"), ov_build(_seq("lstm", "forward", [4, 2, 1])),
         exact=False, expect=_shapes("lstm")),
    Case("lstm/bidirectional-clip", ("LSTMSequence", "opset5"),
         ov_build(_seq("lstm", "bidirectional", [4, 3, 0], clip=0.4)), exact=False, expect=_shapes("lstm", 2)),
    Case("lstm/f16-compressed-weights", ("LSTMSequence", "opset5"),
         ov_build(_seq("lstm", "reverse", [3, 2], batch=2, seq=3, size=64, hidden=16), compress=True),
         exact=False, expect=_shapes("lstm", 1, 2, 3, 16)),
    Case("lstm/dynamic-batch-seq-short-rows", ("LSTMSequence", "opset5"),
         ov_build(_seq("lstm", "bidirectional", [4, 2, 1], dynamic=True)), shapes=_DYNAMIC, exact=False,
         openvino_deviates="OpenVINO's CPU plugin ignores sequence_lengths when the batch or sequence "
                           "dim is dynamic: short rows run to the end"),
    Case("gru/reverse-short-rows", ("GRUSequence", "opset5"), ov_build(_seq("gru", "reverse", [4, 1, 3])),
         exact=False, expect=_shapes("gru")),
    Case("gru/bidirectional-linear-before-reset", ("GRUSequence", "opset5"),
         ov_build(_seq("gru", "bidirectional", [4, 2, 3], lbr=True)), exact=False, expect=_shapes("gru", 2)),
    Case("gru/f16-linear-before-reset-clip", ("GRUSequence", "opset5"),
         ov_build(_seq("gru", "forward", [3, 3], batch=2, seq=3, size=96, hidden=16, lbr=True, clip=0.5),
                  compress=True), exact=False, expect=_shapes("gru", 1, 2, 3, 16)),
    Case("rnn/bidirectional-short-rows", ("RNNSequence", "opset5"),
         ov_build(_seq("rnn", "bidirectional", [4, 2, 1])), exact=False, expect=_shapes("rnn", 2)),
    Case("rnn/forward-clip", ("RNNSequence", "opset5"), ov_build(_seq("rnn", "forward", [4, 4, 4], clip=0.3)),
         exact=False, expect=_shapes("rnn")),
    Case("lstm_cell4/clip", ("LSTMCell", "opset4"), ov_build(_cell("lstm", 4, clip=0.6)), exact=False,
         expect={"Ho": (3, 5), "Co": (3, 5)}),
    Case("lstm_cell4/f16-compressed-dynamic", ("LSTMCell", "opset4"),
         ov_build(_cell("lstm", 4, size=32, hidden=8, dynamic=True), compress=True), exact=False,
         shapes={"x": (2, 32), "h0": (2, 8), "c0": (2, 8)}),
    Case("lstm_cell1/peepholes", ("LSTMCell", "opset1"), ov_build(_cell("lstm", 1, peephole=True)), exact=False),
    Case("gru_cell3/linear-before-reset", ("GRUCell", "opset3"), ov_build(_cell("gru", 3, lbr=True)), exact=False),
    Case("gru_cell3/clip", ("GRUCell", "opset3"), ov_build(_cell("gru", 3, clip=0.5)), exact=False),
    Case("rnn_cell/tanh", ("RNNCell", "opset1"), ov_build(_cell("rnn", 3)), exact=False, expect={"Ho": (3, 5)}),
    Case("rnn_cell/opset3-relu", ("RNNCell", "opset3"), ir_build(_rnn_cell3), exact=False, expect={"Ho": (2, 4)}),
]
