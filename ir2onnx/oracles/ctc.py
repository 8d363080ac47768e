"""Oracles of CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6, step by step from OpenVINO's
operation specification: per sequence, the first arg-max class of each step, emitted unless it
is the blank or (merge_repeated) the previous step's class; the rest of the row is -1."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _best_path(rows, blank, merge):
    """Classes emitted for the steps ``rows`` (each a vector of class scores)."""
    out, prev = [], -1
    for scores in rows:
        best = 0
        for k in range(1, len(scores)):
            if scores[k] > scores[best]:
                best = k
        if best != blank and not (merge and best == prev):
            out.append(best)
        prev = best
    return out


@oracle("CTCGreedyDecoder", "opset1")
def ctc_greedy_decoder(layer, inputs):
    data, mask = np.asarray(inputs[0]), np.asarray(inputs[1])
    if data.ndim != 3 or mask.shape != data.shape[:2]:
        raise InvalidLayer(layer, "data must be [T, N, C] and sequence_mask [T, N]")
    steps, batch, classes = data.shape
    out = np.full((batch, steps, 1, 1), -1, data.dtype)
    for n in range(batch):
        length = 0
        while length < steps and mask[length, n] != 0:
            length += 1
        decoded = _best_path([data[t, n] for t in range(length)], classes - 1,
                             layer.attrs["ctc_merge_repeated"])
        out[n, :len(decoded), 0, 0] = decoded
    return [out]


@oracle("CTCGreedyDecoderSeqLen", "opset6")
def ctc_greedy_decoder_seq_len(layer, inputs):
    data, lengths = np.asarray(inputs[0]), np.asarray(inputs[1]).reshape(-1)
    if data.ndim != 3 or lengths.shape != data.shape[:1]:
        raise InvalidLayer(layer, "data must be [N, T, C] and sequence_length [N]")
    batch, steps, classes = data.shape
    blank = int(np.asarray(inputs[2]).reshape(-1)[0]) if len(inputs) > 2 else classes - 1
    types = [getattr(layer.attrs[a], "name", layer.attrs[a]) for a in ("classes_index_type", "sequence_length_type")]
    dtypes = [np.int32 if t == "i32" else np.int64 for t in types]
    out = np.full((batch, steps), -1, dtypes[0])
    counts = np.zeros(batch, dtypes[1])
    for n in range(batch):
        decoded = _best_path([data[n, t] for t in range(min(int(lengths[n]), steps))], blank,
                             layer.attrs["merge_repeated"])
        out[n, :len(decoded)] = decoded
        counts[n] = len(decoded)
    return [out, counts]
