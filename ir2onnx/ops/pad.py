"""Pad-1 and Pad-12 with constant pads_begin / pads_end.

constant / edge / reflect -> Pad (mode, constant pad_value; i16/u16, which onnxruntime's CPU Pad
lacks, through a Cast to i32/u32 and back); symmetric (which ONNX lacks) ->
Concat of reversed Slices per padded axis. Negative pads (Pad-12) crop: the positive part is
padded first and the crop is a Slice afterwards, so reflections refer to the original edges, as
in the spec's mixed-pads examples.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import const_ints, foldable
from ..lowering.registry import lowers
from ..lowering.shapes import INT64_MAX, i64

INT64_MIN = -INT64_MAX - 1
_PAD_WIDER = {"i16": TensorProto.INT32, "u16": TensorProto.UINT32}  # exact round trips


def _symmetric(g, x, begins: list[int], ends: list[int]):
    for axis, (b, e) in enumerate(zip(begins, ends)):
        if b == 0 and e == 0:
            continue
        parts = []
        if b:  # x[b-1::-1] along axis
            parts.append(g.Slice(x, i64(g, [b - 1]), i64(g, [INT64_MIN]), i64(g, [axis]), i64(g, [-1])))
        parts.append(x)
        if e:  # x[-1:-e-1:-1] along axis
            parts.append(g.Slice(x, i64(g, [-1]), i64(g, [-e - 1]), i64(g, [axis]), i64(g, [-1])))
        x = g.Concat(*parts, axis=axis)
    return x


def _np_pad(x: np.ndarray, begins, ends, mode: str, value) -> np.ndarray:
    grow = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends)]
    kw = {"constant_values": value} if mode == "constant" else {}
    y = np.pad(x, grow, mode={"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}.get(mode, "constant"), **kw)
    crop = tuple(slice(-min(b, 0), y.shape[i] + min(e, 0)) for i, (b, e) in enumerate(zip(begins, ends)))
    return y[crop]


def _pad(ctx, layer, inputs, allow_negative: bool):
    data, begin_v, end_v = inputs[:3]
    value_v = inputs[3] if len(inputs) > 3 else None
    mode = str(layer.attrs["pad_mode"]).lower()
    if data.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    rank = len(data.shape)
    begins, ends = const_ints(layer, begin_v, "pads_begin"), const_ints(layer, end_v, "pads_end")
    if len(begins) != rank or len(ends) != rank:
        raise InvalidLayer(layer, f"pads_begin {begins} and pads_end {ends} need {rank} values (the data rank)")
    if not allow_negative and min(begins + ends, default=0) < 0:
        raise InvalidLayer(layer, f"Pad-1 pads must not be negative, got {begins} and {ends}")
    if mode != "constant":
        value_v = None  # (OpenVINO writes a pad_value for every mode; only 'constant' uses it)
    limit = {"reflect": 1, "symmetric": 0}.get(mode)
    for axis, (b, e, d) in enumerate(zip(begins, ends, data.shape)):
        if d is None:
            if mode in ("reflect", "symmetric") and (b > 0 or e > 0):
                raise UnsupportedLayer(layer, f"{mode} padding of dynamic dim {axis} is not supported")
            continue
        if limit is not None and max(b, e) > d - limit:
            raise InvalidLayer(layer, f"{mode} pads {b}, {e} exceed dim {axis} of size {d} (at most {d - limit})")
        if mode == "edge" and d == 0 and (b > 0 or e > 0):
            raise InvalidLayer(layer, f"edge padding of the empty dim {axis}")
        if b + d + e < 0:
            raise InvalidLayer(layer, f"pads {b}, {e} crop more than dim {axis} of size {d}")
    if value_v is not None:
        if value_v.etype != data.etype:
            raise InvalidLayer(layer, f"pad_value is {value_v.etype.name} but data is {data.etype.name}")
        if value_v.shape is not None and int(np.prod(value_v.shape)) != 1:
            raise InvalidLayer(layer, f"pad_value must be a scalar, got shape {list(value_v.shape)}")
    if foldable(data) and (value_v is None or foldable(value_v)):
        value = np.asarray(value_v.value()).reshape(-1)[0] if value_v is not None else 0
        return [_np_pad(np.asarray(data.value()), begins, ends, mode, value)]
    return [_emit(ctx, data, begins, ends, mode, value_v)]


def _emit(ctx, data, begins, ends, mode, value_v):
    g = ctx.b
    grow_b, grow_e = [max(b, 0) for b in begins], [max(e, 0) for e in ends]
    x = data
    if any(grow_b) or any(grow_e):
        if mode == "symmetric":
            x = _symmetric(g, x, grow_b, grow_e)
        else:
            value = None
            if mode == "constant" and value_v is not None:
                value = value_v if value_v.shape == () else g.Reshape(value_v, g.const([], np.int64, "scalar_shape"))
            wide = _PAD_WIDER.get(data.etype.name)  # onnxruntime's CPU Pad lacks i16/u16: i32/u32
            if wide is not None:
                x, value = g.Cast(x, to=wide), None if value is None else g.Cast(value, to=wide)
            x = g.Pad(x, i64(g, grow_b + grow_e, "pads"), value, mode=mode)
            if wide is not None:
                x = g.Cast(x, to=data.etype.onnx)
    if min(begins + ends) < 0:
        axes = [i for i, (b, e) in enumerate(zip(begins, ends)) if b < 0 or e < 0]
        starts = [-min(begins[i], 0) for i in axes]
        stops = [ends[i] if ends[i] < 0 else INT64_MAX for i in axes]
        x = g.Slice(x, i64(g, starts), i64(g, stops), i64(g, axes))
    return x


@lowers("Pad", "opset1")
def pad_1(ctx, layer, inputs):
    """Pad-1 -> Pad (constant, edge, reflect) or Slice, Concat (symmetric)."""
    return _pad(ctx, layer, inputs, allow_negative=False)


@lowers("Pad", "opset12")
def pad_12(ctx, layer, inputs):
    """Pad-12 -> Pad (constant, edge, reflect) or Slice, Concat (symmetric), then Slice for
    negative pads (crops)."""
    return _pad(ctx, layer, inputs, allow_negative=True)
