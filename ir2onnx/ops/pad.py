"""Pad-1 and Pad-12 (pads_begin / pads_end / pad_value constant or known at run time).

constant / edge / reflect -> Pad (mode, constant pad_value; i16/u16, which onnxruntime's CPU Pad
lacks, through a Cast to i32/u32 and back); symmetric (which ONNX lacks) ->
Concat of reversed Slices per padded axis. Negative pads (Pad-12) crop: the positive part is
padded first and the crop is a Slice afterwards, so reflections refer to the original edges, as
in the spec's mixed-pads examples. Pads known only at run time (swin's window padding) take the
same path in the graph: Cast to int64, Max(pads, 0) -> Pad, then Slice by Min(pads, 0) (Pad-12).
Symmetric padding by run-time pads: a Gather per axis of mirrored indices (Range, Where).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, foldable
from ._common.shapes import INT64_MAX, as_int64, dims_of, i64

INT64_MIN = -INT64_MAX - 1
_PAD_WIDER = {"i16": TensorProto.INT32, "u16": TensorProto.UINT32}  # exact round trips
_NARROW = {TensorProto.INT32: TensorProto.INT16, TensorProto.UINT32: TensorProto.UINT16}


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
    if mode != "constant":
        value_v = None  # (OpenVINO writes a pad_value for every mode; only 'constant' uses it)
    _check_value(layer, data, value_v)
    if not (begin_v.is_const and end_v.is_const):
        return [_run_time_pads(ctx, layer, data, begin_v, end_v, mode, value_v, allow_negative)]
    begins, ends = const_ints(layer, begin_v, "pads_begin"), const_ints(layer, end_v, "pads_end")
    if len(begins) != rank or len(ends) != rank:
        raise InvalidLayer(layer, f"pads_begin {begins} and pads_end {ends} need {rank} values (the data rank)")
    if not allow_negative and min(begins + ends, default=0) < 0:
        raise InvalidLayer(layer, f"Pad-1 pads must not be negative, got {begins} and {ends}")
    limit = {"reflect": 1, "symmetric": 0}.get(mode)
    for axis, (b, e, d) in enumerate(zip(begins, ends, data.shape)):
        if d is None:  # (reflect/symmetric pads must fit the run-time dim, as OpenVINO requires)
            continue
        if limit is not None and max(b, e) > d - limit:
            raise InvalidLayer(layer, f"{mode} pads {b}, {e} exceed dim {axis} of size {d} (at most {d - limit})")
        if mode == "edge" and d == 0 and (b > 0 or e > 0):
            raise InvalidLayer(layer, f"edge padding of the empty dim {axis}")
        if b + d + e < 0:
            raise InvalidLayer(layer, f"pads {b}, {e} crop more than dim {axis} of size {d}")
    if foldable(data) and (value_v is None or foldable(value_v)):
        value = np.asarray(value_v.value()).reshape(-1)[0] if value_v is not None else 0
        return [_np_pad(np.asarray(data.value()), begins, ends, mode, value)]
    return [_emit(ctx, data, begins, ends, mode, value_v)]


def _check_value(layer, data, value_v) -> None:
    if value_v is not None:
        if value_v.etype != data.etype:
            raise InvalidLayer(layer, f"pad_value is {value_v.etype.name} but data is {data.etype.name}")
        if value_v.shape is not None and int(np.prod(value_v.shape)) != 1:
            raise InvalidLayer(layer, f"pad_value must be a scalar, got shape {list(value_v.shape)}")


def _scalar(g, value_v):
    """pad_value as ONNX Pad's scalar constant_value."""
    if value_v is None:
        return None
    return value_v if value_v.shape == () else g.Reshape(value_v, g.const([], np.int64, "scalar_shape"))


def _onnx_pad(g, x, pads, value_v, mode: str):
    """ONNX Pad of the data Value ``x``; onnxruntime's CPU Pad lacks i16/u16, so those go through
    i32/u32 (exact)."""
    value = _scalar(g, value_v) if mode == "constant" else None
    wide = _PAD_WIDER.get(x.etype.name)
    if wide is None:
        return g.Pad(x, pads, value, mode=mode)
    x, value = g.Cast(x, to=wide), None if value is None else g.Cast(value, to=wide)
    return g.Cast(g.Pad(x, pads, value, mode=mode), to=_NARROW[wide])


def _run_time_pads(ctx, layer, data, begin_v, end_v, mode, value_v, allow_negative: bool):
    """Pads known at run time: Max(pads, 0) -> Pad; Pad-12 then crops by the negative pads (Slice
    from -min(begin, 0) to min(end, 0), or to the end where that is 0)."""
    rank = len(data.shape)
    for v, what in ((begin_v, "pads_begin"), (end_v, "pads_end")):
        if v.shape is not None and (len(v.shape) != 1 or v.shape[0] not in (None, rank)):
            raise InvalidLayer(layer, f"{what} of shape {list(v.shape)} does not fit data of rank {rank}")
    g = ctx.b
    begins, ends = as_int64(g, begin_v), as_int64(g, end_v)
    if mode == "symmetric":
        return _symmetric_gather(g, data, begins, ends, rank)
    zero = i64(g, [0])
    x = _onnx_pad(g, data, g.Max(g.Concat(begins, ends, axis=0), zero), value_v, mode)
    if not allow_negative:  # Pad-1: pads are never negative
        return x
    starts = g.Neg(g.Min(begins, zero))
    stops = g.Where(g.Less(ends, zero), ends, i64(g, [INT64_MAX]))
    return g.Slice(x, starts, stops, i64(g, list(range(rank))))


def _symmetric_gather(g, data, begins, ends, rank: int):
    """Symmetric padding by run-time pads (ONNX's Pad has no symmetric mode): per axis, Gather of
    the indices -b .. d+e-1 mirrored into the dim (i < 0: -i-1; i >= d: 2d-1-i); a negative pad
    starts or stops the range inside the dim, which is the crop."""
    x = data
    one = i64(g, 1)
    for axis in range(rank):
        at = i64(g, [axis])
        b = g.Squeeze(g.Gather(begins, at, axis=0), i64(g, [0]))
        e = g.Squeeze(g.Gather(ends, at, axis=0), i64(g, [0]))
        d = g.Squeeze(dims_of(g, data, axis, axis + 1), i64(g, [0]))
        idx = g.Range(g.Neg(b), g.Add(d, e), one)
        idx = g.Where(g.Less(idx, i64(g, 0)), g.Sub(g.Neg(idx), one), idx)
        idx = g.Where(g.GreaterOrEqual(idx, d), g.Sub(g.Sub(g.Add(d, d), one), idx), idx)
        x = g.Gather(x, idx, axis=axis)
    return x


def _emit(ctx, data, begins, ends, mode, value_v):
    g = ctx.b
    grow_b, grow_e = [max(b, 0) for b in begins], [max(e, 0) for e in ends]
    x = data
    if any(grow_b) or any(grow_e):
        if mode == "symmetric":
            x = _symmetric(g, x, grow_b, grow_e)
        else:
            x = _onnx_pad(g, x, i64(g, grow_b + grow_e, "pads"), value_v, mode)
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
