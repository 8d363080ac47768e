"""ConvertLike-1, Eye-9 and Einsum-7: small utility ops of real OpenVINO IRs.

ConvertLike is Convert-1 with the destination type taken from the second input (Convert-1's own
lowering runs, so the conversion rules live in one place). Eye folds to a constant when its sizes
and diagonal are constants (and the result is small), else a Range/Equal mask, Cast and Expand.
Einsum maps to ONNX Einsum with the output subscript written out (OpenVINO's implicit output:
the ellipsis, then the labels seen once, sorted); onnxruntime implements float, double, f16, int32
and int64; f16 is computed in f32 (Cast, Einsum, Cast) like OpenVINO's f32 inference precision.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ..lowering.shapes import i64
from .infrastructure import convert

FOLD_ELEMENTS = 4096


@lowers("ConvertLike", "opset1")
def convert_like(ctx, layer, inputs):
    """ConvertLike-1 -> Cast to the like-input's type (Convert-1's lowering: folded for small
    constants and for source types ONNX lacks); the like-input's values are never read."""
    data, like = inputs
    if like.etype is None:
        raise InvalidLayer(layer, "the like input has no element type")
    as_convert = dataclasses.replace(layer, attrs={**layer.attrs, "destination_type": like.etype})
    return convert(ctx, as_convert, [data])


# -- Eye-9 ---------------------------------------------------------------------------------------
def _scalar_input(layer, v, what: str) -> None:
    if v.etype is None or v.etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, f"{what} must be i32 or i64, got {v.etype.name if v.etype else '?'}")
    if v.shape is not None and not (v.shape == () or v.shape in ((1,), (None,))):
        raise InvalidLayer(layer, f"{what} must be a scalar or a 1-D tensor of one element")


def _as_scalar(g, v) -> str:
    name = v.name if v.etype.name == "i64" else g.Cast(v, to=7)
    return g.Reshape(name, i64(g, [], "scalar_shape"))


@lowers("Eye", "opset9")
def eye9(ctx, layer, inputs):
    """Eye-9 -> a folded constant, or Range, Unsqueeze, Add, Equal, Cast, Expand."""
    rows, cols, diag = inputs[:3]
    batch = inputs[3] if len(inputs) > 3 else None
    for v, what in ((rows, "num_rows"), (cols, "num_columns"), (diag, "diagonal_index")):
        _scalar_input(layer, v, what)
    if batch is not None and batch.shape is not None and len(batch.shape) != 1:
        raise InvalidLayer(layer, f"batch_shape must be 1-D, got rank {len(batch.shape)}")
    dst = layer.attrs["output_type"]
    to = ctx.onnx_type(layer, dst)
    if dst.numpy is None:
        raise UnsupportedLayer(layer, f"output type {dst.name} has no NumPy counterpart")
    known = [v for v in inputs if v.is_const]
    for v, what in ((rows, "num_rows"), (cols, "num_columns")):
        if v.is_const and int(np.asarray(v.value()).reshape(-1)[0]) < 0:
            raise InvalidLayer(layer, f"{what} is negative")
    if batch is not None and batch.is_const and (np.asarray(batch.value()) < 0).any():
        raise InvalidLayer(layer, "batch_shape has a negative dimension")
    if len(known) == len(inputs):
        n, m, k = (int(np.asarray(v.value()).reshape(-1)[0]) for v in (rows, cols, diag))
        lead = [int(d) for d in np.asarray(batch.value()).reshape(-1)] if batch is not None else []
        if int(np.prod(lead + [n, m])) <= FOLD_ELEMENTS:
            mat = np.eye(n, m, k, dtype=np.float64).astype(dst.numpy)
            return [np.ascontiguousarray(np.broadcast_to(mat, tuple(lead) + (n, m)))]
    g = ctx.b
    n, m = _as_scalar(g, rows), _as_scalar(g, cols)
    zero, one = i64(g, 0, "zero"), i64(g, 1, "one")
    r = g.Unsqueeze(g.Range(zero, n, one), i64(g, [1], "axes"))
    c = g.Unsqueeze(g.Range(zero, m, one), i64(g, [0], "axes"))
    mask = g.Equal(g.Add(r, _as_scalar(g, diag)), c)
    out = g.Cast(mask, to=to)
    if batch is None:
        return [out]
    lead = batch.name if batch.etype.name == "i64" else g.Cast(batch, to=7)
    size = g.Concat(lead, g.Shape(out), axis=0)
    return [g.Expand(out, size)]


