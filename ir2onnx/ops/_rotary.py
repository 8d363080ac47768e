"""Rotary position embedding as RotaryEmbedding-23 (the ``onnx`` target at opset >= 23), where
the IR's pattern is exactly it.

OpenVINO's PyTorch frontend writes Llama-style ``apply_rotary_pos_emb`` (``rotate_half``) as::

    T = Concat(f, f, last axis)                       # f: positions times frequencies [B, S, D/2]
    C = Unsqueeze(Cos(T), 1); S = Unsqueeze(Sin(T), 1)                               # [B, 1, S, D]
    Add(Multiply(x, C), Multiply(Concat(Multiply(x[..., D/2:], -1), x[..., :D/2], last axis), S))

with ``x`` [B, H, S, D]. That is RotaryEmbedding-23(x, Cos(f), Sin(f)) without position ids
(``interleaved`` 0: the halves), element for element: the first half is ``x1*cos + (-x2)*sin``,
the second ``x2*cos + x1*sin``, and ``Cos(Concat(f, f))`` repeats ``Cos(f)``; ONNX's
``x1*cos - x2*sin`` rounds as ``x1*cos + (-x2)*sin`` does (a negation is exact). Every piece is
checked: the same ``x`` in the three places, the two Slices exactly the halves of the last axis
(step 1), the factor exactly -1, the Concat of the same ``f`` twice, Unsqueeze on axis 1, f32.
Anything else keeps the decomposed form.
"""
from __future__ import annotations

import numpy as np

from ..lowering.builder import Value


def _const(ctx, layer, index: int):
    src = layer.sources[index] if index < len(layer.sources) else None
    v = ctx.values.get((src.layer, src.output)) if src is not None else None
    return np.asarray(v.value()) if v is not None and v.is_const else None


def _producer(ctx, layer, index: int):
    g = ctx.graph
    if layer is None or index >= len(layer.sources) or layer.sources[index].layer not in g.layers:
        return None
    return g.producer(layer, index)[0]


def _half(ctx, s, x_src, d: int, upper: bool) -> bool:
    """Whether ``s`` is Slice-8 of ``x_src`` taking exactly the lower (or upper) half of the last axis."""
    if s is None or s.type != "Slice" or s.sources[0] != x_src or len(s.sources) < 4:
        return False
    start, stop, step = (_const(ctx, s, i) for i in (1, 2, 3))
    axes = _const(ctx, s, 4) if len(s.sources) > 4 else np.array([0])
    if any(v is None or v.size != 1 for v in (start, stop, step, axes)) or int(step.reshape(())) != 1 \
            or int(axes.reshape(())) not in (-1, 3):
        return False
    lo, hi = int(start.reshape(())), int(stop.reshape(()))
    return (lo, hi >= d) == (d // 2, True) if upper else (lo, hi) == (0, d // 2)


def _table(ctx, unsqueeze, kind: str):
    """``f`` when ``unsqueeze`` is Unsqueeze(kind(Concat(f, f)), 1), else None (a Source)."""
    if unsqueeze is None or unsqueeze.type != "Unsqueeze":
        return None
    axes = _const(ctx, unsqueeze, 1)
    fn = _producer(ctx, unsqueeze, 0)
    cat = _producer(ctx, fn, 0) if fn is not None and fn.type == kind else None
    if axes is None or axes.size != 1 or int(axes.reshape(())) != 1 or cat is None or cat.type != "Concat" \
            or len(cat.sources) != 2 or cat.sources[0] != cat.sources[1] or int(cat.attrs.get("axis", 0)) not in (-1, 2):
        return None
    return cat.sources[0]


def standard(ctx, layer) -> Value | None:
    """RotaryEmbedding-23 for the Add ``layer`` when it ends the pattern above, else None."""
    target = getattr(ctx, "target", None)  # (a unit test's stand-in context may have none)
    if target is None or not target.opset23_forms or ctx.opset < 23:
        return None
    ms = [_producer(ctx, layer, i) for i in (0, 1)]
    if any(m is None or m.type != "Multiply" for m in ms):
        return None
    for plain, rotated in (ms, ms[::-1]):
        for xi in (0, 1):
            out = _match(ctx, plain, xi, rotated)
            if out is not None:
                return out
    return None


def _match(ctx, plain, xi: int, rotated) -> Value | None:
    x_src = plain.sources[xi]
    x = ctx.values.get((x_src.layer, x_src.output))
    if x is None or x.is_const or x.etype.name != "f32" or x.shape is None or len(x.shape) != 4 \
            or x.shape[-1] is None or x.shape[-1] % 2:
        return None
    d = x.shape[-1]
    cos = _table(ctx, _producer(ctx, plain, 1 - xi), "Cos")
    for ci in (0, 1):
        cat = _producer(ctx, rotated, ci)
        sin = _table(ctx, _producer(ctx, rotated, 1 - ci), "Sin")
        if cat is None or cat.type != "Concat" or len(cat.sources) != 2 or sin is None or sin != cos \
                or int(cat.attrs.get("axis", 0)) not in (-1, 3):
            continue
        neg, lower = _producer(ctx, cat, 0), _producer(ctx, cat, 1)
        if neg is None or neg.type != "Multiply" or not _half(ctx, lower, x_src, d, upper=False):
            continue
        for ni in (0, 1):
            factor = _const(ctx, neg, 1 - ni)
            if factor is not None and factor.size == 1 and float(factor.reshape(())) == -1.0 \
                    and _half(ctx, _producer(ctx, neg, ni), x_src, d, upper=True):
                return _emit(ctx, x, ctx.values.get((cos.layer, cos.output)))
    return None


def _emit(ctx, x: Value, f: Value | None) -> Value | None:
    if f is None or f.shape is None or len(f.shape) != 3 or f.shape[-1] != x.shape[-1] // 2 or f.etype.name != "f32":
        return None
    g = ctx.b
    return Value(g, x.etype, x.shape, name=g.RotaryEmbedding(x, g.Cos(f), g.Sin(f)))
