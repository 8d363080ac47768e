"""Oracle of CTCLoss-4 from the spec's definition, by enumerating paths (float64): the target is
reduced (unique: first occurrences in order; else with preprocess_collapse_repeated: a label equal
to its predecessor dropped); every path of logit_length classes is decoded (with
ctc_merge_repeated runs of equal classes merged, then blanks dropped) and the probabilities
(softmax over classes at each step) of the paths that decode to the target are summed; the loss
is -log of the sum (inf when no path decodes to it). Meant for small C ** T."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

_LIMIT = 400_000  # paths per row


def _target(row, unique: bool, collapse: bool) -> tuple:
    out = []
    for v in row:
        if (unique and v in out) or (not unique and collapse and out and out[-1] == v):
            continue
        out.append(v)
    return tuple(out)


def _decode(path, blank: int, merge: bool) -> tuple:
    out, prev = [], None
    for c in path:
        if not (merge and c == prev) and c != blank:
            out.append(c)
        prev = c
    return tuple(out)


@oracle("CTCLoss", "opset4")
def ctc_loss4(layer, inputs):
    logits, logit_len, labels, label_len = inputs[:4]
    n, steps, classes = logits.shape
    blank = int(np.asarray(inputs[4]).reshape(-1)[0]) if len(inputs) > 4 else classes - 1
    merge = bool(layer.attrs.get("ctc_merge_repeated", True))
    unique = bool(layer.attrs.get("unique", False))
    collapse = bool(layer.attrs.get("preprocess_collapse_repeated", False))
    x = logits.astype(np.float64)
    logp = x - np.log(np.exp(x).sum(axis=2, keepdims=True))
    out = np.zeros(n)
    for b in range(n):
        length, count = int(logit_len[b]), int(label_len[b])
        if not 0 <= count <= length <= steps:
            raise InvalidLayer(layer, f"row {b}: label length {count}, logit length {length}, T {steps}")
        if classes ** length > _LIMIT:
            raise InvalidLayer(layer, f"the oracle enumerates {classes} ** {length} paths: too many")
        want = _target([int(v) for v in labels[b, :count]], unique, collapse)
        terms = [sum(logp[b, t, c] for t, c in enumerate(path))
                 for path in itertools.product(range(classes), repeat=length)
                 if _decode(path, blank, merge) == want]
        if not terms:
            out[b] = math.inf
            continue
        top = max(terms)
        out[b] = -(top + math.log(sum(math.exp(v - top) for v in terms)))
    return [out.astype(logits.dtype)]
