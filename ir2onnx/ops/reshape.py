"""Reshape-1: a target pattern with ``-1`` (inferred) and ``0`` (copy or literal, by special_zero).

The pattern is resolved at convert time as far as the input's shape allows: each element becomes
a literal, a copy of input dim ``j`` or the inferred dim, and the ONNX Reshape gets a shape that
never asks onnxruntime to combine a 0 with a -1. A pattern known only at run time is resolved in
the graph with OpenVINO's rules (see :func:`_runtime_pattern`).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import shape_str
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.inputs import FOLD_ELEMENTS
from ._common.shape_vectors import DimOf, elements_of, vector_value
from ._common.shapes import as_int64, dims_of, i64

INFER = "infer"


@lowers("Reshape", "opset1")
def reshape(ctx, layer, inputs):
    """Reshape-1 -> Reshape with a resolved shape: a constant when the input shape allows, else
    Concat of constants and Shape slices, or (pattern known only at run time) Equal, Where,
    ReduceProd, Div ... computing the resolved shape, then Reshape(allowzero=1)."""
    x, pattern = inputs
    if pattern.shape is not None and len(pattern.shape) != 1:
        raise InvalidLayer(layer, f"shape input must be 1-D, got {shape_str(pattern.shape)}")
    if not pattern.etype.is_integer:
        raise InvalidLayer(layer, f"shape input must be an integer tensor, got {pattern.etype.name}")
    special_zero = layer.attrs["special_zero"]
    terms = _terms(layer, x, elements_of(pattern), special_zero)
    if terms is None:
        return [_runtime_pattern(ctx, layer, x, pattern, special_zero)]
    return [_known_pattern(ctx, layer, x, terms, special_zero)]


def _terms(layer, x: Value, elements, special_zero: bool) -> list | None:
    """The pattern as ``int`` literals, ``DimOf(x, j)`` copies (of dims that are dynamic or 0) and
    INFER; None when some element is known only at run time (or could change meaning then)."""
    if elements is None or any(e is None for e in elements):
        return None
    rank = None if x.shape is None else len(x.shape)
    terms: list = []
    for i, e in enumerate(elements):
        if isinstance(e, DimOf):
            if e.value is not x or (special_zero and e.index != i):
                return None  # another tensor's dim, or a value whose 0 would turn into a copy
        elif isinstance(e, int):
            if e < -1:
                raise InvalidLayer(layer, f"shape value {e} at index {i} is invalid (values must be >= -1)")
            if e == -1:
                e = INFER
            elif e == 0 and special_zero:
                if rank is None:
                    return None
                if i >= rank:
                    raise InvalidLayer(layer, f"special_zero copies dim {i}, but the input "
                                              f"{shape_str(x.shape)} has rank {rank}")
                e = x.shape[i] or DimOf(x, i)  # a known non-zero size is just a literal
        terms.append(e)
    if terms.count(INFER) > 1:
        raise InvalidLayer(layer, f"more than one -1 in the shape {list(elements)}")
    copied = [t.index for t in terms if isinstance(t, DimOf)]
    if len(set(copied)) != len(copied):
        return None  # the same dynamic dim twice: the -1 does not cancel, resolve at run time
    return terms


def _known_pattern(ctx, layer, x: Value, terms: list, special_zero: bool):
    g = ctx.b
    literals = [t for t in terms if isinstance(t, int)]
    copied = {t.index for t in terms if isinstance(t, DimOf)}
    numel = None if x.shape is None or None in x.shape else math.prod(x.shape)
    if 0 in literals and numel not in (None, 0):
        raise InvalidLayer(layer, f"a literal 0 (special_zero=false) needs an empty input, got {shape_str(x.shape)}")
    inferred: int | None = None
    rest: list[int] = []  # input dims whose product / the literals' product is the -1 (at run time)
    if INFER in terms:
        if 0 in literals:
            raise InvalidLayer(layer, "-1 cannot be inferred next to a literal 0: every value keeps the element "
                                      "count at 0 (OpenVINO itself resolves it differently by path)")
        if x.shape is None:
            raise UnsupportedLayer(layer, "inferring -1 on an input of unknown rank is not supported")
        rest = [k for k in range(len(x.shape)) if k not in copied]  # copied dims cancel (OpenVINO)
        dynamic = [k for k in rest if x.shape[k] is None]
        static = math.prod(x.shape[k] for k in rest if x.shape[k] is not None)
        if not dynamic:
            if static % math.prod(literals):
                raise InvalidLayer(layer, _no_fit(terms, x))
            inferred, rest = static // math.prod(literals), []
        elif len(dynamic) == 1 and static == math.prod(literals) and (special_zero or not copied):
            # the static dims cancel the literals: the -1 is that one dynamic dim (GQA's
            # [B, kv, rep, S, D] -> [B, kv*rep, -1, D]), a Shape slice instead of a ReduceProd
            inferred, rest = DimOf(x, dynamic[0]), []
    out = [inferred if t == INFER else _static_dim(x, t) for t in terms]
    if all(isinstance(t, int) for t in out):
        out_shape = tuple(out)
        if numel is not None and math.prod(out_shape) != numel:
            raise InvalidLayer(layer, _no_fit(terms, x))
        if x.is_const and math.prod(x.shape) <= FOLD_ELEMENTS:
            return np.asarray(x.value()).reshape(out_shape)
        emit = lambda: g.Reshape(x, i64(g, list(out_shape)), allowzero=1 if 0 in out_shape else None)
        elements = elements_of(x)
        if elements is not None and len(out_shape) <= 1:
            return vector_value(g, x.etype, out_shape, elements, emit)
        return emit()
    if copied and INFER in terms and not special_zero:
        return _zero_guarded(g, x, terms, out, rest, copied, math.prod(literals))
    if rest and not copied and 0 not in literals:
        # only positive literals beside the -1: ONNX infers it exactly as OpenVINO does
        return g.Reshape(x, i64(g, [-1 if t == INFER else t for t in terms]))
    if not rest and 0 not in out and all(t.index == i for i, t in enumerate(out) if isinstance(t, DimOf)):
        # every copy stays at its index: ONNX's allowzero=0 copies them, nothing is left to infer
        return g.Reshape(x, i64(g, [0 if isinstance(t, DimOf) else t for t in out]))
    if rest:
        prod = g.ReduceProd(g.Gather(g.Shape(x), i64(g, rest)), keepdims=1)
        out = [g.Div(prod, i64(g, [math.prod(literals)])) if t is None else t for t in out]
    return g.Reshape(x, _concat(g, x, out), allowzero=1)


def _zero_guarded(g, x: Value, terms: list, out: list, rest: list[int], copied: set, literals: int) -> str:
    """special_zero=false: the copied dims are literal values that may be 0 at run time. Cancelling
    them against the input's dims is exact only while they are not; with a 0 among them the
    element count is 0 and OpenVINO's runtime (like the run-time pattern path) makes the -1 a 0."""
    k = terms.index(INFER)
    if out[k] is not None:
        value = i64(g, [out[k]])
    else:
        prod = g.ReduceProd(g.Gather(g.Shape(x), i64(g, rest)), keepdims=1) if rest else i64(g, [1])
        value = g.Div(prod, i64(g, [literals]))
    sizes = g.ReduceProd(g.Gather(g.Shape(x), i64(g, sorted(copied))), keepdims=1)
    out = list(out)
    out[k] = g.Where(g.Equal(sizes, i64(g, [0])), i64(g, [0]), value)
    return g.Reshape(x, _concat(g, x, out), allowzero=1)


