"""The pairwise rotated IoU matrix of NMSRotated-13 in ONNX arithmetic (used by
:mod:`.nms_rotated` only).

``rotated_iou(g, boxes [N, M, 5] f32, clockwise) -> [N, M, M] f32``, entry ``[n, s, c]`` the IoU of
box c (the candidate) with box s (a selected box), computed in f32 the way OpenVINO's CPU plugin
does, vectorised over all pairs:

1. corners: ``cos/sin(angle) * 0.5`` (angle negated for clockwise=false), corner 0 at
   ``(x - s*h - c*w, y + c*h - s*w)``, corner 1 at ``(x + s*h - c*w, y - c*h - s*w)``, corners 2
   and 3 their reflections ``2*centre - corner`` (Cos, Sin, Mul, Sub, Concat);
2. candidate points of the intersection polygon, 24 per pair with a mask: the 16 crossings of an
   edge of c with an edge of s (``|det| > 1e-14``, both edge parameters in [0, 1]) and the corners
   of each box inside the other (projections on two edges within [0, edge length^2], inclusive);
3. the polygon: more than 2 points, ordered by a pseudo-angle (``dx / (|dx| + |dy|)``, monotone
   in the angle) around the mean of the points (TopK), masked points replaced by the first, then
   the shoelace formula (half the absolute sum of cross products around the mean);
4. ``inter / (area_c + area_s - inter)`` with ``area = w * h``; 0 when either area is not positive.

OpenVINO orders the points with a Graham scan and sums triangle areas around its start point;
the area is the same polygon's but rounds differently (measured: tests/test_nms_rotated.py).
Memory: O(N * M^2 * 24) floats.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..lowering.shapes import i64

BOOL = TensorProto.BOOL


def _f(g, value, hint="c"):
    return g.const(np.float32(value), np.float32, hint)


def _part(g, x, start: int, end: int):
    return g.Slice(x, i64(g, [start]), i64(g, [end]), i64(g, [-1]))


def _corners(g, boxes, clockwise: bool):
    """Corner x and y [N, M, 4] and edge vectors corner[i+1] - corner[i]."""
    x, y, w, h, a = g.Split(boxes, i64(g, [1, 1, 1, 1, 1]), axis=2, _outputs=5)  # each [N, M, 1]
    theta = a if clockwise else g.Neg(a)
    half = _f(g, 0.5, "half")
    c2, s2 = g.Mul(g.Cos(theta), half), g.Mul(g.Sin(theta), half)
    sh, cw, ch, sw = g.Mul(s2, h), g.Mul(c2, w), g.Mul(c2, h), g.Mul(s2, w)
    p0x, p0y = g.Sub(g.Sub(x, sh), cw), g.Sub(g.Add(y, ch), sw)
    p1x, p1y = g.Sub(g.Add(x, sh), cw), g.Sub(g.Sub(y, ch), sw)
    two = _f(g, 2.0, "two")
    x2, y2 = g.Mul(x, two), g.Mul(y, two)
    p2x, p2y, p3x, p3y = g.Sub(x2, p0x), g.Sub(y2, p0y), g.Sub(x2, p1x), g.Sub(y2, p1y)
    px, py = g.Concat(p0x, p1x, p2x, p3x, axis=2), g.Concat(p0y, p1y, p2y, p3y, axis=2)
    vx = g.Sub(g.Concat(p1x, p2x, p3x, p0x, axis=2), px)
    vy = g.Sub(g.Concat(p1y, p2y, p3y, p0y, axis=2), py)
    return px, py, vx, vy, g.Mul(w, h)


def _all(g, *conds):
    out = conds[0]
    for c in conds[1:]:
        out = g.And(out, c)
    return out


def _between(g, v, hi):
    """0 <= v <= hi."""
    return g.And(g.GreaterOrEqual(v, _f(g, 0.0, "zero")), g.LessOrEqual(v, hi))


def _crossings(g, px, py, vx, vy):
    """The 16 edge crossings of each pair: x, y, mask [N, M(s), M(c), 16]."""
    p1x, p1y = g.Unsqueeze(px, i64(g, [1, 4])), g.Unsqueeze(py, i64(g, [1, 4]))  # candidate [N,1,M,4,1]
    v1x, v1y = g.Unsqueeze(vx, i64(g, [1, 4])), g.Unsqueeze(vy, i64(g, [1, 4]))
    p2x, p2y = g.Unsqueeze(px, i64(g, [2, 3])), g.Unsqueeze(py, i64(g, [2, 3]))  # selected [N,M,1,1,4]
    v2x, v2y = g.Unsqueeze(vx, i64(g, [2, 3])), g.Unsqueeze(vy, i64(g, [2, 3]))
    det = g.Sub(g.Mul(v2x, v1y), g.Mul(v1x, v2y))
    dx, dy = g.Sub(p2x, p1x), g.Sub(p2y, p1y)
    t1 = g.Div(g.Sub(g.Mul(v2x, dy), g.Mul(dx, v2y)), det)
    t2 = g.Div(g.Sub(g.Mul(v1x, dy), g.Mul(dx, v1y)), det)
    one = _f(g, 1.0, "one")
    ok = _all(g, g.Greater(g.Abs(det), _f(g, 1e-14, "tiny")), _between(g, t1, one), _between(g, t2, one))
    shape = i64(g, [0, 0, 0, 16])
    ix, iy = g.Add(p1x, g.Mul(v1x, t1)), g.Add(p1y, g.Mul(v1y, t1))
    return g.Reshape(ix, shape), g.Reshape(iy, shape), g.Reshape(ok, shape)


def _inside(g, qx, qy, ax, ay, abx, aby, dax, day):
    """Points q inside the rectangle with corner a, edge AB and edge DA (broadcast)."""
    apx, apy = g.Sub(qx, ax), g.Sub(qy, ay)
    ap_ab = g.Add(g.Mul(apx, abx), g.Mul(apy, aby))
    ap_ad = g.Neg(g.Add(g.Mul(apx, dax), g.Mul(apy, day)))
    ab_ab = g.Add(g.Mul(abx, abx), g.Mul(aby, aby))
    ad_ad = g.Add(g.Mul(dax, dax), g.Mul(day, day))
    return g.And(_between(g, ap_ab, ab_ab), _between(g, ap_ad, ad_ad))


def _contained(g, px, py, vx, vy):
    """Corners of c inside s, then corners of s inside c: x, y, mask [N, M(s), M(c), 8]."""
    def axis(t, a):
        return g.Unsqueeze(t, i64(g, [a]))

    cx, cy = axis(px, 1), axis(py, 1)  # candidate corners [N, 1, M, 4]
    sx, sy = axis(px, 2), axis(py, 2)  # selected corners [N, M, 1, 4]
    first = [_part(g, t, 0, 1) for t in (px, py, vx, vy)]  # corner A, edge AB [N, M, 1]
    last = [_part(g, t, 3, 4) for t in (vx, vy)]  # edge DA
    in_s = _inside(g, cx, cy, *[axis(t, 2) for t in first + last])
    in_c = _inside(g, sx, sy, *[axis(t, 1) for t in first + last])
    full = g.Shape(in_s)
    xs = g.Concat(g.Expand(cx, full), g.Expand(sx, full), axis=3)
    ys = g.Concat(g.Expand(cy, full), g.Expand(sy, full), axis=3)
    return xs, ys, g.Concat(in_s, in_c, axis=3)


def rotated_iou(g, boxes, clockwise: bool):
    """[N, M, M] f32: entry [n, s, c] the IoU of candidate c with selected box s."""
    px, py, vx, vy, area = _corners(g, boxes, clockwise)
    ex, ey, em = _crossings(g, px, py, vx, vy)
    kx, ky, km = _contained(g, px, py, vx, vy)
    xs, ys, mask = g.Concat(ex, kx, axis=3), g.Concat(ey, ky, axis=3), g.Concat(em, km, axis=3)
    zero = _f(g, 0.0, "zero")
    last = i64(g, [-1])
    count = g.ReduceSum(g.Cast(mask, to=TensorProto.FLOAT), last, keepdims=1)
    mx = g.Div(g.ReduceSum(g.Where(mask, xs, zero), last, keepdims=1), g.Max(count, _f(g, 1.0, "one")))
    my = g.Div(g.ReduceSum(g.Where(mask, ys, zero), last, keepdims=1), g.Max(count, _f(g, 1.0, "one")))
    dx, dy = g.Where(mask, g.Sub(xs, mx), zero), g.Where(mask, g.Sub(ys, my), zero)
    den = g.Add(g.Abs(dx), g.Abs(dy))
    r = g.Div(dx, g.Where(g.Greater(den, zero), den, _f(g, 1.0, "one")))
    key = g.Where(g.GreaterOrEqual(dy, zero), g.Sub(_f(g, 1.0, "one"), r), g.Add(_f(g, 3.0, "three"), r))
    key = g.Where(mask, key, _f(g, 8.0, "eight"))
    _, order = g.TopK(key, i64(g, [24]), axis=-1, largest=0, sorted=1, _outputs=2)
    sm = g.GatherElements(mask, order, axis=3)
    sx = g.GatherElements(dx, order, axis=3)
    sy = g.GatherElements(dy, order, axis=3)
    sx, sy = g.Where(sm, sx, _part(g, sx, 0, 1)), g.Where(sm, sy, _part(g, sy, 0, 1))
    nx = g.Concat(_part(g, sx, 1, 24), _part(g, sx, 0, 1), axis=3)
    ny = g.Concat(_part(g, sy, 1, 24), _part(g, sy, 0, 1), axis=3)
    twice = g.ReduceSum(g.Sub(g.Mul(sx, ny), g.Mul(nx, sy)), last, keepdims=0)
    inter = g.Mul(g.Abs(twice), _f(g, 0.5, "half"))
    inter = g.Where(g.Greater(g.Squeeze(count, last), _f(g, 2.0, "two")), inter, zero)
    a_c, a_s = g.Unsqueeze(g.Squeeze(area, i64(g, [2])), i64(g, [1])), area  # [N, 1, M], [N, M, 1]
    ratio = g.Div(inter, g.Sub(g.Add(a_c, a_s), inter))
    both = g.And(g.Greater(a_c, zero), g.Greater(a_s, zero))
    return g.Where(both, ratio, zero)
