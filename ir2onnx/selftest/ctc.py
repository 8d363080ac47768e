"""Selftest cases of CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6, bit for bit, with a
hand-worked decoding (blank C - 1 = 3; steps 1 1 3 1 2 2 0)."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

STEPS = [1, 1, 3, 1, 2, 2, 0]


def _scores():
    s = np.zeros((len(STEPS), 4), np.float32)
    s[np.arange(len(STEPS)), STEPS] = 1.0
    return s


def _decoder(merge):
    def make(ops):
        import openvino.opset1 as o1

        data, mask = param(ops, [7, 1, 4], name="data"), param(ops, [7, 1], name="mask")
        return [(o1.ctc_greedy_decoder(data, mask, merge), "decoded")], [data, mask]
    return make


def _seq_len(merge, blank=None):
    def make(ops):
        import openvino.opset6 as o6

        data, lengths = param(ops, [1, 7, 4], name="data"), param(ops, [1], np.int32, "lengths")
        b = None if blank is None else ops.constant(np.array(blank, np.int32))
        node = o6.ctc_greedy_decoder_seq_len(data, lengths, b, merge)
        return [(node.output(0), "decoded"), (node.output(1), "length")], [data, lengths]
    return make


MASKED = {"data": _scores()[:, None, :], "mask": np.array([[1], [1], [1], [1], [1], [0], [1]], np.float32)}
LENGTHS = {"data": _scores()[None], "lengths": np.array([7], np.int32)}

CASES = [
    Case("ctc_greedy_decoder/merge", ("CTCGreedyDecoder", "opset1"), ov_build(_decoder(True)), inputs=MASKED,
         expect={"decoded": np.array([1, 1, 2, -1, -1, -1, -1], np.float32).reshape(1, 7, 1, 1)}),
    Case("ctc_greedy_decoder/no-merge", ("CTCGreedyDecoder", "opset1"), ov_build(_decoder(False)), inputs=MASKED,
         expect={"decoded": np.array([1, 1, 1, 2, -1, -1, -1], np.float32).reshape(1, 7, 1, 1)}),
    Case("ctc_seq_len/merge", ("CTCGreedyDecoderSeqLen", "opset6"), ov_build(_seq_len(True)), inputs=LENGTHS,
         expect={"decoded": np.array([[1, 1, 2, 0, -1, -1, -1]], np.int32), "length": np.array([4], np.int32)}),
    Case("ctc_seq_len/blank-1-no-merge", ("CTCGreedyDecoderSeqLen", "opset6"), ov_build(_seq_len(False, 1)),
         inputs=LENGTHS, expect={"decoded": np.array([[3, 2, 2, 0, -1, -1, -1]], np.int32),
                                 "length": np.array([4], np.int32)}),
]
