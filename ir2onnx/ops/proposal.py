"""Proposal-1 and Proposal-4: the region proposals of Faster R-CNN / R-FCN heads.

The lowering reproduces what OpenVINO's CPU plugin computes (its source and measurements; the
spec gives the steps, not the arithmetic, order or ties). Inputs: ``class_probs [N, 2K, H, W]``
(channels K..2K-1 are the foreground scores), ``bbox_deltas [N, 4K, H, W]`` (channels
``4k + 0..3``: dx, dy, d log w, d log h of anchor k) and ``image_shape`` ``[3]`` or ``[4]``:
image height, width, scale (height and width), or scale height, scale width. Every image of the
batch uses the same ``image_shape``. Arithmetic is f32, one IEEE operation per step, in this order:

1. Anchors (at convert time), K = len(ratio) * len(scale), anchor ``k = r * len(scale) + s``.
   Caffe (framework ""): offset 1, ``w_r = round(sqrt(base_size**2 / ratio[r]))`` and
   ``h_r = round(w_r * ratio[r])`` (halves away from zero); TensorFlow: offset 0, no rounding.
   ``half = 0.5 * (w_r * scale[s] - offset)`` (likewise in y); the corners are
   ``0.5 * (base_size - offset) -+ half``, TensorFlow shifting them by ``- base_size * 0.5``.
2. Proposal ``(h * W + w) * K + k`` starts at the anchor moved by ``(w * feat_stride,
   h * feat_stride)``; TensorFlow swaps them (x moves with h, y with w) and also reads the
   image height from ``image_shape[1]`` and width from ``image_shape[0]``. TensorFlow first
   clamps the anchor corners to [0, width] and [0, height].
3. ``ww = x1 - x0 + offset``, ``cx = x0 + 0.5 * ww``; ``dx / box_coordinate_scale``,
   ``dlogw / box_size_scale`` (divisions); centre ``dx * ww + cx``, width ``exp(dlogw) * ww``;
   corners ``centre -+ 0.5 * width``; clip_before_nms clamps them to [0, width - offset] and
   [0, height - offset].
4. A box whose ``x1 - x0 + offset`` is below ``min_size * scale_w`` or whose height is below
   ``min_size * scale_h`` keeps its place with its score multiplied by 0.
5. The ``min(pre_nms_topn, K * H * W)`` best by score are taken in (score descending) order, per
   image; OpenVINO's partial sort leaves equal scores unordered, ir2onnx puts the smaller proposal
   index first. Greedy NMS over them (the plugin's ``nms_cpu``): box j is dropped when a kept box
   before it touches it (``x0 <= x1'`` and ``x0' <= x1``, likewise y: boxes less than a pixel
   apart are disjoint even with offset 1) and ``nms_thresh < inter / (area + area' - inter)``
   (strictly; measured: an IoU equal to nms_thresh keeps the box), in f32 with sizes ``x1 - x0 +
   offset`` and ``inter = max(0, min(x1, x1') - max(x0, x0') + offset) * (likewise y)``; the
   first post_nms_topn kept boxes of the image are its output.
6. Output rows ``[image, x0, y0, x1, y1]`` per image, post_nms_topn rows each, in kept order;
   clip_after_nms clamps to [0, width] / [0, height], normalize divides by width / height.
   After an image's last row, one row starts with -1 and the rest are zeros. Proposal-4's second
   output holds the scores of step 4 (0 in the padding).

ONNX: anchors and the grid by Range/Cast/Add on the run-time H and W, the steps as f32 nodes,
TopK, GatherND, then the NMS by the Loop of ``ops/_common/greedy_nms.py`` over the sorted positions
(ONNX NonMaxSuppression has neither the offset nor the touch test: fed ``x1 + 1`` it overlapped
boxes less than one pixel apart, and its IoU rounded differently near 1024), all images at once,
stopping once every image has post_nms_topn, CumSum capping there (measured, one core:
pre_nms_topn 6000, post_nms_topn 300, 17100 proposals, N = 2: 0.05 s, 0.9 s with post_nms_topn
6000; NonMaxSuppression took under 0.01 s). A TopK on ``position (+ count when
dropped)`` lists the kept boxes first, Where/Concat/Slice add the -1 row and the zeros.
Refused: element types other than f32, an ``image_shape`` of unknown length, non-positive ratios
or scales (inverted anchors), a negative nms_thresh (OpenVINO's plugin then drops boxes that do
not touch in its scalar loop but not in its 8-wide vector loop: measured, 9 disjoint boxes keep
2, 12 keep 5, 17 keep 10), frameworks other than "" and "tensorflow".
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.greedy_nms import greedy_nms
from ._common.shapes import i64

F32 = np.float32
_ONE = numpy_helper.from_array(np.ones(1, F32))


@lowers("Proposal", "opset1")
def proposal1(ctx, layer, inputs):
    """Proposal-1 (class_probs, bbox_deltas, image_shape) -> rois [N * post_nms_topn, 5] by Range,
    Cast, Add, Sub, Mul, Div, Exp, Min, Max, LessOrEqual, TopK, GatherND, Loop (greedy NMS),
    CumSum, TopK, GatherElements, Where, Concat, Slice, Reshape."""
    return _lower(ctx, layer, inputs)[:1]


@lowers("Proposal", "opset4")
def proposal4(ctx, layer, inputs):
    """Proposal-4 (class_probs, bbox_deltas, image_shape) -> as Proposal-1, and the scores of the
    rois [N * post_nms_topn] (GatherElements, Where)."""
    return _lower(ctx, layer, inputs)


def anchors(layer) -> np.ndarray:
    """``[4, K]`` f32: x0, y0, x1, y1 of each anchor before it is moved onto the grid."""
    a = layer.attrs
    tf = a["framework"] == "tensorflow"
    off = F32(0 if tf else 1)
    base = a["base_size"]
    area, half_base = F32(base * base), F32(F32(base) * F32(0.5))
    center = F32(F32(0.5) * F32(F32(base) - off))
    out = []
    for ratio in (F32(r) for r in a["ratio"]):
        w = np.sqrt(F32(area / ratio), dtype=F32)
        if tf:
            h = F32(w * ratio)
        else:
            w = _roundf(w)
            h = _roundf(F32(w * ratio))
        for scale in (F32(s) for s in a["scale"]):
            hw, hh = F32(F32(0.5) * F32(F32(w * scale) - off)), F32(F32(0.5) * F32(F32(h * scale) - off))
            box = [F32(center - hw), F32(center - hh), F32(center + hw), F32(center + hh)]
            out.append([F32(v - half_base) for v in box] if tf else box)
    return np.array(out, F32).T.copy()


def _roundf(x: np.float32) -> np.float32:
    """C's roundf: the nearest integer, halves away from zero (in f64, so x + 0.5 is exact)."""
    return F32(np.copysign(np.floor(abs(float(x)) + 0.5), float(x)))


