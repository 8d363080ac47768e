"""Interpolate-1, Interpolate-4 and Interpolate-11 with constant axes, constant or run-time scales or sizes ->
(Pad), Resize.

OpenVINO's modes map onto ONNX Resize exactly where the two define the same function:
nearest (round_prefer_floor, round_prefer_ceil, floor, ceil), linear_onnx and linear (without
antialias OpenVINO's triangle filter weighs the two neighbours like ONNX linear; positions
outside the input are dropped and the weights renormalised, which equals ONNX's clamping) and
cubic (cube_coeff -> cubic_coeff_a, exclude_outside=0: indices clamped to the edge). The
coordinate transformations half_pixel, pytorch_half_pixel, asymmetric and align_corners are
ONNX's. Refused: antialias, the Pillow modes, tf_half_pixel_for_nn (ONNX Resize-13+ dropped it),
nearest_mode=simple, negative pads, constant scales whose output size OpenVINO computes
differently from ONNX (OpenVINO: trunc(d * (scale + 1e-6)), ONNX: trunc(d * scale)). Scales known
only at run time: :mod:`.interpolate_scales`. Run-time sizes (FPN's "resize to the other map's size") go to
Resize's sizes input; every listed axis is then assumed to move (onnxruntime's layout rules).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints
from ._common.shapes import i64
from ._interpolate_scales import (check_run_time_scales, nearest_by_gather, ov_sizes, resize_by_scales,
                                 run_time_scales, runtime_sizes)

ONNX_MODE = {"nearest": "nearest", "linear": "linear", "linear_onnx": "linear", "cubic": "cubic"}
TRANSFORMS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")
ROUNDINGS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
NEAREST_TYPES = ("f32", "i32", "i8", "u8")  # onnxruntime's CPU Resize types
SCALE_EPS = np.float32(1e-6)


def ov_scaled_dim(dim: int, scale: np.float32) -> int:
    """OpenVINO's output size for a scale: trunc(float(d) * (scale + 1e-6)), 1.0 leaves d."""
    if scale == np.float32(1):
        return dim
    return int(np.float32(dim) * (np.float32(scale) + SCALE_EPS))


def _exact_for_any_dim(scale: np.float32) -> bool:
    """Integer scales and 1/2^k give the same size in OpenVINO and ONNX for every dim."""
    s = float(scale)
    if s >= 1:
        return s == int(s)
    inv = 1 / s
    return inv == int(inv) and int(inv) & (int(inv) - 1) == 0


def _check_attrs(layer):
    a = layer.attrs
    mode = a["mode"]
    if mode not in ONNX_MODE:
        raise UnsupportedLayer(layer, f"mode '{mode}' has no ONNX Resize counterpart")
    if a["antialias"]:
        raise UnsupportedLayer(layer, "antialias=true is not supported (ONNX Resize before opset 18 "
                                      "has none, and opset 18's filter is not OpenVINO's)")
    ctm = a["coordinate_transformation_mode"]
    if ctm not in TRANSFORMS:
        raise UnsupportedLayer(layer, f"coordinate_transformation_mode '{ctm}' is not supported "
                                      f"(ONNX Resize-13+ has: {', '.join(TRANSFORMS)})")
    if mode == "nearest" and a["nearest_mode"] not in ROUNDINGS:
        raise UnsupportedLayer(layer, f"nearest_mode '{a['nearest_mode']}' has no ONNX counterpart")
    return mode, ctm


def _pads(layer, rank: int) -> tuple[list[int], list[int]]:
    """pads_begin/pads_end resized to the rank (missing values are 0, extra ones ignored)."""
    begins = (list(layer.attrs["pads_begin"]) + [0] * rank)[:rank]
    ends = (list(layer.attrs["pads_end"]) + [0] * rank)[:rank]
    if min(begins + ends, default=0) < 0:
        raise UnsupportedLayer(layer, f"negative pads {begins}, {ends} are not supported")
    return begins, ends


def _axes(layer, axes_v, rank: int) -> list[int]:
    if axes_v is None:
        return list(range(rank))
    axes = const_ints(layer, axes_v, "axes", "onnxruntime's Resize accepts only some layouts of "
                                             "moving axes (and opset 18 takes axes as an attribute): they "
                                             "are checked at convert time")
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise InvalidLayer(layer, f"axes {axes} must be distinct values in [0, {rank})")
    return axes


