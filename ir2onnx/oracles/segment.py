"""Oracle of SegmentMax-16, from the spec, segment by segment: the maximum of the data rows whose
segment id it is, or the fill value (0, or the type's lowest) for an empty segment; the output has
``num_segments`` rows (``max(segment_ids) + 1`` without it). The spec does not say how NaN and -inf
count; as OpenVINO's reference, each segment starts at the type's lowest value and takes
``x if acc < x else acc`` (NaN skipped, -inf gives the lowest value), and ids at or past
``num_segments`` are ignored."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _lowest(dtype):
    return np.iinfo(dtype).min if dtype.kind in "iu" else np.finfo(dtype).min


@oracle("SegmentMax", "opset16")
def segment_max16(layer, inputs):
    data, seg = inputs[:2]
    seg = [int(v) for v in seg.reshape(-1)]
    if len(seg) != data.shape[0]:
        raise InvalidLayer(layer, f"{len(seg)} segment ids for {data.shape[0]} data rows")
    if any(a > b for a, b in zip(seg, seg[1:])) or any(v < 0 for v in seg):
        raise InvalidLayer(layer, "segment_ids must be sorted and non-negative")
    num = int(np.asarray(inputs[2]).reshape(-1)[0]) if len(inputs) > 2 else (max(seg) + 1 if seg else 0)
    lowest = _lowest(data.dtype)
    fill = 0 if layer.attrs["fill_mode"] == "zero" else lowest
    out = np.full((num,) + data.shape[1:], fill, data.dtype)
    for k in range(num):
        members = [data[i] for i, s in enumerate(seg) if s == k]
        if not members:
            continue
        acc = np.full(data.shape[1:], lowest, data.dtype)
        for row in members:
            for pos in np.ndindex(*data.shape[1:]):
                if acc[pos] < row[pos]:
                    acc[pos] = row[pos]
        out[k] = acc
    return [out]
