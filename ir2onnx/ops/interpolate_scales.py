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

Measured limit (onnxruntime 1.32): nearest with half_pixel at a coordinate within one float
rounding of a tie ((3 + 0.5) / 0.6999999 - 0.5 = 4.5000005) picks the other neighbour than
OpenVINO (as if the scale were 0.7): the selection there follows onnxruntime's own arithmetic.

Which axes move is known at run time only: onnxruntime itself refuses, when it runs, scales that
move axes its Resize cannot interpolate (OpenVINO's ONNX frontend writes scales for every axis,
1 for N and C): an error then, never a wrong value.

pytorch_half_pixel switches its coordinate rule where an output length is 1; that switch would
see the extended length, so it is refused here.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.shapes import i64

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
