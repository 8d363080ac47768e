"""ExperimentalDetectronPriorGridGenerator-6, ExperimentalDetectronTopKROIs-6 and
ExperimentalDetectronROIFeatureExtractor-6: the anchor grid, the ROI selection and the pyramid
ROIAlign of the Detectron heads of Open Model Zoo's instance-segmentation-security-*
models; the chains of GenerateProposalsSingleImage (the RPN) and DetectionOutput (the box head's
detections) sit beside this module, in experimental_detectron_proposals.py and
experimental_detectron_detection_output.py.

PriorGridGenerator facts (OpenVINO's operation specification and reference implementation, in our words):

- Inputs: priors ``[N, 4]`` (x0, y0, x1, y1 of each anchor, centred at 0), the feature map
  ``[B, C, H, W]`` and the image ``[B, C, IH, IW]``; of the last two only the sizes are used.
- Grid: ``H`` rows by ``W`` columns; steps ``stride_x`` (x) and ``stride_y`` (y), each 0 meaning
  ``float(IW) / W`` and ``float(IH) / H`` (one float32 division).
- Box ``(h, w, n)``: ``x0 + step_x * (float(w) + 0.5)``, ``y0 + step_y * (float(h) + 0.5)``, the
  same for x1, y1: one float32 product, then one float32 sum (f16 priors: the sum is done in
  float32 and rounded to f16 once).
- Output ``[H * W * N, 4]`` (flatten) or ``[H, W, N, 4]``, ordered by h, w, n.
- Attributes ``h``/``w`` other than 0 or the map's size leave part of the output undefined (the
  specification says so); they are refused.

TopKROIs facts: rois ``[N, 4]`` and probs ``[N]``; the output is ``[max_rois, 4]``, the rois of
the ``min(N, max_rois)`` highest probabilities, highest first. Rows past N are left unwritten by
OpenVINO (measured: garbage); here they are zeros. Equal probabilities: smaller index first (ONNX
TopK's rule). OpenVINO sorts with an unstable sort: it gives the same order for N <= 16 (measured),
but for larger N with ties it may pick and order the tied rois otherwise (measured with 2026.4:
N=40 with three distinct values); the specification leaves that order open.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import dims_of, i64
from ._experimental_detectron_detection_output import detection_output_chain
from ._experimental_detectron_proposals import proposals_chain

FLOATS = ("f32", "f16")


def _float_input(layer, v, what):
    if v.etype is None or v.etype.name not in FLOATS:
        raise UnsupportedLayer(layer, f"{what} of type {getattr(v.etype, 'name', '?')} is not supported "
                                      f"({', '.join(FLOATS)})")
    if v.shape is not None and (len(v.shape) != 2 or v.shape[1] not in (None, 4)):
        raise InvalidLayer(layer, f"{what} must be [N, 4], got {list(v.shape)}")


@lowers("ExperimentalDetectronPriorGridGenerator", "opset6")
def prior_grid_generator(ctx, layer, inputs):
    """ExperimentalDetectronPriorGridGenerator-6 (priors, feature_map, im_data) -> Shape/Range/Cast
    (cell centres), Div (default steps), Mul, Add (float32), Expand, Concat, Reshape; Cast for f16."""
    a = layer.attrs
    priors, fm, im = inputs
    _float_input(layer, priors, "priors")
    for v, what in ((fm, "feature_map"), (im, "im_data")):
        if v.shape is not None and len(v.shape) != 4:
            raise InvalidLayer(layer, f"{what} must be 4D, got {list(v.shape)}")
    for attr, axis in (("h", 2), ("w", 3)):
        n = int(a[attr])
        dim = None if fm.shape is None else fm.shape[axis]
        if n < 0:
            raise InvalidLayer(layer, f"{attr}={n} must be non-negative")
        if n != 0 and n != dim:
            raise UnsupportedLayer(layer, f"{attr}={n} differs from the feature map's size "
                                          f"({dim if dim is not None else 'unknown'}): the output's remainder "
                                          f"is undefined by the specification")
    g = ctx.b
    p = priors.name if priors.etype.name == "f32" else g.Cast(priors, to=1)
    hw = dims_of(g, fm, 2, 4)  # [H, W]
    H, W = (g.Gather(hw, i64(g, k), axis=0) for k in (0, 1))
    steps = []
    for stride, k, n in ((float(a["stride_x"]), 1, W), (float(a["stride_y"]), 0, H)):
        if stride != 0:
            steps.append(g.const(np.float32(stride), np.float32))
        else:
            size = g.Cast(g.Gather(dims_of(g, im, 2, 4), i64(g, k), axis=0), to=1)
            steps.append(g.Div(size, g.Cast(n, to=1)))
    half = g.const(np.float32(0.5), np.float32)

    def centres(n, step):
        return g.Mul(step, g.Add(g.Cast(g.Range(i64(g, 0), n, i64(g, 1)), to=1), half))

    cx = g.Unsqueeze(centres(W, steps[0]), i64(g, [0, 2]))  # [1, W, 1]
    cy = g.Unsqueeze(centres(H, steps[1]), i64(g, [1, 2]))  # [H, 1, 1]
    coords = []
    for j, c in enumerate((cx, cy, cx, cy)):
        col = g.Reshape(g.Gather(p, i64(g, j), axis=1), i64(g, [1, 1, -1]))  # [1, 1, N]
        s = g.Add(col, c)
        coords.append(s)
    shape = g.Concat(hw, g.Shape(p, start=0, end=1) if g.opset >= 15 else
                     g.Slice(g.Shape(p), i64(g, [0]), i64(g, [1])), axis=0)  # [H, W, N]
    parts = [g.Unsqueeze(g.Expand(c, shape), i64(g, [3])) for c in coords]
    out = g.Concat(*parts, axis=3)
    if a["flatten"]:
        out = g.Reshape(out, i64(g, [-1, 4]))
    return [out if priors.etype.name == "f32" else g.Cast(out, to=10)]


@lowers("ExperimentalDetectronTopKROIs", "opset6")
def topk_rois(ctx, layer, inputs):
    """ExperimentalDetectronTopKROIs-6 (input_rois, rois_probs) -> TopK (largest, sorted; k =
    min(N, max_rois)), Gather; Pad with zero rows to max_rois when N may be smaller."""
    rois, probs = inputs
    _float_input(layer, rois, "input_rois")
    if probs.etype is None or probs.etype.name != rois.etype.name:
        raise InvalidLayer(layer, "rois_probs must have input_rois' element type")
    if probs.shape is not None and len(probs.shape) != 1:
        raise InvalidLayer(layer, f"rois_probs must be 1D, got {list(probs.shape)}")
    max_rois = int(layer.attrs["max_rois"])
    if max_rois < 0:
        raise InvalidLayer(layer, f"max_rois={max_rois} must be non-negative")
    g = ctx.b
    n = None if probs.shape is None else probs.shape[0]
    if n is not None and rois.shape is not None and rois.shape[0] not in (None, n):
        raise InvalidLayer(layer, f"input_rois has {rois.shape[0]} rows, rois_probs {n}")
    p = probs.name if probs.etype.name == "f32" else g.Cast(probs, to=1)
    if n is not None:
        k = i64(g, [min(n, max_rois)])
    else:
        k = g.Min(g.Shape(probs), i64(g, [max_rois]))
    _, idx = g.op("TopK", p, k, axis=0, largest=1, sorted=1, _outputs=2)
    out = g.Gather(rois, idx, axis=0)
    if n is None or n < max_rois:
        missing = g.Sub(i64(g, [max_rois]), k)
        pads = g.Concat(i64(g, [0, 0]), missing, i64(g, [0]), axis=0)
        out = g.Pad(out, pads)
    return [out]


def _level_threshold(k):
    """The smallest float32 t with floor(f32(log2(t)) + 2) >= k (log2 is monotone)."""
    t = np.float32(2.0 ** (k - 2))
    lvl = lambda v: np.floor(np.float32(np.log2(v)) + np.float32(2))  # noqa: E731
    while lvl(t) >= k:
        t = np.nextafter(t, np.float32(0))
    while lvl(t) < k:
        t = np.nextafter(t, np.float32(np.inf))
    return t


@lowers("ExperimentalDetectronROIFeatureExtractor", "opset6")
def roi_feature_extractor(ctx, layer, inputs):
    """ExperimentalDetectronROIFeatureExtractor-6 (rois, level_0 .. level_L-1) -> per level RoiAlign
    (output_half_pixel, avg); Sub, Mul, Sqrt, Div, Add, GreaterOrEqual, Cast, ReduceSum (the level);
    Where (one level per ROI); Identity (the rois output). aligned=true: per level Mul, Sub (the
    roi times the level's scale minus 0.5, as OpenVINO computes it) before RoiAlign with scale 1,
    whose output_half_pixel mode then keeps OpenVINO's minimum roi size of 1 (half_pixel would
    drop it)."""
    a = layer.attrs
    rois, maps = inputs[0], inputs[1:]
    _float_input(layer, rois, "input_rois")
    if rois.etype.name != "f32" or any(m.etype is None or m.etype.name != "f32" for m in maps):
        raise UnsupportedLayer(layer, "only f32 rois and feature maps are supported")
    scales = [int(v) for v in a["pyramid_scales"]]
    if len(scales) != len(maps) or not maps or any(v <= 0 for v in scales):
        raise InvalidLayer(layer, f"pyramid_scales {scales} must hold one positive scale per feature map "
                                  f"({len(maps)})")
    size, ratio = int(a["output_size"]), int(a["sampling_ratio"])
    if size <= 0 or ratio < 0:
        raise InvalidLayer(layer, f"output_size {size} must be positive, sampling_ratio {ratio} non-negative")
    for m in maps:
        if m.shape is not None and (len(m.shape) != 4 or m.shape[0] not in (None, 1)):
            raise UnsupportedLayer(layer, f"feature maps must be [1, C, H, W], got {list(m.shape)}")
    g = ctx.b
    f32 = lambda v: g.const(np.float32(v), np.float32)  # noqa: E731
    col = lambda j: g.Gather(rois, i64(g, j), axis=1)  # noqa: E731
    area = g.Mul(g.Sub(col(2), col(0)), g.Sub(col(3), col(1)))  # [R]
    t = g.Add(g.Div(g.Sqrt(area), f32(224.0)), f32(1e-6))
    L = len(maps)
    if L > 1:
        over = [g.Cast(g.GreaterOrEqual(t, f32(_level_threshold(k))), to=7) for k in range(1, L)]
        level = over[0] if L == 2 else g.ReduceSum(g.Concat(*[g.Unsqueeze(o, i64(g, [0])) for o in over],
                                                             axis=0), i64(g, [0]), keepdims=0)
    else:
        level = g.Mul(g.Cast(t, to=7), i64(g, 0))  # zeros [R]
    level = g.Where(g.Greater(area, f32(0.0)), level, i64(g, L))  # area <= 0: no level
    level = g.Reshape(level, i64(g, [-1, 1, 1, 1]))
    batch = g.Mul(g.Cast(g.Gather(rois, i64(g, 0), axis=1), to=7), i64(g, 0))  # zeros [R]
    out = g.Expand(g.const(np.float32(0), np.float32), i64(g, [1, 1, 1, 1]))
    for lvl in reversed(range(L)):
        scale = np.float32(1.0) / np.float32(scales[lvl])
        boxes = rois
        if a["aligned"]:  # the roi scaled and shifted by half a pixel here, its size still at least 1 there
            boxes, scale = g.Sub(g.Mul(rois, f32(scale)), f32(0.5)), np.float32(1.0)
        pooled = g.RoiAlign(maps[lvl], boxes, batch, mode="avg", output_height=size, output_width=size,
                            sampling_ratio=ratio, spatial_scale=float(scale),
                            coordinate_transformation_mode="output_half_pixel" if g.opset >= 16 else None)
        out = g.Where(g.Equal(level, i64(g, lvl)), pooled, out)
    return [out, g.Identity(rois)]


@lowers("ExperimentalDetectronGenerateProposalsSingleImage", "opset6")
def generate_proposals_single_image(ctx, layer, inputs):
    """ExperimentalDetectronGenerateProposalsSingleImage-6 (im_info, anchors, deltas, scores) ->
    Reshape/Transpose (proposal order), Sub/Add/Mul/Min/Exp/Max (decoding), LessOrEqual/Where
    (min_size), TopK (pre_nms_count), Loop (greedy NMS), CumSum, NonZero, Gather, Pad (post_nms_count
    rows); the facts in ops/_experimental_detectron_proposals.py."""
    return proposals_chain(ctx, layer, inputs)


@lowers("ExperimentalDetectronDetectionOutput", "opset6")
def detection_output(ctx, layer, inputs):
    """ExperimentalDetectronDetectionOutput-6 (rois, deltas, scores, im_info) -> Reshape/Slice/Div
    (deltas per class), Sub/Add/Mul/Min/Exp/Max (decoding), Where, TopK (per-class order), Loop
    (greedy NMS with +1 overlaps), CumSum, NonZero | TopK, GatherND, Where, Pad; the facts in
    ops/_experimental_detectron_detection_output.py."""
    return detection_output_chain(ctx, layer, inputs)
