"""MatMul-1: numpy matrix multiplication with optional transposition of the last two axes.

A 1-D operand is a vector (unsqueezed, multiplied, squeezed again, as ONNX MatMul does) and
OpenVINO ignores transpose_a / transpose_b for it (measured: the result is the same either way).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ..lowering.shapes import i64

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
    if v.is_const and v.shape is not None and int(np.prod(v.shape)) <= FOLD_ELEMENTS:
        return ctx.b.const_value(np.ascontiguousarray(np.transpose(v.value(), perm)), hint=f"{layer.name}/{flag}"), shape
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
    Transpose of A: Unsqueeze, MatMul, Squeeze)."""
    a, b = inputs
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
    return [ctx.b.MatMul(a, b)]
