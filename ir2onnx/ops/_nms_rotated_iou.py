"""The pairwise rotated IoU matrix of NMSRotated-13 in ONNX arithmetic (used by
:mod:`.nms_rotated` only).

``rotated_iou(g, boxes [N, M, 5] f32, clockwise) -> [N, M, M] f32``, entry ``[n, s, c]`` the IoU of
box c (the candidate) with box s (a selected box), vectorised over all pairs, in f64 from the f32
box values (Cast to double first):

1. the candidate's corners ``centre + R(angle) (+-w/2, +-h/2)`` with ``R = [[cos, -sin],
   [sin, cos]]`` (angle negated for clockwise=false), taken into the selected box's own frame
   and scaled by its width and height: ``alpha = (d . (cos, sin)) / w``,
   ``beta = (d . (-sin, cos)) / h`` for ``d = corner - centre``; the selected box is then the
   square [-1/2, 1/2]^2;
2. the intersection: the candidate's quadrilateral mapped through ``(alpha, beta) ->
   (Clip(alpha), Clip(beta))`` to [-1/2, 1/2]; each edge becomes the polyline through its start
   and its crossings of the four lines alpha, beta = +-1/2 in edge order (two sorted pairs of
   parameters merged: Min, Max). The map moves no point inside the square and never moves a
   point outside it into it, so the winding number inside is kept and the signed (shoelace) area
   of the image is the area of the intersection (points on the square's sides add nothing): no
   ordering of vertices, no special cases for parallel or coincident edges; pairs with a
   separating axis (closed: touching counts) get exactly 0, not the shoelace's rounding;
3. ``inter = |shoelace| * |w_s * h_s|``; ``IoU = inter / (w_c*h_c + w_s*h_s - inter)``, rounded
   to f32; 0 when either f32 ``w * h`` is not positive (OpenVINO's rule).

The result is the exact IoU of the spec'd rectangles to about 1e-15 before the rounding to f32;
OpenVINO's CPU plugin computes corners, edge crossings and a Graham scan in f32 (measured: within
3e-7 of this on random unit-scale boxes, 1.8e-6 at pixel coordinates; far off for boxes whose
edges are collinear, docs/deviations.md).
Memory: a few [N, M, M, 4] doubles at a time (measured, M = 1000 boxes and 15 classes on 2 CPU
cores: 0.6 GB peak, 3.2 s).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ._common.shapes import i64

DOUBLE = TensorProto.DOUBLE


def _d(g, value, hint="c"):
    return g.const(np.float64(value), np.float64, hint + "64")


def _part(g, x, start: int, end: int):
    return g.Slice(x, i64(g, [start]), i64(g, [end]), i64(g, [-1]))


def _roll(g, x, n: int):
    """x[..., 1:], x[..., :1] along the last axis (of length n)."""
    return g.Concat(_part(g, x, 1, n), _part(g, x, 0, 1), axis=-1)


def _sort2(g, a, b):
    return g.Min(a, b), g.Max(a, b)


def _clipped_area(g, u, v):
    """Twice the signed area of quadrilaterals [.., 4] (u, v) mapped through
    ``(u, v) -> (Clip(u, -1/2, 1/2), Clip(v, -1/2, 1/2))``: each edge becomes the polyline through
    its start and the (sorted) points where it crosses the four lines u, v = +-1/2, all clipped;
    the shoelace sum runs over those 5 points per edge (no Concat of a 20-point polygon)."""
    lo, hi, zero, one = _d(g, -0.5, "mhalf"), _d(g, 0.5, "half"), _d(g, 0.0, "zero"), _d(g, 1.0, "one")
    u1, v1 = _roll(g, u, 4), _roll(g, v, 4)  # the edge's end
    du, dv = g.Sub(u1, u), g.Sub(v1, v)

    def crossings(x, dx):  # edge parameters of x = -1/2 and x = 1/2, sorted and clipped to [0, 1]
        safe = g.Add(dx, g.Cast(g.Equal(dx, zero), to=DOUBLE))  # parallel: any t in [0, 1] is right
        t_a, t_b = g.Div(g.Sub(lo, x), safe), g.Div(g.Sub(hi, x), safe)
        first, last = _sort2(g, t_a, t_b)
        return g.Clip(first, zero, one), g.Clip(last, zero, one)

    ua, ub = crossings(u, du)
    va, vb = crossings(v, dv)
    t1, t4 = g.Min(ua, va), g.Max(ub, vb)  # merge two sorted pairs
    t2, t3 = _sort2(g, g.Max(ua, va), g.Min(ub, vb))
    pts = [(g.Clip(u, lo, hi), g.Clip(v, lo, hi))]
    for t in (t1, t2, t3, t4):
        pts.append((g.Clip(g.Add(u, g.Mul(t, du)), lo, hi), g.Clip(g.Add(v, g.Mul(t, dv)), lo, hi)))
    pts.append((g.Clip(u1, lo, hi), g.Clip(v1, lo, hi)))
    total = None
    for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
        term = g.Sub(g.Mul(xa, yb), g.Mul(xb, ya))
        total = term if total is None else g.Add(total, term)
    return g.ReduceSum(total, i64(g, [-1]), keepdims=0)


def _separated(g, alpha, beta):
    """[N, M, M] bool: the boxes touch at most (a separating axis, closed): all the candidate's
    corners on or beyond one side of the selected box, or (the transpose) the other way round.
    The clipped area of such a pair is 0 only up to rounding; this makes it exactly 0."""
    lo, hi = _d(g, -0.5, "mhalf"), _d(g, 0.5, "half")

    def reduce(op, t):  # over the 4 corners (axes an input from opset 18)
        if g.opset >= 18:
            return g.op(op, t, i64(g, [-1]), keepdims=0)
        return g.op(op, t, axes=[-1], keepdims=0)

    sides = [g.GreaterOrEqual(reduce("ReduceMin", t), hi) for t in (alpha, beta)]
    sides += [g.LessOrEqual(reduce("ReduceMax", t), lo) for t in (alpha, beta)]
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
    alpha = g.Div(g.Add(g.Mul(dx, sel(cos)), g.Mul(dy, sel(sin))), sel(w))  # the square [-1/2, 1/2]^2
    beta = g.Div(g.Sub(g.Mul(dy, sel(cos)), g.Mul(dx, sel(sin))), sel(h))
    apart = _separated(g, alpha, beta)
    twice = _clipped_area(g, alpha, beta)  # [N, M, M]
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