def _check(layer, cls: Value, deltas: Value, info: Value) -> int:
    a = layer.attrs
    for v, what in ((cls, "class_probs"), (deltas, "bbox_deltas"), (info, "image_shape")):
        if v.etype is None or v.etype.name != "f32":
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} (f32 only, as "
                                          "OpenVINO's CPU plugin)")
    if cls.rank != 4 or deltas.rank != 4:
        raise InvalidLayer(layer, "class_probs and bbox_deltas must be 4-D")
    if info.rank != 1 or info.shape[0] not in (3, 4):
        raise UnsupportedLayer(layer, f"image_shape must be 1-D with 3 or 4 elements known at convert time, got "
                                      f"{info.shape}")
    if a["framework"] not in ("", "tensorflow"):
        raise UnsupportedLayer(layer, f"framework {a['framework']!r} ('' or 'tensorflow')")
    if not a["ratio"] or not a["scale"] or min(a["ratio"]) <= 0 or min(a["scale"]) <= 0:
        raise UnsupportedLayer(layer, "ratio and scale must be non-empty and positive (else anchors are inverted)")
    if not a["nms_thresh"] >= 0:
        raise UnsupportedLayer(layer, f"nms_thresh {a['nms_thresh']}: OpenVINO's CPU plugin then drops boxes that "
                                      "do not touch in its scalar loop but not in its 8-wide vector loop")
    if a["feat_stride"] < 0 or a["base_size"] < 0 or a["min_size"] < 0:
        raise InvalidLayer(layer, "base_size, feat_stride and min_size must not be negative")
    k = len(a["ratio"]) * len(a["scale"])
    if cls.shape[1] is not None and cls.shape[1] != 2 * k:
        raise InvalidLayer(layer, f"class_probs has {cls.shape[1]} channels, not 2 * {k} anchors")
    if deltas.shape[1] is not None and deltas.shape[1] != 4 * k:
        raise InvalidLayer(layer, f"bbox_deltas has {deltas.shape[1]} channels, not 4 * {k} anchors")
    return k