def _scales(layer, scales_v, axes, padded, ctm):
    """The constant scales, and whether ONNX's size rule may differ from OpenVINO's (then the
    graph keeps OpenVINO's: :mod:`.interpolate_scales`; refused for pytorch_half_pixel)."""
    if not scales_v.is_const:
        raise UnsupportedLayer(layer, "scales known only at run time are not supported")
    scales = np.asarray(scales_v.value()).astype(np.float32).reshape(-1)
    if scales.size < len(axes):
        raise InvalidLayer(layer, f"{scales.size} scales for {len(axes)} axes")
    scales = scales[:len(axes)]
    try:
        _same_size_rule(layer, axes, scales, padded)
    except UnsupportedLayer:
        if ctm == "pytorch_half_pixel":
            raise
        return scales, True
    return scales, False


def _same_size_rule(layer, axes, scales, padded) -> None:
    for axis, s in zip(axes, scales):
        if not s > 0:
            raise InvalidLayer(layer, f"scale {s} for axis {axis} must be positive")
        d = padded[axis]
        if d is None:
            if not _exact_for_any_dim(s):
                raise UnsupportedLayer(layer, f"scale {s} on dynamic axis {axis}: OpenVINO's output size "
                                              "trunc(d*(scale+1e-6)) may differ from ONNX's trunc(d*scale)")
        elif ov_scaled_dim(d, s) != int(np.float32(d) * s):
            raise UnsupportedLayer(layer, f"scale {s} on axis {axis} of size {d}: OpenVINO makes "
                                          f"{ov_scaled_dim(d, s)} elements, ONNX Resize {int(np.float32(d) * s)}")


def _interpolate(ctx, layer, x, size_v, scales_v, axes_v, use_scales: bool):
    mode, ctm = _check_attrs(layer)
    name = x.etype.name if x.etype else "?"
    if mode != "nearest" and name not in ("f16", "f32"):
        raise UnsupportedLayer(layer, f"{mode} interpolation of {name} is not supported (f16, f32)")
    if mode == "nearest" and name not in NEAREST_TYPES + ("f16",):
        raise UnsupportedLayer(layer, f"nearest interpolation of {name} is not supported "
                                      f"(onnxruntime's Resize takes {', '.join(NEAREST_TYPES)})")
    ctx.onnx_type(layer, x.etype)
    if x.rank is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    rank = x.rank
    axes = _axes(layer, axes_v, rank)
    begins, ends = _pads(layer, rank)
    padded = [None if d is None else d + b + e for d, b, e in zip(x.shape, begins, ends)]
    g = ctx.b
    sizes = None
    run_scales = use_scales and not scales_v.is_const
    if run_scales:
        if mode != "nearest":  # (nearest: the indices are computed in the graph, any ctm)
            check_run_time_scales(layer, ctm)
        scales = run_time_scales(layer, g, scales_v, len(axes))
    elif use_scales:
        scales, run_scales = _scales(layer, scales_v, axes, padded, ctm)
        if run_scales:
            scales = g.const(scales, np.float32, "scales")
    elif size_v.is_const:
        sizes = const_ints(layer, size_v, "sizes")
        if len(sizes) < len(axes):
            raise InvalidLayer(layer, f"{len(sizes)} sizes for {len(axes)} axes")
        sizes = sizes[:len(axes)]
        if min(sizes, default=1) < 0:
            raise InvalidLayer(layer, f"sizes {sizes} must not be negative")
    else:
        sizes = runtime_sizes(layer, g, size_v, len(axes))
    data = x
    if any(begins) or any(ends):
        data = g.Pad(x, i64(g, begins + ends, "pads"), g.const(np.zeros((), x.etype.numpy), x.etype.numpy, "zero"))
    if run_scales and mode == "nearest":  # exact: the indices computed as OpenVINO does, Gather
        return [nearest_by_gather(g, data, scales, axes, ctm, layer.attrs["nearest_mode"])]
    if isinstance(sizes, str) or run_scales:  # known at run time: any of the axes may grow or shrink
        moving, shrinking = list(axes), set(axes)
    else:
        moving = [a for i, a in enumerate(axes)  # (scales / sizes are constants here)
                  if (scales[i] if use_scales else sizes[i]) != (1 if use_scales else padded[a])]
        shrinking = {a for i, a in enumerate(axes) if a in moving and (
            scales[i] < 1 if use_scales else padded[a] is None or sizes[i] < padded[a])}
    if not (run_scales and not scales_v.is_const):  # run-time scales: onnxruntime checks the values
        _check_ort_layout(layer, mode, rank, moving, shrinking)  # itself (an error, never a wrong value)
    squeeze = mode != "nearest" and rank == 1  # onnxruntime interpolates 2-D, not 1-D
    if squeeze:
        data, axes, padded = g.Unsqueeze(data, i64(g, [0])), [1], [1] + padded
    back = None
    if name == "f16":  # onnxruntime's CPU Resize is f32-only for floats (f16 -> f32 is exact)
        data, back = g.Cast(data, to=1), x.etype.onnx
    attrs = dict(mode=ONNX_MODE[mode], coordinate_transformation_mode=ctm)
    if mode == "nearest":
        attrs["nearest_mode"] = layer.attrs["nearest_mode"]
    if mode == "cubic":
        attrs.update(cubic_coeff_a=float(layer.attrs["cube_coeff"]), exclude_outside=0)
    if run_scales and ctm == "align_corners":  # lengths on both sides: OpenVINO's sizes
        use_scales, sizes = False, ov_sizes(g, data, scales, axes)
    if run_scales and use_scales:
        out = resize_by_scales(g, data, scales, axes, len(padded), attrs)
    elif ctx.opset >= 18:
        attrs["axes"] = axes
        if use_scales:
            out = g.Resize(data, None, g.const(scales, np.float32, "scales"), **attrs)
        else:
            out = g.Resize(data, None, None, sizes if isinstance(sizes, str) else i64(g, sizes, "sizes"), **attrs)
    elif use_scales:
        full = np.ones(len(padded), np.float32)  # the rank after the 1-D Unsqueeze
        full[axes] = scales
        out = g.Resize(data, None, g.const(full, np.float32, "scales"), **attrs)
    else:
        out = g.Resize(data, None, None, _full_sizes(g, data, padded, axes, sizes), **attrs)
    if squeeze:
        out = g.Squeeze(out, i64(g, [0]))
    return [out if back is None else g.Cast(out, to=back)]


