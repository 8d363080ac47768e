"""Oracle of GatherTree-1, the spec's pseudocode batch by batch and beam by beam: walk the parent
beams back from the last step of the sequence (``min(MAX_TIME, max_seq_len[b])``), fill
``end_token`` past it and after the first ``end_token`` inside it."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("GatherTree", "opset1")
def gather_tree1(layer, inputs):
    steps, parents, lengths, end = inputs
    if steps.ndim != 3 or parents.shape != steps.shape or lengths.shape != steps.shape[1:2]:
        raise InvalidLayer(layer, f"shapes {steps.shape}, {parents.shape}, {lengths.shape} do not fit")
    end = np.asarray(end).reshape(-1)[0]
    time, batch, width = steps.shape
    out = np.full(steps.shape, end, steps.dtype)
    for b in range(batch):
        for beam in range(width):
            last = min(time, int(lengths[b]))
            if last <= 0:
                continue
            out[last - 1, b, beam] = steps[last - 1, b, beam]
            parent = int(parents[last - 1, b, beam])
            for level in reversed(range(last - 1)):
                if not 0 <= parent < width:
                    raise InvalidLayer(layer, f"parent beam {parent} is outside [0, {width})")
                out[level, b, beam] = steps[level, b, parent]
                parent = int(parents[level, b, parent])
            finished = False
            for t in range(last):
                if finished:
                    out[t, b, beam] = end
                elif out[t, b, beam] == end:
                    finished = True
    return [out]
