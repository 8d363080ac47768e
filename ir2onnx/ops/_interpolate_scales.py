"""Interpolate with scales known only at run time (shape_calculation_mode=scales).

OpenVINO's output size is trunc(float(d) * (scale + 1e-6)) (a scale of 1 keeps d), where ONNX
Resize makes trunc(d * scale); and OpenVINO's coordinates use the scale itself (measured with
the CPU plugin: Resize given the sizes, which derives the scale as size / d, is off by whole
elements), except align_corners, which uses the lengths on both sides. So:

* align_corners: the size rule computed in the graph, then Resize's sizes;
* half_pixel, asymmetric: the coordinates x / scale (- shifts) do not depend on the input length,
  only the clamping at its end does: the input is extended at the end of each axis by edge
  copies (Pad edge: a clamped read gives the same value), enough for Resize(scales) to reach
  OpenVINO's size, which a Slice then keeps.

Nearest does not go through Resize at all: onnxruntime's Resize picks, at a coordinate within one
float rounding of a tie ((3 + 0.5) / 0.6999999 - 0.5 = 4.5000005, measured with 1.32), the other
neighbour than OpenVINO (as if the scale were 0.7). The graph computes each source index in f32
as OpenVINO's reference does, rounds it by nearest_mode, and Gathers (:func:`nearest_by_gather`):
exact for every element type and coordinate mode.

Which axes move is known at run time only: onnxruntime itself refuses, when it runs, scales that
move axes its Resize cannot interpolate (OpenVINO's ONNX frontend writes scales for every axis,
1 for N and C): an error then, never a wrong value.

pytorch_half_pixel switches its coordinate rule where an output length is 1; with linear or cubic
that switch would see the extended length, so it is refused there (nearest handles it).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ._common.shapes import as_int64, i64

F32, I64 = 1, 7


def check_run_time_scales(layer, ctm: str) -> None:
    if ctm == "pytorch_half_pixel":
        raise UnsupportedLayer(layer, "scales known only at run time with pytorch_half_pixel are not supported "
                                      "(an output length of 1 switches its coordinate rule, which the "
                                      "extended input of this lowering hides)")


def ov_sizes(g, data: str, scales: str, axes: list[int]) -> str:
    """int64 [len(axes)]: OpenVINO's output size per axis, trunc(f32(d) * (scale + 1e-6))."""
    dims = g.Gather(g.Shape(data), i64(g, axes), axis=0)
    n = g.Cast(g.Floor(g.Mul(g.Cast(dims, to=F32), g.Add(scales, g.const([1e-6], np.float32, "eps")))), to=I64)
    return g.Where(g.Equal(scales, g.const([1], np.float32, "one")), dims, n)


def resize_by_scales(g, data: str, scales: str, axes: list[int], rank: int, attrs: dict) -> str:
    """Pad(edge) at the end of each axis -> Resize(scales) -> Slice to OpenVINO's sizes."""
    sizes = ov_sizes(g, data, scales, axes)
    dims = g.Gather(g.Shape(data), i64(g, axes), axis=0)
    # extra input elements so that trunc((d + extra) * scale) >= OpenVINO's size (one spare)
    need = g.Cast(g.Ceil(g.Div(g.Cast(sizes, to=F32), scales)), to=I64)
    extra = g.Add(g.Max(g.Sub(need, dims), i64(g, [0])), i64(g, [1]))
    pads = g.ScatterElements(i64(g, [0] * (2 * rank)), i64(g, [rank + a for a in axes]), extra, axis=0)
    full = g.ScatterElements(g.const(np.ones(rank, np.float32), np.float32, "ones"), i64(g, axes), scales, axis=0)
    out = g.Resize(g.Pad(data, pads, mode="edge"), None, full, **attrs)
    return g.Slice(out, i64(g, [0] * len(axes)), sizes, i64(g, axes))