def _check_ort_layout(layer, mode: str, rank: int, moving: list[int], shrinking=frozenset()) -> None:
    """onnxruntime's Resize runs linear on 2-D/3-D, 4-D NCHW/NHWC and 5-D NCDHW layouts and
    cubic on 2-D and 4-D NCHW/NHWC ones, NHWC cubic upsampling only (measured, 1.31: a scale below
    1 fails to load): refuse what it would reject at run time."""
    if mode == "nearest" or rank == 1 or not moving:
        return
    ok = {4: ({2, 3}, {1, 2}) if mode != "cubic" or not shrinking else ({2, 3},)}
    ok.update({2: (set(range(2)),), 3: (set(range(3)),), 5: ({2, 3, 4},)} if mode != "cubic" else {2: ({0, 1},)})
    if not any(set(moving) <= allowed for allowed in ok.get(rank, ())):
        raise UnsupportedLayer(layer, f"{mode} interpolation of axes {moving} of a rank-{rank} tensor is not "
                                      "supported (onnxruntime's Resize interpolates 2-D, NCHW/NHWC"
                                      + (" and 3-D, NCDHW layouts)" if mode != "cubic" else
                                         " layouts, NHWC only upsampling)"))


def _full_sizes(g, data, padded, axes, sizes) -> str:
    """The sizes of every dim: ``sizes`` on ``axes``, the (padded) input's dims elsewhere."""
    if isinstance(sizes, str):  # run-time sizes: each axis picks its value, the rest come from the data
        mask = np.zeros(len(padded), bool)
        mask[axes] = True
        pick = np.zeros(len(padded), np.int64)
        pick[axes] = np.arange(len(axes))
        return g.Where(g.const(mask, np.bool_, "mask"), g.Gather(sizes, i64(g, pick, "pick"), axis=0), g.Shape(data))
    full = list(padded)
    for axis, s in zip(axes, sizes):
        full[axis] = s
    if all(d is not None for d in full):
        return i64(g, full, "sizes")
    mask = np.zeros(len(full), bool)
    mask[axes] = True
    known = [0 if d is None else d for d in full]
    return g.Where(g.const(mask, np.bool_, "mask"), i64(g, known, "sizes"), g.Shape(data))


@lowers("Interpolate", "opset4")
def interpolate4(ctx, layer, inputs):
    """Interpolate-4 (data, sizes, scales, axes?) -> Pad (pads), Resize (Cast around f16)."""
    x, sizes, scales = inputs[:3]
    axes = inputs[3] if len(inputs) > 3 else None
    use_scales = layer.attrs["shape_calculation_mode"] == "scales"
    return _interpolate(ctx, layer, x, sizes, scales, axes, use_scales)


