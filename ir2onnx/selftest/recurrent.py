"""Selftest cases of LSTMSequence-5, GRUSequence-5 and RNNSequence-5. Compared with the oracle within
the per-type tolerances of :mod:`ir2onnx.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

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
]