# -- Einsum-7 ------------------------------------------------------------------------------------
_TERM = re.compile(r"^(?:[A-Za-z]|\.\.\.)*$")
_EINSUM_TYPES = {"f32", "f64", "i32", "i64", "f16"}


def _labels(term: str) -> list[str]:
    return re.findall(r"\.\.\.|[A-Za-z]", term)


def explicit_equation(layer, equation: str, count: int) -> str:
    """The equation with its output subscript written out; InvalidLayer when malformed."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != count:
        raise InvalidLayer(layer, f"equation '{equation}' has {len(terms)} input subscripts for {count} inputs")
    for t in terms + ([rhs] if arrow else []):
        if not _TERM.match(t) or t.count("...") > 1:
            raise InvalidLayer(layer, f"subscript '{t}' of '{equation}' is not letters with at most one '...'")
    if arrow:
        out = _labels(rhs)
        seen = {lab for t in terms for lab in _labels(t)}
        if len(set(out)) != len(out) or any(lab not in seen and lab != "..." for lab in out):
            raise InvalidLayer(layer, f"output subscript '{rhs}' repeats a label or names one no input has")
        if "..." not in seen and "..." in out:
            raise InvalidLayer(layer, f"output subscript '{rhs}' has '...' but no input does")
        return eq
    counts: dict[str, int] = {}
    for t in terms:
        for lab in _labels(t):
            counts[lab] = counts.get(lab, 0) + 1
    once = sorted(lab for lab, n in counts.items() if n == 1 and lab != "...")
    return lhs + "->" + ("..." if "..." in counts else "") + "".join(once)


@lowers("Einsum", "opset7")
def einsum7(ctx, layer, inputs):
    """Einsum-7 -> Einsum (explicit output subscript; f16: Cast, Einsum, Cast)."""
    if not inputs:
        raise InvalidLayer(layer, "Einsum needs at least one input")
    eq = explicit_equation(layer, str(layer.attrs["equation"]), len(inputs))
    et = inputs[0].etype
    if any(v.etype != et for v in inputs):
        raise InvalidLayer(layer, "Einsum inputs must share one element type")
    if et is None or et.name not in _EINSUM_TYPES:
        raise UnsupportedLayer(layer, f"Einsum on {et.name if et else '?'}: onnxruntime implements Einsum "
                                      "for f32, f64, i32 and i64 only (f16 via f32)")
    for v, t in zip(inputs, eq.split("->")[0].split(",")):
        labs = _labels(t)
        if v.shape is not None and ("..." not in labs and len(v.shape) != len(labs)
                                    or "..." in labs and len(v.shape) < len(labs) - 1):
            raise InvalidLayer(layer, f"subscript '{t}' does not fit an input of rank {len(v.shape)}")
    g = ctx.b
    names = _pad_ellipses(layer, g, inputs, eq.split("->")[0].split(","))
    if et.name == "f16":
        out = g.Einsum(*[g.Cast(n, to=1) for n in names], equation=eq)
        return [g.Cast(out, to=et.onnx)]
    return [g.Einsum(*names, equation=eq)]


def _pad_ellipses(layer, g, inputs, terms) -> list:
    """Inputs whose '...' covers fewer dims than another's get leading 1s there (Unsqueeze):
    ONNX shape inference rejects ellipses of different ranks, broadcasting 1s is the same."""
    ranks = {i: len(v.shape) - len(_labels(t)) + 1 for i, (v, t) in enumerate(zip(inputs, terms))
             if "..." in t and v.shape is not None}
    if any("..." in t and v.shape is None for v, t in zip(inputs, terms)):
        if sum("..." in t for t in terms) > 1:
            raise UnsupportedLayer(layer, "'...' over an input of unknown rank next to another '...' "
                                          "(ONNX needs the ellipses' ranks to match)")
    widest = max(ranks.values(), default=0)
    names = []
    for i, (v, t) in enumerate(zip(inputs, terms)):
        if i in ranks and ranks[i] < widest:
            pos = _labels(t).index("...")
            names.append(g.Unsqueeze(v, i64(g, list(range(pos, pos + widest - ranks[i])), "axes")))
        else:
            names.append(v)
    return names
