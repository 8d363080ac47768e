"""Selftest cases of CTCLoss-4: a CTC recognizer's training loss on run-time logits, with the
default blank (C - 1) and with blank_index 0 as a constant, unique; arithmetic (logsumexp)."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

LABELS = np.array([[0, 1, 0, 0, 2, 1], [2, 2, 1, 0, 0, 0]], np.int32)


def _ctc(blank, **attrs):
    def make(ops):
        import openvino.opset4 as ops4

        x = param(ops, [None, 6, 4], np.float32)
        args = [x, const(ops, np.array([6, 5], np.int32), np.int32),
                const(ops, LABELS if blank is None else np.where(LABELS == 0, 3, LABELS), np.int32),
                const(ops, np.array([5, 3], np.int32), np.int32)]
        if blank is not None:
            args.append(const(ops, np.array(blank, np.int32), np.int32))
        return [(ops4.ctc_loss(*args, **attrs), "y")], [x]
    return make


CASES = [
    Case("ctc_loss/default-blank", ("CTCLoss", "opset4"), ov_build(_ctc(None)), exact=False,
         shapes={"x": (2, 6, 4)}, expect={"y": (2,)}, source="CTCLoss-4: CTC recognizers' training loss"),
    Case("ctc_loss/blank0-unique-no-merge", ("CTCLoss", "opset4"),
         ov_build(_ctc(0, ctc_merge_repeated=False, unique=True)), exact=False, shapes={"x": (2, 6, 4)}),
]