@lowers("Interpolate", "opset11")
def interpolate11(ctx, layer, inputs):
    """Interpolate-11 (data, scales_or_sizes, axes?) -> Pad (pads), Resize (Cast around f16)."""
    x, target = inputs[:2]
    axes = inputs[2] if len(inputs) > 2 else None
    use_scales = layer.attrs["shape_calculation_mode"] == "scales"
    return _interpolate(ctx, layer, x, target, target, axes, use_scales)


def v4_attrs(layer, rank: int, shrinks: bool = False) -> dict:
    """Interpolate-1's attributes as the Interpolate-4 that OpenVINO's ConvertInterpolate1ToInterpolate4
    makes of it: shape_calculation_mode sizes; nearest_mode simple, which is ceil on an axis that
    shrinks and floor on one that grows or stays (the spec's rule for non-negative coordinates);
    linear becomes linear_onnx below rank 5; the coordinates align_corners when asked, else
    half_pixel for linear modes without pads unless the axes are a 4-D tensor's {2, 3}, else
    asymmetric."""
    a = layer.attrs
    mode = {"linear": "linear_onnx" if rank < 5 else "linear"}.get(a["mode"], a["mode"])
    if mode == "area" or (a["mode"] == "linear" and rank > 5):
        raise UnsupportedLayer(layer, f"mode '{a['mode']}' on a rank-{rank} tensor has no Interpolate-4 "
                                      "counterpart in OpenVINO (its runtime refuses it too)")
    pads = list(a["pads_begin"]) + list(a["pads_end"])
    ctm = "asymmetric"
    if a["align_corners"]:
        ctm = "align_corners"
    elif mode in ("linear", "linear_onnx") and not any(pads) and not (rank == 4 and sorted(a["axes"]) == [2, 3]):
        ctm = "half_pixel"
    return dict(mode=mode, shape_calculation_mode="sizes", coordinate_transformation_mode=ctm,
                nearest_mode="ceil" if shrinks else "floor", antialias=a["antialias"],
                pads_begin=a["pads_begin"], pads_end=a["pads_end"], cube_coeff=-0.75)


@lowers("Interpolate", "opset1")
def interpolate1(ctx, layer, inputs):
    """Interpolate-1 (data, target_spatial_shape) -> Pad (pads), Resize, as the Interpolate-4 OpenVINO
    converts it to (:func:`v4_attrs`); nearest on axes some of which shrink and others grow: one
    Resize for each group (nearest is separable), the second without pads."""
    x, target = inputs[:2]
    if x.rank is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    axes = [int(v) for v in layer.attrs["axes"]]
    if layer.attrs["mode"] != "nearest":
        v4 = dataclasses.replace(layer, attrs=v4_attrs(layer, x.rank))
        return _interpolate(ctx, v4, x, target, None, ctx.b.const_value(np.array(axes, np.int64)), False)
    begins, ends = _pads(layer, x.rank)
    dims = [None if d is None else d + b + e for d, b, e in zip(x.shape, begins, ends)]
    if not target.is_const or any(dims[axis] is None for axis in axes):
        raise UnsupportedLayer(layer, "nearest Interpolate-1 needs constant sizes and static dims on its axes "
                                      "(its rounding, ceil or floor, depends on whether an axis shrinks)")
    sizes = const_ints(layer, target, "target_spatial_shape")
    if len(sizes) < len(axes):
        raise InvalidLayer(layer, f"{len(sizes)} sizes for {len(axes)} axes")
    out, shape = x, list(dims)
    for shrinks in (True, False):  # the shrinking axes first, then the others (with the pads: first)
        group = [(a, s) for a, s in zip(axes, sizes) if (s < dims[a]) == shrinks]
        if not group and (shrinks or out is not x):
            continue
        attrs = v4_attrs(layer, x.rank, shrinks)
        if out is not x:
            attrs.update(pads_begin=[0], pads_end=[0])
        g = ctx.b
        name = _interpolate(ctx, dataclasses.replace(layer, attrs=attrs), out,
                            g.const_value(np.array([s for _, s in group], np.int64)), None,
                            g.const_value(np.array([a for a, _ in group], np.int64)), False)[0]
        for a, s in group:
            shape[a] = s
        out = g.value(name, x.etype, tuple(shape))
    return [out]