def _static_dim(x: Value, t):
    """A copied dim's size when the input shape knows it."""
    if isinstance(t, DimOf) and x.shape[t.index] is not None:
        return x.shape[t.index]
    return t


def _concat(g, x: Value, out: list) -> str:
    """int64 1-D shape from literals, copied dims (Shape slices) and a computed [1] tensor."""
    pieces: list = []
    for t in out:
        if isinstance(t, int):
            if pieces and isinstance(pieces[-1], list):
                pieces[-1].append(int(t))
            else:
                pieces.append([int(t)])
        elif isinstance(t, DimOf):
            pieces.append(dims_of(g, x, t.index, t.index + 1))
        else:
            pieces.append(t)
    names = [i64(g, p) if isinstance(p, list) else p for p in pieces]
    return names[0] if len(names) == 1 else g.Concat(*names, axis=0)


def _no_fit(terms: list, x: Value) -> str:
    shown = ",".join("-1" if t == INFER else f"d{t.index}" if isinstance(t, DimOf) else str(t) for t in terms)
    return f"the shape [{shown}] cannot hold the elements of the {shape_str(x.shape)} input"


def _runtime_pattern(ctx, layer, x: Value, pattern: Value, special_zero: bool) -> str:
    """Resolve a run-time pattern in the graph, then Reshape(allowzero=1) with no 0-copy or -1.

    special_zero=true: 0 copies the input dim at the same index; -1 = product of the input dims
    not copied / product of the other values. special_zero=false: -1 = element count / product
    of the other values, and 0 when that product is 0 (OpenVINO's runtime). A value < -1, a second
    -1 or a copy beyond the input rank leaves an invalid dim (-2) that onnxruntime rejects.
    """
    g = ctx.b
    if pattern.shape is None or pattern.shape[0] is None:
        raise UnsupportedLayer(layer, "a run-time shape input of unknown length is not supported")
    if x.shape is None:
        raise UnsupportedLayer(layer, "a run-time shape input on an input of unknown rank is not supported")
    length, rank = pattern.shape[0], len(x.shape)
    p = as_int64(g, pattern)
    if length == 0:
        return g.Reshape(x, p, allowzero=1)
    one, minus_two = i64(g, 1), i64(g, -2)
    is_infer = g.Equal(p, i64(g, -1))
    if special_zero:
        is_copy = g.Equal(p, i64(g, 0))
        dims = dims_of(g, x, 0, min(length, rank)) if rank else None
        if length > rank:
            pad = i64(g, [-2] * (length - rank))
            dims = pad if dims is None else g.Concat(dims, pad, axis=0)
        base = g.Where(is_copy, dims, p)
        if rank:
            mask = g.Slice(is_copy, i64(g, [0]), i64(g, [rank])) if length >= rank else \
                g.Concat(is_copy, g.const(np.zeros(rank - length, bool), bool), axis=0)
            num = g.ReduceProd(g.Where(mask, one, dims_of(g, x, 0)), keepdims=0)
        else:
            num = one
        den = g.ReduceProd(g.Where(g.Or(is_copy, is_infer), one, p), keepdims=0)
        inferred = g.Div(num, den)
    else:
        base = p
        den = g.ReduceProd(g.Where(is_infer, one, p), keepdims=0)
        inferred = g.Div(g.Size(x), g.Max(den, one))
    count = g.ReduceSum(g.Cast(is_infer, to=7), keepdims=0)
    inferred = g.Where(g.Greater(count, one), minus_two, inferred)
    return g.Reshape(x, g.Where(is_infer, inferred, base), allowzero=1)
