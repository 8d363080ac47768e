"""MatMul-1 and Einsum-7.

MatMul-1: numpy matrix multiplication with optional transposition of the last two axes. A 1-D
operand is a vector (unsqueezed, multiplied, squeezed again, as ONNX MatMul does) and OpenVINO
ignores transpose_a / transpose_b for it (measured: the result is the same either way).

Einsum maps to ONNX Einsum with the output subscript written out (OpenVINO's implicit output:
the ellipsis, then the labels seen once, sorted); onnxruntime implements float, double, f16, int32
and int64; f16 is computed in f32 (Cast, Einsum, Cast) like OpenVINO's f32 inference precision.
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering import merged_matmuls
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.shapes import i64

# ONNX MatMul-13's types; onnxruntime's CPU runs f16, f32, f64, i32, i64, u32, u64.
FOLD_ELEMENTS = 4096  # constant operands up to this size are transposed at convert time
TYPES = ("f16", "f32", "f64", "bf16", "i32", "i64", "u32", "u64")


def _swap_last_two(ctx, layer, v, flag: str):
    """``v`` with its last two axes swapped (Transpose), or unchanged for a 1-D operand."""
    if v.rank is None:
        raise UnsupportedLayer(layer, f"{flag}=true needs the operand's rank to be known")
    if v.rank < 2:
        return v, v.shape
    perm = list(range(v.rank - 2)) + [v.rank - 1, v.rank - 2]
    shape = tuple(v.shape[p] for p in perm)
    if v.transposed is not None:  # e.g. an int8 weight behind a DequantizeLinear, stored transposed
        moved = v.transposed(perm)
        if moved is not None:
            return moved, shape
    if v.is_const and v.shape is not None and int(np.prod(v.shape)) <= FOLD_ELEMENTS:
        return ctx.b.const_value(np.asarray(np.transpose(v.value(), perm), order="C"), hint=f"{layer.name}/{flag}"), shape
    return ctx.b.Transpose(v, perm=perm), shape


def _check_shapes(layer, a_shape, b_shape) -> None:
    if a_shape is None or b_shape is None or not a_shape or not b_shape:
        if a_shape == () or b_shape == ():
            raise InvalidLayer(layer, "MatMul operands must have rank >= 1 (got a scalar)")
        return
    k_a = a_shape[-1]
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if k_a is not None and k_b is not None and k_a != k_b:
        raise InvalidLayer(layer, f"inner dimensions differ: {list(a_shape)} x {list(b_shape)} "
                                  "(after transpose_a / transpose_b)")
    for x, y in zip(reversed(a_shape[:-2]), reversed(b_shape[:-2])):
        if x is not None and y is not None and x != y and 1 not in (x, y):
            raise InvalidLayer(layer, f"batch dimensions of {list(a_shape)} and {list(b_shape)} do not broadcast")


@lowers("MatMul", "opset1")
def matmul(ctx, layer, inputs):
    """MatMul-1 -> [Transpose] -> MatMul (transposes of small constants folded; a 1-D B after a
    Transpose of A: Unsqueeze, MatMul, Squeeze; compressed weights of siblings reading the same A:
    one MatMul, Split, :mod:`ir2onnx.lowering.merged_matmuls`)."""
    a, b = inputs
    weight = b
    merged = merged_matmuls.piece(ctx, layer, a) if a.etype == b.etype else None
    if merged is not None:  # q/k/v, gate/up: one MatMul for the siblings (see merged_matmuls)
        merged.absorb_add = lambda other: _vector_bias(ctx, merged, other)
        return [merged]
    if a.etype != b.etype:
        raise InvalidLayer(layer, f"operands have different element types ({a.etype.name} and {b.etype.name})")
    if a.etype.name not in TYPES:
        raise UnsupportedLayer(layer, f"element type {a.etype.name} has no ONNX MatMul (supported: {', '.join(TYPES)})")
    ctx.onnx_type(layer, a.etype)
    a_shape, b_shape = a.shape, b.shape
    if layer.attrs.get("transpose_a"):
        a, a_shape = _swap_last_two(ctx, layer, a, "transpose_a")
    if layer.attrs.get("transpose_b"):
        b, b_shape = _swap_last_two(ctx, layer, b, "transpose_b")
    _check_shapes(layer, a_shape, b_shape)
    if layer.attrs.get("transpose_a") and not isinstance(a, Value) and b_shape is not None and len(b_shape) == 1:
        # onnxruntime 1.31 fuses Transpose -> MatMul with a 1-D B into a FusedMatMul that computes
        # a wrong product (measured: A [3,2] transposed times B [3]); a 2-D B [K,1] fuses correctly.
        g = ctx.b
        return [g.Squeeze(g.MatMul(a, g.Unsqueeze(b, i64(g, [1], "axes"))), i64(g, [-1], "axes"))]
    out = Value(ctx.b, weight.etype, layer.outputs[0].shape, name=ctx.b.MatMul(a, b))
    if weight.transposed is not None and b is not weight:  # a compressed weight behind DequantizeLinear
        out.absorb_add = lambda other: _vector_bias(ctx, out, other)
    return [out]


def _vector_bias(ctx, out: Value, other: Value) -> Value | None:
    """Add(MatMul, bias) with a constant bias of shape [1, .., 1, N] as Add(MatMul, bias[N]): the
    same sums, but onnxruntime keeps DequantizeLinear -> MatMul fusable into MatMulNBits. Its
    MatMulAddFusion turns a 2-D MatMul + [1, N] Add into Gemm first, and its DequantizeLinear
    fusion takes a Gemm only with a 1-D bias (measured, 1.32: DequantizeLinear + FusedGemm)."""
    shape, rank = other.shape, out.rank
    if not other.is_const or other.etype != out.etype or shape is None or rank is None \
            or not 2 <= len(shape) <= rank or any(d != 1 for d in shape[:-1]) \
            or shape[-1] != out.shape[-1] or shape[-1] is None:
        return None
    bias = ctx.b.const_value(np.asarray(other.value()).reshape(-1), hint=f"{ctx.b.layer_name}/bias")
    return Value(ctx.b, out.etype, out.shape, name=ctx.b.Add(out, bias))


# -- Einsum-7 --------------------------------------------------------------------------------
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