def _clamp(g, x: str, hi: str) -> str:
    return g.Max(g.Min(x, hi), g.const(0.0, F32))


def _lower(ctx, layer, inputs):
    if len(inputs) != 3:
        raise InvalidLayer(layer, f"3 inputs, got {len(inputs)}")
    cls, deltas, info = inputs
    k = _check(layer, cls, deltas, info)
    a = layer.attrs
    g = ctx.b
    tf = a["framework"] == "tensorflow"
    off = 0.0 if tf else 1.0
    f = lambda v: g.const(F32(v), F32)  # noqa: E731
    item = lambda i: g.Gather(info, i64(g, [i]))  # noqa: E731  [1]
    img_h, img_w = (item(1), item(0)) if tf else (item(0), item(1))
    scale_h, scale_w = item(2), item(3 if info.shape[0] == 4 else 2)

    # scores [N, HWK] and deltas [N, HWK, 4], index (h * W + w) * K + k
    score = g.Slice(cls, i64(g, [k]), i64(g, [2 * k]), i64(g, [1]))
    score = g.Reshape(g.Transpose(score, perm=[0, 2, 3, 1]), i64(g, [0, -1]))
    d = g.Reshape(deltas, i64(g, [0, k, 4, -1]))
    d = g.Reshape(g.Transpose(d, perm=[0, 3, 1, 2]), i64(g, [0, -1, 4]))
    dx, dy, dw, dh = (g.Squeeze(g.Slice(d, i64(g, [j]), i64(g, [j + 1]), i64(g, [2])), i64(g, [2])) for j in range(4))
    if a["box_coordinate_scale"] != 1.0:
        dx, dy = (g.Div(t, f(a["box_coordinate_scale"])) for t in (dx, dy))
    if a["box_size_scale"] != 1.0:
        dw, dh = (g.Div(t, f(a["box_size_scale"])) for t in (dw, dh))

    # anchors on the grid: [1, HWK] each
    shape = g.Shape(cls)
    hw = [g.Squeeze(g.Slice(shape, i64(g, [i]), i64(g, [i + 1])), i64(g, [0])) for i in (2, 3)]
    rows, cols = (g.Mul(g.Range(i64(g, 0), n, i64(g, 1)), i64(g, a["feat_stride"])) for n in hw)
    rows = g.Cast(g.Reshape(rows, i64(g, [-1, 1, 1])), to=TensorProto.FLOAT)
    cols = g.Cast(g.Reshape(cols, i64(g, [1, -1, 1])), to=TensorProto.FLOAT)
    gx, gy = (rows, cols) if tf else (cols, rows)
    grid = g.Concat(g.Slice(shape, i64(g, [2]), i64(g, [4])), i64(g, [k]), axis=0)
    base = anchors(layer)
    corners = []
    for j, origin in enumerate((gx, gy, gx, gy)):
        c = g.Add(origin, g.const(base[j].reshape(1, 1, k), F32))
        corners.append(g.Reshape(g.Expand(c, grid), i64(g, [1, -1])))
    x0, y0, x1, y1 = corners
    if tf:
        x0, x1 = (_clamp(g, t, img_w) for t in (x0, x1))
        y0, y1 = (_clamp(g, t, img_h) for t in (y0, y1))
    half = f(0.5)
    ww, hh = g.Sub(x1, x0), g.Sub(y1, y0)
    if off:
        ww, hh = g.Add(ww, f(off)), g.Add(hh, f(off))
    cx, cy = g.Add(x0, g.Mul(half, ww)), g.Add(y0, g.Mul(half, hh))
    px, py = g.Add(g.Mul(dx, ww), cx), g.Add(g.Mul(dy, hh), cy)
    pw, ph = g.Mul(g.Exp(dw), ww), g.Mul(g.Exp(dh), hh)
    x0, x1 = g.Sub(px, g.Mul(half, pw)), g.Add(px, g.Mul(half, pw))
    y0, y1 = g.Sub(py, g.Mul(half, ph)), g.Add(py, g.Mul(half, ph))
    if a["clip_before_nms"]:
        lim_w, lim_h = (g.Sub(t, f(off)) for t in (img_w, img_h)) if off else (img_w, img_h)
        x0, x1 = (_clamp(g, t, lim_w) for t in (x0, x1))
        y0, y1 = (_clamp(g, t, lim_h) for t in (y0, y1))
    bw, bh = g.Sub(x1, x0), g.Sub(y1, y0)
    if off:
        bw, bh = g.Add(bw, f(off)), g.Add(bh, f(off))
    size = f(a["min_size"])
    big = g.And(g.LessOrEqual(g.Mul(size, scale_w), bw), g.LessOrEqual(g.Mul(size, scale_h), bh))
    score = g.Mul(g.Cast(big, to=TensorProto.FLOAT), score)
    boxes = g.Concat(*(g.Unsqueeze(t, i64(g, [2])) for t in (x0, y0, x1, y1)), axis=2)  # [N, HWK, 4]

    # pre_nms_topn best, NMS in that order, kept first
    count = g.Slice(g.Shape(score), i64(g, [1]), i64(g, [2]))
    pre = g.Min(count, i64(g, [a["pre_nms_topn"]]))
    vals, idx = g.TopK(score, pre, axis=1, largest=1, sorted=1, _outputs=2)
    sorted_boxes = g.GatherND(boxes, g.Unsqueeze(idx, i64(g, [2])), batch_dims=1)  # [N, pre, 4]
    pre0 = g.Squeeze(pre, i64(g, [0]))
    post = a["post_nms_topn"]
    keep = greedy_nms(g, layer.name, sorted_boxes, g.ConstantOfShape(g.Shape(vals), value=_ONE), pre, f(off),
                      f(a["nms_thresh"]), f(post))
    kept = g.Greater(keep, f(0.0))
    pos = g.Range(i64(g, 0), pre0, i64(g, 1))
    key = g.Where(kept, pos, g.Add(pos, pre0))
    n_out = g.Min(pre, i64(g, [post]))
    _, order = g.TopK(key, n_out, axis=1, largest=0, sorted=1, _outputs=2)
    valid = g.GatherElements(kept, order, axis=1)
    box = g.GatherND(sorted_boxes, g.Unsqueeze(order, i64(g, [2])), batch_dims=1)
    prob = g.GatherElements(vals, order, axis=1)
    limits = g.Concat(img_w, img_h, img_w, img_h, axis=0)
    if a["clip_after_nms"]:
        box = g.Max(g.Min(box, limits), f(0.0))
    if a["normalize"]:
        box = g.Div(box, limits)

    # pad to post_nms_topn rows, -1 after the last kept one
    n_dim = g.Slice(g.Shape(vals), i64(g, [0]), i64(g, [1]))
    wide = g.Concat(n_dim, i64(g, [post]), axis=0)
    valid = _pad(g, valid, g.Expand(g.const(False, np.bool_), wide), post)
    prob = g.Where(valid, _pad(g, prob, g.Expand(f(0.0), wide), post), f(0.0))
    box = _pad(g, box, g.Expand(g.const(np.zeros((1, 1, 4)), F32), g.Concat(wide, i64(g, [4]), axis=0)), post)
    box = g.Where(g.Unsqueeze(valid, i64(g, [2])), box, f(0.0))
    kept_count = g.ReduceSum(g.Cast(valid, to=TensorProto.INT64), i64(g, [1]), keepdims=1)  # [N, 1]
    image = g.Cast(g.Unsqueeze(g.Range(i64(g, 0), g.Squeeze(n_dim, i64(g, [0])), i64(g, 1)), i64(g, [1])),
                   to=TensorProto.FLOAT)
    end = g.Equal(g.const(np.arange(post).reshape(1, -1), np.int64), kept_count)
    first = g.Where(valid, image, g.Where(end, f(-1.0), f(0.0)))
    rois = g.Reshape(g.Concat(g.Unsqueeze(first, i64(g, [2])), box, axis=2), i64(g, [-1, 5]))
    n = cls.shape[0]
    total = None if n is None else n * post
    f32 = layer.outputs[0].etype
    return [Value(g, f32, (total, 5), name=rois), Value(g, f32, (total,), name=g.Reshape(prob, i64(g, [-1])))]


def _pad(g, x: str, zeros: str, post: int) -> str:
    """``x`` ([N, m, ...], m <= post) followed by ``zeros`` ([N, post, ...]), cut to post rows."""
    return g.Slice(g.Concat(x, zeros, axis=1), i64(g, [0]), i64(g, [post]), i64(g, [1]))
