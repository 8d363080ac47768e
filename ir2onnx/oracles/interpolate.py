"""Oracles of Interpolate-1, Interpolate-4 and Interpolate-11 from the spec's reference algorithm: zero padding,
output sizes (sizes, or trunc(d * (scale + 1e-6)) as OpenVINO's shape inference), coordinates in
float32 as the reference computes them, then per output element a weighted sum over the
neighbours each mode defines (nearest: one; linear_onnx: two per axis, clamped coordinate;
linear: the triangle filter, renormalised over the neighbours inside the input; cubic: four per
axis with clamped indices). Sums in float64, rounded once."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle

F = np.float32


def _source_coordinate(layer, ctm: str, x: int, scale, out_len: int, in_len: int):
    """The resized index ``x`` in input coordinates (float32 arithmetic, as the reference)."""
    x, scale = F(x), F(scale)
    if ctm == "half_pixel":
        return (x + F(0.5)) / scale - F(0.5)
    if ctm == "pytorch_half_pixel":
        return (x + F(0.5)) / scale - F(0.5) if out_len > 1 else F(0)
    if ctm == "asymmetric":
        return x / scale
    if ctm == "tf_half_pixel_for_nn":
        return (x + F(0.5)) / scale
    if ctm == "align_corners":
        return F(0) if out_len == 1 else x * F(in_len - 1) / F(out_len - 1)
    raise InvalidLayer(layer, f"coordinate_transformation_mode {ctm}")


def _nearest_index(rounding: str, c, scale) -> int:
    c = float(c)
    if rounding == "round_prefer_floor":
        return math.floor(c) if c == int(c) + 0.5 else int(math.copysign(math.floor(abs(c) + 0.5), c))
    if rounding == "round_prefer_ceil":
        return int(math.copysign(math.floor(abs(c) + 0.5), c))  # half away from zero
    if rounding == "floor":
        return math.floor(c)
    if rounding == "ceil":
        return math.ceil(c)
    return math.ceil(c) if scale < 1 else int(c)  # simple


def _cubic_weight(d: float, a: float) -> float:
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    if d < 2:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return 0.0


def _taps(layer, mode: str, c, in_len: int, scale) -> list[tuple[int, float]]:
    """(input index, weight) pairs of one axis for source coordinate ``c``."""
    last = in_len - 1
    if mode == "nearest":
        i = _nearest_index(layer.attrs["nearest_mode"], c, scale)
        return [(min(max(i, 0), last), 1.0)]
    if mode == "linear_onnx":
        c = min(max(float(c), 0.0), float(last))
        i0 = min(int(c), last)
        i1 = min(i0 + 1, last)
        return [(i0, 1 - (c - i0)), (i1, c - i0)]
    if mode == "linear":
        centre = round(float(c))
        return [(i, max(0.0, 1 - abs(float(c) - i))) for i in range(centre - 2, centre + 3) if 0 <= i <= last]
    base = math.floor(float(c))
    t = float(c) - base
    a = float(layer.attrs["cube_coeff"])
    return [(min(max(base + k - 1, 0), last), _cubic_weight(t + 1 - k, a)) for k in range(4)]


def _output_size(layer, d: int, scale) -> int:
    if F(scale) == F(1):
        return d
    return int(F(d) * (F(scale) + F(1e-6)))


def _interpolate(layer, x: np.ndarray, sizes, scales, axes, use_scales: bool) -> list[np.ndarray]:
    a = layer.attrs
    mode = a["mode"]
    if mode in ("bilinear_pillow", "bicubic_pillow") or a["antialias"]:
        raise UnsupportedLayer(layer, "the oracle has no Pillow modes and no antialias")
    rank = x.ndim
    begins = (list(a["pads_begin"]) + [0] * rank)[:rank]
    ends = (list(a["pads_end"]) + [0] * rank)[:rank]
    if min(begins + ends, default=0) < 0:
        raise UnsupportedLayer(layer, "negative pads")
    x = np.pad(x, list(zip(begins, ends)))
    axes = list(range(rank)) if axes is None else [int(v) for v in np.asarray(axes).reshape(-1)]
    if any(not 0 <= v < rank for v in axes) or len(set(axes)) != len(axes):
        raise InvalidLayer(layer, f"axes {axes} must be distinct values in [0, {rank})")
    out_shape = list(x.shape)
    scale_of = {}
    values = np.asarray(scales if use_scales else sizes).reshape(-1)
    if values.size < len(axes):
        raise InvalidLayer(layer, f"{values.size} sizes/scales for {len(axes)} axes")
    for axis, v in zip(axes, values):
        if use_scales:
            scale_of[axis] = F(v)
            out_shape[axis] = _output_size(layer, x.shape[axis], v)
        else:
            out_shape[axis] = int(v)
            scale_of[axis] = F(int(v)) / F(x.shape[axis])
    if mode != "nearest" and x.dtype.kind != "f":
        raise UnsupportedLayer(layer, f"{mode} interpolation of {x.dtype}")
    ctm = a["coordinate_transformation_mode"]
    per_axis = []
    for axis in range(rank):
        if axis not in scale_of:
            per_axis.append([[(i, 1.0)] for i in range(out_shape[axis])])
            continue
        s = scale_of[axis]
        per_axis.append([_taps(layer, mode, _source_coordinate(layer, ctm, i, s, out_shape[axis], x.shape[axis]),
                               x.shape[axis], s) for i in range(out_shape[axis])])
    out = np.zeros(out_shape, x.dtype)
    for pos in itertools.product(*[range(d) for d in out_shape]):
        taps = [per_axis[axis][p] for axis, p in enumerate(pos)]
        if mode == "nearest":
            out[pos] = x[tuple(t[0][0] for t in taps)]
            continue
        total = wsum = 0.0
        for combo in itertools.product(*taps):
            w = math.prod(t[1] for t in combo)
            total += w * float(x[tuple(t[0] for t in combo)])
            wsum += w
        if mode == "linear":
            total = total / wsum if wsum else 0.0
        out[pos] = total
    return [out]


@oracle("Interpolate", "opset4")
def interpolate4(layer, inputs):
    x, sizes, scales = inputs[:3]
    axes = inputs[3] if len(inputs) > 3 else None
    return _interpolate(layer, x, sizes, scales, axes, layer.attrs["shape_calculation_mode"] == "scales")


@oracle("Interpolate", "opset11")
def interpolate11(layer, inputs):
    x, target = inputs[:2]
    axes = inputs[2] if len(inputs) > 2 else None
    return _interpolate(layer, x, target, target, axes, layer.attrs["shape_calculation_mode"] == "scales")


@oracle("Interpolate", "opset1")
def interpolate1(layer, inputs):
    """Interpolate-1 is run as OpenVINO runs it, as an Interpolate-4 in sizes mode with nearest_mode
    simple and cube_coeff -0.75; linear is linear_onnx below rank 5; coordinates align_corners
    when asked, half_pixel for linear modes without pads (but not on a 4-D tensor's axes {2, 3}),
    else asymmetric."""
    x, target = inputs[:2]
    a = layer.attrs
    if a["mode"] == "area":
        raise UnsupportedLayer(layer, "the oracle has no area mode")
    mode = a["mode"] if a["mode"] != "linear" or x.ndim == 5 else "linear_onnx"
    axes = [int(v) for v in a["axes"]]
    pads = list(a["pads_begin"]) + list(a["pads_end"])
    linear = mode in ("linear", "linear_onnx")
    ctm = ("align_corners" if a["align_corners"] else
           "half_pixel" if linear and not any(pads) and not (x.ndim == 4 and sorted(axes) == [2, 3]) else "asymmetric")
    v4 = dataclasses.replace(layer, attrs=dict(a, mode=mode, coordinate_transformation_mode=ctm,
                                               nearest_mode="simple", cube_coeff=-0.75))
    return _interpolate(v4, x, target, None, np.array(axes), False)
