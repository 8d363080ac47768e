"""DetectionOutput's box decoding (the helper of :mod:`~ir2onnx.ops.detection_output`).

Everything is computed in f32, in the order OpenVINO's CPU plugin writes its arithmetic:

- the priors tensor ``[PB, 1 | 2, P * S]`` (PB = 1 or N; S = 4 when normalized, else 5 with an
  image id first) holds the prior corners ``xmin, ymin, xmax, ymax`` in row 0 and, unless
  variance_encoded_in_target, four variances per prior in row 1 (read at ``4 * p + j`` even when
  S = 5); not normalized: the corners are divided by input_width / input_height;
- not normalized: the first prior whose image id is -1 ends the prior list (later priors are
  never candidates);
- CORNER: ``box = prior + var * loc``; CENTER_SIZE: ``center = var01 * loc01 * size + prior_center``,
  ``size' = exp(var23 * loc23) * size``, ``box = center -/+ size' / 2`` (without variances the
  ``var`` factors are left out);
- clip_before_nms clamps to [0, 1]; with the two ARM inputs the priors are first decoded with
  arm_location, and those boxes (divided again by the image size when not normalized, as the
  runtime does) are the priors of the second decoding with box_logits.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ._common.shapes import i64

F32 = TensorProto.FLOAT


def f32(g, v: Value) -> str:
    """``v`` as f32 (f16/f32 inputs only)."""
    return v.name if v.etype.name == "f32" else g.Cast(v, to=F32)


def slice_last(g, x: str, start: int, end: int) -> str:
    return g.Slice(x, i64(g, [start]), i64(g, [end]), i64(g, [-1]))


class Priors:
    """The prior boxes ``[PB, P, 1, 4]``, their variances ``[PB, P, 1, 4]`` (or None) and the
    mask of priors before the first image id -1 (``[PB, 1, P]`` bool, or None when normalized)."""

    def __init__(self, g, layer, priors: Value, num_priors: int):
        a = layer.attrs
        size = 4 if a["normalized"] else 5
        rows = priors.shape[1]
        if rows not in (1, 2):
            raise InvalidLayer(layer, f"priors must be [PB, 1 or 2, P * {size}], got {priors.shape}")
        if not a["variance_encoded_in_target"] and rows != 2:
            raise InvalidLayer(layer, "priors need a second row of variances (variance_encoded_in_target is false)")
        if a["variance_encoded_in_target"] and rows == 2 and priors.shape[0] != 1:
            raise UnsupportedLayer(layer, "per-image priors with an unused variance row: OpenVINO strides them "
                                          "by one row")
        p = num_priors
        data = g.Reshape(f32(g, priors), i64(g, [-1, rows, p * size]))
        row0 = g.Reshape(slice_last(g, g.Gather(data, i64(g, 0), axis=1), 0, p * size), i64(g, [-1, p, 1, size]))
        boxes = slice_last(g, row0, size - 4, size)
        if not a["normalized"]:
            w, h = float(a["input_width"]), float(a["input_height"])
            self.scale = g.const([w, h, w, h], np.float32, "image_size")
            boxes = g.Div(boxes, self.scale)
            ids = g.Reshape(slice_last(g, row0, 0, 1), i64(g, [-1, 1, p]))
            ended = g.CumSum(g.Cast(g.Equal(ids, g.const(-1.0, np.float32)), to=F32), i64(g, 2, "axis"))
            self.active = g.Equal(ended, g.const(0.0, np.float32))
        else:
            self.scale, self.active = None, None
        self.boxes = boxes
        self.variances = None
        if not a["variance_encoded_in_target"]:
            row1 = g.Gather(data, i64(g, 1), axis=1)
            self.variances = g.Reshape(slice_last(g, row1, 0, 4 * p), i64(g, [-1, p, 1, 4]))


def decode(g, layer, pri: Priors, prior_boxes: str, loc: str) -> str:
    """Boxes ``[N, P, L, 4]`` from ``prior_boxes`` (``[PB|N, P, 1|L, 4]``) and ``loc`` (``[N, P, L, 4]``)."""
    a = layer.attrs
    if pri.variances is not None:
        loc = g.Mul(pri.variances, loc)  # var * loc, as the runtime multiplies
    if a["code_type"] == "caffe.PriorBoxParameter.CORNER":
        box = g.Add(prior_boxes, loc)
    else:
        p_min, p_max = slice_last(g, prior_boxes, 0, 2), slice_last(g, prior_boxes, 2, 4)
        size = g.Sub(p_max, p_min)
        two = g.const(2.0, np.float32)
        center = g.Div(g.Add(p_min, p_max), two)
        c = g.Add(g.Mul(slice_last(g, loc, 0, 2), size), center)
        half = g.Div(g.Mul(g.Exp(slice_last(g, loc, 2, 4)), size), two)
        box = g.Concat(g.Sub(c, half), g.Add(c, half), axis=-1)
    if a["clip_before_nms"]:
        box = g.Clip(box, g.const(0.0, np.float32), g.const(1.0, np.float32))
    return box


def decoded_boxes(g, layer, pri: Priors, loc: Value, arm_loc: Value | None, p: int, num_loc: int) -> str:
    """The decoded boxes ``[N, P, L, 4]`` (two stages with arm_location)."""
    shape = i64(g, [-1, p, num_loc, 4])
    loc4 = g.Reshape(f32(g, loc), shape)
    if arm_loc is None:
        return decode(g, layer, pri, pri.boxes, loc4)
    first = decode(g, layer, pri, pri.boxes, g.Reshape(f32(g, arm_loc), shape))
    if pri.scale is not None:
        first = g.Div(first, pri.scale)
    return decode(g, layer, pri, first, loc4)
