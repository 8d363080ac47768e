"""The pairwise rotated IoU matrix of NMSRotated-13 in ONNX arithmetic (used by
:mod:`.nms_rotated` only).

``rotated_iou(g, boxes [N, M, 5] f32, clockwise) -> [N, M, M] f32``, entry ``[n, s, c]`` the IoU of
box c (the candidate) with box s (a selected box), vectorised over all pairs, in f64 from the f32
box values (Cast to double first):

1. the candidate's corners ``centre + R(angle) (+-w/2, +-h/2)`` with ``R = [[cos, -sin],
   [sin, cos]]`` (angle negated for clockwise=false), taken into the selected box's own frame
   and scaled by its width and height: ``alpha = (d . (cos, sin)) / w + 1/2``,
   ``beta = (d . (-sin, cos)) / h + 1/2`` for ``d = corner - centre``; the selected box is then
   the unit square [0, 1]^2;
2. the intersection: the candidate's quadrilateral mapped through ``alpha -> Clip(alpha, 0, 1)``,
   then ``beta -> Clip(beta, 0, 1)``; each edge becomes the polyline through its ends and its
   crossings of the two lines (4 -> 12 -> 36 points). The map moves no point inside the square
   and never moves a point outside it into it, so the winding number inside is kept and the
   signed (shoelace) area of the image is the area of the intersection (points on a clip line
   add nothing): no ordering, no special cases for parallel or coincident edges; pairs with a
   separating axis (closed: touching counts) get exactly 0, not the shoelace's rounding;
3. ``inter = |shoelace| * |w_s * h_s|``; ``IoU = inter / (w_c*h_c + w_s*h_s - inter)``, rounded
   to f32; 0 when either f32 ``w * h`` is not positive (OpenVINO's rule).

The result is the exact IoU of the spec'd rectangles to about 1e-15 before the rounding to f32;
OpenVINO's CPU plugin computes corners, edge crossings and a Graham scan in f32 (measured: within
3e-7 of this on random boxes; far off for boxes whose edges are collinear, README deviations).
Memory: O(N * M^2 * 36) doubles.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..lowering.shapes import i64

DOUBLE = TensorProto.DOUBLE


def _d(g, value, hint="c"):
    return g.const(np.float64(value), np.float64, hint + "64")


def _part(g, x, start: int, end: int):
    return g.Slice(x, i64(g, [start]), i64(g, [end]), i64(g, [-1]))


def _roll(g, x, n: int):
    """x[..., 1:], x[..., :1] along the last axis (of length n)."""
    return g.Concat(_part(g, x, 1, n), _part(g, x, 0, 1), axis=-1)


def _clamp(g, u, v, n: int):
    """Polygon [.., n] (u, v) mapped through u -> Clip(u, 0, 1): each edge becomes the polyline
    through its start and the points where it crosses u = 0 and u = 1 -> [.., 3n] (u, v)."""
    zero, one = _d(g, 0.0, "zero"), _d(g, 1.0, "one")
    du, dv = g.Sub(_roll(g, u, n), u), g.Sub(_roll(g, v, n), v)
    flat = g.Equal(du, zero)
    safe = g.Where(flat, one, du)
    t_lo = g.Where(flat, zero, g.Div(g.Neg(u), safe))
    t_hi = g.Where(flat, zero, g.Div(g.Sub(one, u), safe))
    t1 = g.Clip(g.Min(t_lo, t_hi), zero, one)
    t2 = g.Clip(g.Max(t_lo, t_hi), zero, one)
    us = [u, g.Add(u, g.Mul(t1, du)), g.Add(u, g.Mul(t2, du))]
    vs = [v, g.Add(v, g.Mul(t1, dv)), g.Add(v, g.Mul(t2, dv))]
    axis, shape = i64(g, [-1]), i64(g, [0, 0, 0, 3 * n])
    u3 = g.Reshape(g.Concat(*[g.Unsqueeze(x, axis) for x in us], axis=-1), shape)
    v3 = g.Reshape(g.Concat(*[g.Unsqueeze(x, axis) for x in vs], axis=-1), shape)
    return g.Clip(u3, zero, one), v3


def _separated(g, alpha, beta):
    """[N, M, M] bool: the boxes touch at most (a separating axis, closed): all the candidate's
    corners on or beyond one side of the selected box, or (the transpose) the other way round.
    The clipped area of such a pair is 0 only up to rounding; this makes it exactly 0."""
    zero, one = _d(g, 0.0, "zero"), _d(g, 1.0, "one")

    def reduce(op, t):  # over the 4 corners (axes an input from opset 18)
        if g.opset >= 18:
            return g.op(op, t, i64(g, [-1]), keepdims=0)
        return g.op(op, t, axes=[-1], keepdims=0)

    sides = [g.GreaterOrEqual(reduce("ReduceMin", t), one) for t in (alpha, beta)]
    sides += [g.LessOrEqual(reduce("ReduceMax", t), zero) for t in (alpha, beta)]
    one_way = g.Or(g.Or(sides[0], sides[1]), g.Or(sides[2], sides[3]))
    return g.Or(one_way, g.Transpose(one_way, perm=[0, 2, 1]))


def rotated_iou(g, boxes, clockwise: bool):
    """[N, M, M] f32: entry [n, s, c] the IoU of candidate c with selected box s."""
    b64 = g.Cast(boxes, to=DOUBLE)
    x, y, w, h, a = g.Split(b64, i64(g, [1, 1, 1, 1, 1]), axis=2, _outputs=5)  # each [N, M, 1]
    theta = a if clockwise else g.Neg(a)
    cos, sin = g.Cos(theta), g.Sin(theta)
    half = _d(g, 0.5, "half")
    hw, hh = g.Mul(w, half), g.Mul(h, half)
    u = g.Concat(g.Neg(hw), hw, hw, g.Neg(hw), axis=2)  # corners in the box's frame, [N, M, 4]
    v = g.Concat(g.Neg(hh), g.Neg(hh), hh, hh, axis=2)
    ox, oy = g.Sub(g.Mul(cos, u), g.Mul(sin, v)), g.Add(g.Mul(sin, u), g.Mul(cos, v))  # R(theta) (u, v)

    def cand(t):  # [N, 1, M, .]
        return g.Unsqueeze(t, i64(g, [1]))

    def sel(t):  # [N, M, 1, 1]
        return g.Unsqueeze(t, i64(g, [2]))

    dx = g.Add(g.Sub(cand(x), sel(x)), cand(ox))  # candidate corners about the selected centre
    dy = g.Add(g.Sub(cand(y), sel(y)), cand(oy))  # [N, M, M, 4]
    alpha = g.Add(g.Div(g.Add(g.Mul(dx, sel(cos)), g.Mul(dy, sel(sin))), sel(w)), half)
    beta = g.Add(g.Div(g.Sub(g.Mul(dy, sel(cos)), g.Mul(dx, sel(sin))), sel(h)), half)
    apart = _separated(g, alpha, beta)
    alpha, beta = _clamp(g, alpha, beta, 4)
    beta, alpha = _clamp(g, beta, alpha, 12)
    a0, b0 = g.Sub(alpha, half), g.Sub(beta, half)  # about the square's centre
    twice = g.ReduceSum(g.Sub(g.Mul(a0, _roll(g, b0, 36)), g.Mul(_roll(g, a0, 36), b0)), i64(g, [-1]), keepdims=0)
    area = g.Squeeze(g.Mul(w, h), i64(g, [2]))  # [N, M], exact in f64
    a_c, a_s = g.Unsqueeze(area, i64(g, [1])), g.Unsqueeze(area, i64(g, [2]))  # [N, 1, M], [N, M, 1]
    inter = g.Mul(g.Mul(g.Abs(twice), half), g.Abs(a_s))
    ratio = g.Cast(g.Div(inter, g.Sub(g.Add(a_c, a_s), inter)), to=TensorProto.FLOAT)
    f32_area = g.Mul(*[g.Squeeze(t, i64(g, [2])) for t in g.Split(boxes, i64(g, [2, 1, 1, 1]), axis=2,
                                                                   _outputs=4)[1:3]])  # w * h in f32
    zero = g.const(np.float32(0), np.float32, "zero")
    positive = g.Greater(f32_area, zero)
    both = g.And(g.Unsqueeze(positive, i64(g, [1])), g.Unsqueeze(positive, i64(g, [2])))
    both = g.And(both, g.Not(apart))
    return g.Where(both, ratio, zero)