def nearest_by_gather(g, data, scales: str, axes: list[int], ctm: str, rounding: str) -> str:
    """Nearest with run-time scales, exactly: per axis, OpenVINO's size, the source coordinate of
    each output index in f32 (as OpenVINO's reference computes it), rounded by nearest_mode,
    clamped into the input, and a Gather (data movement, so any element type)."""
    sizes = ov_sizes(g, data, scales, axes)
    f = lambda v: g.const(np.float32(v), np.float32, "f")  # noqa: E731
    x = data
    for j, axis in enumerate(axes):
        at = i64(g, [j])
        n = g.Squeeze(g.Gather(sizes, at, axis=0), i64(g, [0]))
        d = g.Squeeze(g.Gather(g.Shape(data), i64(g, [axis]), axis=0), i64(g, [0]))
        s = g.Squeeze(g.Gather(scales, at, axis=0), i64(g, [0]))
        o = g.Cast(g.Range(i64(g, 0), n, i64(g, 1)), to=F32)
        if ctm in ("half_pixel", "pytorch_half_pixel"):
            c = g.Sub(g.Div(g.Add(o, f(0.5)), s), f(0.5))
            if ctm == "pytorch_half_pixel":  # an output of length 1 reads index 0
                c = g.Where(g.Greater(n, i64(g, 1)), c, f(0))
        elif ctm == "asymmetric":
            c = g.Div(o, s)
        else:  # align_corners
            ratio = g.Div(g.Mul(o, g.Cast(g.Sub(d, i64(g, 1)), to=F32)), g.Cast(g.Max(g.Sub(n, i64(g, 1)), i64(g, 1)), to=F32))
            c = g.Where(g.Greater(n, i64(g, 1)), ratio, f(0))
        lo = g.Floor(c)
        frac = g.Sub(c, lo)
        if rounding == "floor":
            idx = lo
        elif rounding == "ceil":
            idx = g.Ceil(c)
        else:  # ties: to the floor (round_prefer_floor) or away from zero (round_prefer_ceil)
            up = g.Greater(frac, f(0.5))
            if rounding == "round_prefer_ceil":
                up = g.Or(up, g.And(g.Equal(frac, f(0.5)), g.Greater(c, f(0))))
            idx = g.Where(up, g.Add(lo, f(1)), lo)
        idx = g.Cast(idx, to=I64)
        idx = g.Min(g.Max(idx, i64(g, 0)), g.Sub(d, i64(g, 1)))
        x = g.Gather(x, idx, axis=axis)
    return x


def run_time_scales(layer, g, scales_v, count: int) -> str:
    """The f32 name of scales known only at run time (their first ``count`` values)."""
    if scales_v.etype.name not in ("f16", "f32", "f64") or scales_v.shape is None or len(scales_v.shape) != 1 \
            or scales_v.shape[0] is None:
        raise UnsupportedLayer(layer, "run-time scales must be a 1-D float tensor of known length")
    if scales_v.shape[0] < count:
        raise InvalidLayer(layer, f"{scales_v.shape[0]} scales for {count} axes")
    scales = scales_v.name if scales_v.etype.name == "f32" else g.Cast(scales_v, to=1)
    if scales_v.shape[0] > count:
        scales = g.Slice(scales, i64(g, [0]), i64(g, [count]), i64(g, [0]))
    return scales


def runtime_sizes(layer, g, size_v, count: int) -> str:
    """The int64 name of sizes known only at run time (their first ``count`` values)."""
    if not size_v.etype.is_integer or size_v.shape is None or len(size_v.shape) != 1 or size_v.shape[0] is None:
        raise UnsupportedLayer(layer, "run-time sizes must be a 1-D integer tensor of known length")
    if size_v.shape[0] < count:
        raise InvalidLayer(layer, f"{size_v.shape[0]} sizes for {count} axes")
    sizes = as_int64(g, size_v)
    if size_v.shape[0] > count:
        sizes = g.Slice(sizes, i64(g, [0]), i64(g, [count]), i64(g, [0]))
    return sizes
