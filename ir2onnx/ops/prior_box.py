"""PriorBox-1, PriorBox-8 and PriorBoxClustered-1: the anchor boxes of SSD heads.

Both inputs are integer vectors ``[H, W]`` (the feature map) and ``[IH, IW]`` (the image), usually
ShapeOf of the two tensors, sliced. When both are known at convert time (static shapes) the whole
output is computed here in float32 and stored as a constant; otherwise the same float32 formula
is emitted as ONNX nodes (Range, Cast, Mul, Add, Sub, Div, Sqrt, Max/Min, Expand, Concat,
Reshape) on the run-time sizes. Every step below is one IEEE float32 operation in the order
OpenVINO's reference evaluates it, so both paths give OpenVINO's values.

Output ``[2, 4 * H * W * P]``: row 0 holds the boxes ``(xmin, ymin, xmax, ymax)`` ordered by
cell row ``h``, cell column ``w``, prior ``p``; row 1 the variances, the one value repeated or the
four values once per box (no variance given: 0.1).

PriorBox facts (OpenVINO's operation specification and its reference implementation):

- Aspect ratios: 1 first, then each given ratio not within 1e-6 of one already listed, each
  followed by its reciprocal when ``flip``. Ratio boxes skip the ratios within 1e-6 of 1.
- ``scale_all_sizes=false`` (MXNet style) multiplies every min_size (not max_size) by IH, and the
  step by IH, a step of -1 meaning IH / H; only the last min_size gets ratio boxes, with the
  first min_size.
- Centres: with step 0, ``(w + 0.5) * (IW / W)`` (the offset is ignored); otherwise
  ``(offset + w) * step`` in x and y alike. Coordinates are ``(c -+ half) * (1 / IW)`` (a
  reciprocal, then a product).
- Per cell: first the fixed_size boxes, for each fixed size ``s`` (truncated to an integer where
  the reference casts it) ``density[s]**2`` boxes per ratio (fixed_ratio if given, else the
  square followed by the aspect ratios), shifted by ``- s//2 + shift/2 + c*shift`` with
  ``shift = int(s / density)``, each clipped at 0 below and 1 above on its own; then per min_size
  ``m``: the square ``m/2``, then (min_max_aspect_ratios_order, always so in PriorBox-1) the box
  ``sqrt(m * max)/2`` and the ratio boxes ``(m/2) * sqrt(r)`` by ``(m/2) / sqrt(r)``, or the
  ratio boxes first.
- ``clip`` clamps every coordinate to [0, 1] at the end. Attribute combinations whose box count
  differs from the output size OpenVINO declares (for example density without fixed_size) are
  refused: OpenVINO's reference would write past its output.

PriorBoxClustered facts: ``P = len(width)`` boxes per cell of ``width[p]`` by ``height[p]``;
``step_w``/``step_h`` fall back to ``step`` when 0, and only when both are then 0 they become
``IW / W`` and ``IH / H``; centres ``(w + offset) * step_w``; coordinates ``(c -+ size / 2) / IW``
(a division); ``clip`` clamps to [0, 1].
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.shapes import i64
from ._prior_box_table import prior_table

F32 = np.float32


class _Calc:
    """float32 arithmetic on NumPy arrays (folded now) or ONNX tensor names (emitted nodes)."""

    def __init__(self, b):
        self.b = b

    def _op(self, name, fn, *args, **attrs):
        if all(isinstance(a, np.ndarray) for a in args):
            return np.asarray(fn(*args))
        names = [self.b.const(a, a.dtype) if isinstance(a, np.ndarray) else a for a in args]
        return self.b.op(name, *names, **attrs)

    def add(self, a, c):
        return self._op("Add", lambda x, y: (x + y).astype(F32), a, c)

    def sub(self, a, c):
        return self._op("Sub", lambda x, y: (x - y).astype(F32), a, c)

    def mul(self, a, c):
        return self._op("Mul", lambda x, y: (x * y).astype(F32), a, c)

    def div(self, a, c):
        return self._op("Div", lambda x, y: (x / y).astype(F32), a, c)

    def sqrt(self, a):
        return self._op("Sqrt", lambda x: np.sqrt(x).astype(F32), a)

    def max(self, a, c):
        return self._op("Max", lambda x, y: np.maximum(x, y).astype(F32), a, c)

    def min(self, a, c):
        return self._op("Min", lambda x, y: np.minimum(x, y).astype(F32), a, c)

    def where(self, cond, a, c):
        return self._op("Where", np.where, cond, a, c)

    def expand(self, a, shape):
        return self._op("Expand", lambda x, s: np.broadcast_to(x, tuple(s)).copy(), a, shape)

    def concat(self, parts, axis):
        return self._op("Concat", lambda *xs: np.concatenate(xs, axis=axis), *parts, axis=axis)

    def reshape(self, a, shape):
        return self._op("Reshape", lambda x, s: x.reshape(tuple(s)), a, np.asarray(shape, np.int64))

    def unsqueeze(self, a, axes):
        return self._op("Unsqueeze", lambda x, ax: np.expand_dims(x, tuple(ax)), a, np.asarray(axes, np.int64))

    def as_f32(self, a):
        return self._op("Cast", lambda x: x.astype(F32), a, to=1)

    def arange(self, n):
        """float32 ``0 .. n-1`` for an int64 scalar ``n``."""
        if isinstance(n, np.ndarray):
            return np.arange(int(n), dtype=np.int64).astype(F32)
        return self.b.Cast(self.b.Range(i64(self.b, 0), n, i64(self.b, 1)), to=1)


def _sizes(calc, layer, v, what):
    """``(first, second)`` of a two-element integer input: int64 scalars (arrays or names)."""
    if v.etype is None or not v.etype.is_integer:
        raise InvalidLayer(layer, f"{what} must be of an integer type")
    if v.shape is not None and (len(v.shape) != 1 or v.shape[0] not in (None, 2)):
        raise InvalidLayer(layer, f"{what} must be a vector of 2 values, got shape {list(v.shape)}")
    if v.is_const:
        vals = np.asarray(v.value()).astype(np.int64).reshape(-1)
        if vals.size != 2 or (vals <= 0).any():
            raise InvalidLayer(layer, f"{what} must hold 2 positive values, got {vals.tolist()}")
        return np.asarray(vals[0]), np.asarray(vals[1])
    g = calc.b
    as64 = v.name if v.etype.name == "i64" else g.Cast(v, to=7)
    return tuple(g.Gather(as64, i64(g, k), axis=0) for k in (0, 1))


def _grid(calc, H, W, xmin, ymin, xmax, ymax, var_row, n_priors):
    """Boxes [H, W, P, 4] from per-column x and per-row y coordinates, flattened, and the
    variance row: the [2, 4*H*W*P] output."""
    hw = [H, W] if all(isinstance(d, np.ndarray) for d in (H, W)) else None
    shape = (np.array([int(H), int(W), n_priors], np.int64) if hw else
             calc.b.Concat(calc.b.Unsqueeze(H, i64(calc.b, [0])), calc.b.Unsqueeze(W, i64(calc.b, [0])),
                           i64(calc.b, [n_priors]), axis=0))
    coords = [calc.unsqueeze(calc.expand(c, shape), [3]) for c in (xmin, ymin, xmax, ymax)]
    boxes = calc.reshape(calc.concat(coords, 3), [1, -1])
    flat = calc.reshape(calc.expand(calc.unsqueeze(var_row, [0, 1, 2]),
                                    calc.concat([shape, np.array([4], np.int64)], 0)), [1, -1])
    return calc.concat([boxes, flat], 0)


def _centers(calc, n, offset, step):
    return calc.mul(calc.add(offset, calc.arange(n)), step)


# -- PriorBoxClustered ---------------------------------------------------------------------------
@lowers("PriorBoxClustered", "opset1")
def prior_box_clustered(ctx, layer, inputs):
    """PriorBoxClustered-1 (output_size, image_size) -> a constant for known sizes, else Range,
    Cast, Mul, Add, Sub, Div, Min/Max, Expand, Concat, Reshape on the run-time sizes."""
    a = layer.attrs
    widths, heights = np.asarray(a["width"], F32), np.asarray(a["height"], F32)
    if widths.size != heights.size or widths.size == 0:
        raise InvalidLayer(layer, f"width and height must have the same, non-zero length "
                                  f"({widths.size} and {heights.size})")
    var = _variance(layer, a["variance"])
    calc = _Calc(ctx.b)
    H, W = _sizes(calc, layer, inputs[0], "output_size")
    IH, IW = _sizes(calc, layer, inputs[1], "image_size")
    fW, fH, fIW, fIH = (calc.as_f32(d) for d in (W, H, IW, IH))
    step = F32(a["step"])
    step_w, step_h = F32(a["step_w"]) or step, F32(a["step_h"]) or step
    if step_w == 0 and step_h == 0:
        sw, sh = calc.div(fIW, fW), calc.div(fIH, fH)
    else:
        sw, sh = np.asarray(step_w), np.asarray(step_h)
    off = np.asarray(F32(a["offset"]))
    cx = calc.unsqueeze(_centers(calc, W, off, sw), [0, 2])  # [1, W, 1]
    cy = calc.unsqueeze(_centers(calc, H, off, sh), [1, 2])  # [H, 1, 1]
    hw, hh = (widths / F32(2)).astype(F32), (heights / F32(2)).astype(F32)
    coords = [calc.div(calc.sub(cx, hw), fIW), calc.div(calc.sub(cy, hh), fIH),
              calc.div(calc.add(cx, hw), fIW), calc.div(calc.add(cy, hh), fIH)]
    if a["clip"]:
        coords = [calc.min(calc.max(c, np.asarray(F32(0))), np.asarray(F32(1))) for c in coords]
    return [_grid(calc, H, W, *coords, np.resize(var, 4).astype(F32), widths.size)]


def _variance(layer, values):
    var = np.asarray(values, F32)
    if var.size not in (0, 1, 4):
        raise InvalidLayer(layer, f"variance must have 0, 1 or 4 values, got {var.size}")
    return var if var.size else np.asarray([0.1], F32)


# -- PriorBox --------------------------------------------------------------------------------------
@lowers("PriorBox", "opset1")
def prior_box1(ctx, layer, inputs):
    """PriorBox-1 (output_size, image_size) -> a constant for known sizes, else Range, Cast, Mul,
    Add, Sub, Sqrt, Min/Max, Where, Expand, Concat, Reshape on the run-time sizes
    (min_max_aspect_ratios_order is true)."""
    return _prior_box(ctx, layer, inputs, True)


@lowers("PriorBox", "opset8")
def prior_box8(ctx, layer, inputs):
    """PriorBox-8 (output_size, image_size) -> a constant for known sizes, else Range, Cast, Mul,
    Add, Sub, Sqrt, Min/Max, Where, Expand, Concat, Reshape on the run-time sizes."""
    return _prior_box(ctx, layer, inputs, bool(layer.attrs["min_max_aspect_ratios_order"]))


def _prior_box(ctx, layer, inputs, min_max_first):
    a = layer.attrs
    var = _variance(layer, a["variance"])
    table = prior_table(layer, a, min_max_first)
    calc = _Calc(ctx.b)
    H, W = _sizes(calc, layer, inputs[0], "output_size")
    IH, IW = _sizes(calc, layer, inputs[1], "image_size")
    fW, fH, fIW, fIH = (calc.as_f32(d) for d in (W, H, IW, IH))
    step, mins = np.asarray(F32(a["step"])), np.asarray(a["min_size"], F32)
    if not a["scale_all_sizes"]:
        step = calc.div(fIH, fH) if step == F32(-1) else calc.mul(step, fIH)
        mins = calc.mul(mins, fIH)
    one = np.asarray(F32(1))
    iwi, ihi = calc.div(one, fIW), calc.div(one, fIH)
    if F32(a["step"]) == 0:
        half = np.asarray(F32(0.5))
        cx = _centers(calc, W, half, calc.div(fIW, fW))
        cy = _centers(calc, H, half, calc.div(fIH, fH))
    else:
        off = np.asarray(F32(a["offset"]))
        cx, cy = _centers(calc, W, off, step), _centers(calc, H, off, step)
    cx, cy = calc.unsqueeze(cx, [0, 2]), calc.unsqueeze(cy, [1, 2])  # [1, W, 1], [H, 1, 1]
    bw, bh = _halves(calc, table, mins)
    px = calc.add(calc.add(calc.sub(cx, table.sub), table.add), table.dx)
    py = calc.add(calc.add(calc.sub(cy, table.sub), table.add), table.dy)
    coords = [calc.mul(calc.sub(px, bw), iwi), calc.mul(calc.sub(py, bh), ihi),
              calc.mul(calc.add(px, bw), iwi), calc.mul(calc.add(py, bh), ihi)]
    if table.one_sided.any():  # the fixed_size boxes: clipped at 0 below and 1 above on their own
        zero = np.asarray(F32(0))
        coords[0] = calc.where(table.one_sided, calc.max(coords[0], zero), coords[0])
        coords[1] = calc.where(table.one_sided, calc.max(coords[1], zero), coords[1])
        coords[2] = calc.where(table.one_sided, calc.min(coords[2], one), coords[2])
        coords[3] = calc.where(table.one_sided, calc.min(coords[3], one), coords[3])
    if a["clip"]:
        coords = [calc.min(calc.max(c, np.asarray(F32(0))), one) for c in coords]
    return [_grid(calc, H, W, *coords, np.resize(var, 4).astype(F32), table.count)]


def _halves(calc, table, mins):
    """Half widths and heights per prior: fixed-size boxes are constants; min-size boxes are
    ``(m * 0.5) * r`` by ``(m * 0.5) / r`` (r = sqrt(ratio), 1 for the square) or
    ``sqrt(m * max) * 0.5``, with ``m`` the (possibly run-time) min size of the box."""
    if not table.uses_min.any():
        return table.fixed_w, table.fixed_h
    if isinstance(mins, np.ndarray):
        picked = mins[table.min_index]
    else:  # MXNet sizes: the min sizes times the run-time image height
        picked = calc.b.Gather(mins, i64(calc.b, table.min_index), axis=0)
    halfm = calc.mul(picked, np.asarray(F32(0.5)))
    ratio_w, ratio_h = calc.mul(halfm, table.root), calc.div(halfm, table.root)
    big = calc.mul(calc.sqrt(calc.mul(picked, table.max_size)), np.asarray(F32(0.5)))
    w = calc.where(table.is_max, big, ratio_w)
    h = calc.where(table.is_max, big, ratio_h)
    return (calc.where(table.uses_min, w, table.fixed_w), calc.where(table.uses_min, h, table.fixed_h))

