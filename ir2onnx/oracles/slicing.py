"""Oracles of StridedSlice-1, Slice-8 and SliceScatter-15, from the specs: each output axis is either a list of
source indices along one input axis (numpy slice semantics: negative indices count from the
end, out-of-range ones clamp) or a new axis of size 1; elements are copied through those index
lists (open index arrays, all positions at once)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _indices(dim: int, begin: int | None, end: int | None, step: int) -> list[int]:
    """The source indices ``begin:end:step`` selects along an axis of size ``dim``."""
    if step == 0:
        raise ValueError("step 0")
    lo, hi = (0, dim) if step > 0 else (-1, dim - 1)

    def norm(v, default):
        if v is None:
            return default
        v = v + dim if v < 0 else v
        return min(max(v, lo), hi)
    start = norm(begin, 0 if step > 0 else dim - 1)
    if step < 0 and dim:  # "silently clamped": a start before -dim is 0 (OpenVINO's shape inference
        start = max(start, 0)  # and runtime; Python would select nothing)
    stop = norm(end, dim if step > 0 else -1)
    out, i = [], start
    while (i < stop) if step > 0 else (i > stop):
        out.append(i)
        i += step
    return out


def _gather(x: np.ndarray, plan: list) -> np.ndarray:
    """``plan`` entries: ("take", input axis, indices) an output axis, ("new",) an output axis of
    size 1, ("pick", input axis, index) one fixed index and no output axis."""
    picks = {p[1]: p[2] for p in plan if p[0] == "pick"}
    shape = tuple(len(p[2]) if p[0] == "take" else 1 for p in plan if p[0] != "pick")
    axes = [p for p in plan if p[0] != "pick"]
    if x.ndim == 0:
        return np.array(x).reshape(shape)
    n = len(shape)
    # the source index along every input axis, for every output position at once (open arrays)
    src = [np.zeros((1,) * n, np.int64) for _ in range(x.ndim)]
    for a, i in picks.items():
        src[a] = np.full((1,) * n, i, np.int64)
    for q, p in enumerate(axes):
        if p[0] == "take":
            src[p[1]] = np.asarray(p[2], np.int64).reshape([-1 if j == q else 1 for j in range(n)])
    if 0 in shape:
        return np.empty(shape, x.dtype)
    return np.array(x[tuple(src)]).reshape(shape)


def _bits(layer, name: str, n: int) -> list[int]:
    values = list(layer.attrs.get(name) or [])
    return (values + [0] * n)[:n]


@oracle("StridedSlice", "opset1")
def strided_slice(layer, inputs):
    x = inputs[0]
    begin, end = [int(v) for v in inputs[1].reshape(-1)], [int(v) for v in inputs[2].reshape(-1)]
    n = len(begin)
    stride = [int(v) for v in inputs[3].reshape(-1)] if len(inputs) > 3 else [1] * n
    if len(end) != n or len(stride) != n or 0 in stride:
        raise InvalidLayer(layer, "begin/end/stride lengths differ or a stride is 0")
    bm, em, new, shrink, ell = (_bits(layer, m, n) for m in
                                ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"))
    if sum(ell) > 1:
        raise InvalidLayer(layer, "more than one ellipsis")
    if any((e and (a or s)) or (a and s) for e, a, s in zip(ell, new, shrink)):
        raise UnsupportedLayer(layer, "combined new_axis/shrink_axis/ellipsis bits")
    real = sum(1 for i in range(n) if not new[i] and not ell[i])
    if real > x.ndim:
        raise InvalidLayer(layer, "more sliced axes than the input has")
    plan, axis = [], 0
    for i in range(n):
        if ell[i]:
            for _ in range(x.ndim - real):
                plan.append(("take", axis, list(range(x.shape[axis]))))
                axis += 1
        elif new[i]:
            plan.append(("new",))
        elif shrink[i]:
            b = 0 if bm[i] else begin[i]  # begin_mask ignores begin: the real beginning
            idx = b + x.shape[axis] if b < 0 else b
            if not 0 <= idx < x.shape[axis]:
                raise InvalidLayer(layer, f"shrink index {begin[i]} out of range")
            plan.append(("pick", axis, idx))
            axis += 1
        else:
            b = None if bm[i] else begin[i]
            e = None if em[i] else end[i]
            plan.append(("take", axis, _indices(x.shape[axis], b, e, stride[i])))
            axis += 1
    while axis < x.ndim:
        plan.append(("take", axis, list(range(x.shape[axis]))))
        axis += 1
    return [_gather(x, plan)]


def _slice8_plan(layer, x, inputs):
    start, stop, step = ([int(v) for v in t.reshape(-1)] for t in inputs[:3])
    axes = [int(v) for v in inputs[3].reshape(-1)] if len(inputs) > 3 else list(range(len(start)))
    if not len(start) == len(stop) == len(step) == len(axes) or 0 in step:
        raise InvalidLayer(layer, "start/stop/step/axes lengths differ or a step is 0")
    if any(not -x.ndim <= a < x.ndim for a in axes) or len({a % x.ndim for a in axes}) != len(axes):
        raise InvalidLayer(layer, "axes out of range or repeated")
    spec = {a % x.ndim: (b, e, s) for a, b, e, s in zip(axes, start, stop, step)}
    return [("take", a, _indices(d, *spec[a]) if a in spec else list(range(d))) for a, d in enumerate(x.shape)]


@oracle("Slice", "opset8")
def slice8(layer, inputs):
    x = inputs[0]
    return [_gather(x, _slice8_plan(layer, x, inputs[1:]))]


@oracle("SliceScatter", "opset15")
def slice_scatter15(layer, inputs):
    """A copy of data whose elements Slice-8 would select are, in the same order, the updates."""
    x, upd = inputs[:2]
    plan = _slice8_plan(layer, x, inputs[2:])
    chosen = [p[2] for p in plan]
    if upd.shape != tuple(len(c) for c in chosen):
        raise InvalidLayer(layer, f"updates {upd.shape} do not match the slice {tuple(len(c) for c in chosen)}")
    out = x.copy()
    for pos in itertools.product(*[range(len(c)) for c in chosen]):
        out[tuple(c[i] for c, i in zip(chosen, pos))] = upd[pos]
    return [out]
