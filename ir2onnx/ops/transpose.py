"""Transpose-1 and ShuffleChannels-1: permutations of axes, pure data movement (bit-exact).

Transpose-1: permute the axes by a constant order (an empty order reverses them).

ShuffleChannels-1: split dim ``axis`` of size C into (group, C / group), swap the two, merge.

Any rank >= 1 and any element type of 8 bits or more: pure data movement, bit-exact. Shapes are
constants when static; dynamic dims come from Shape slices, so no -1 or 0 is ever asked of Reshape
(``allowzero=1`` keeps genuine zero-size dims).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import is_static
from ..lowering.registry import lowers
from ._common.inputs import FOLD_ELEMENTS, known_rank, normalize_axis
from ._common.shapes import dims_of, i64, shape_of


@lowers("Transpose", "opset1")
def transpose(ctx, layer, inputs):
    """Transpose-1 -> Transpose(perm) (folded for small constants; empty order: reversed axes)."""
    x, order_v = inputs
    if not order_v.is_const:
        raise UnsupportedLayer(layer, "an input_order known only at run time cannot be expressed: ONNX's "
                                      "Transpose takes perm as an attribute")
    if not order_v.etype.is_integer:
        raise InvalidLayer(layer, f"input_order must be integers, not {order_v.etype.name}")
    order = [int(v) for v in np.asarray(order_v.value()).reshape(-1)]
    rank = x.rank
    if not order:
        if rank is None:
            return [ctx.b.Transpose(x)]  # ONNX's default perm reverses the axes too
        order = list(range(rank))[::-1]
    if rank is not None and sorted(order) != list(range(rank)):
        raise InvalidLayer(layer, f"input_order {order} is not a permutation of the {rank} axes")
    if rank is None and sorted(order) != list(range(len(order))):
        raise InvalidLayer(layer, f"input_order {order} is not a permutation")
    if x.is_const and x.shape is not None and int(np.prod(x.shape)) <= FOLD_ELEMENTS:
        return [np.asarray(np.transpose(x.value(), order), order="C")]
    if order == list(range(len(order))):
        return [x]
    return [ctx.b.Transpose(x, perm=order)]


# -- ShuffleChannels-1 -----------------------------------------------------------------------
def shuffle_numpy(x: np.ndarray, axis: int, group: int) -> np.ndarray:
    """Convert-time folding of a small constant (the same chain, in NumPy)."""
    shape = x.shape
    c = shape[axis]
    y = x.reshape(shape[:axis] + (group, c // group) + shape[axis + 1:])
    return np.asarray(np.swapaxes(y, axis, axis + 1), order="C").reshape(shape)


@lowers("ShuffleChannels", "opset1")
def shuffle_channels(ctx, layer, inputs):
    """ShuffleChannels-1 -> Reshape, Transpose, Reshape (split dim axis into (group, C/group),
    swap the two, merge back)."""
    x = inputs[0]
    name = x.etype.name if x.etype is not None else "?"
    if x.etype is None or x.etype.numpy is None or x.etype.bits < 8 or name == "string":
        raise UnsupportedLayer(layer, f"ShuffleChannels on element type {name} is not supported "
                                      "(types of 8 bits or more)")
    ctx.onnx_type(layer, x.etype)
    axis = normalize_axis(layer, int(layer.attrs["axis"]), known_rank(layer, x, 1))
    group = int(layer.attrs["group"])
    if group < 1:
        raise InvalidLayer(layer, f"group must be a positive integer, got {group}")
    c = x.shape[axis]
    if c is not None and c % group:
        raise InvalidLayer(layer, f"group {group} does not divide dim {axis} of size {c}")
    if group == 1 or c == group:
        return [x]  # the permutation is the identity
    if x.is_const and is_static(x.shape) and int(np.prod(x.shape)) <= FOLD_ELEMENTS:
        return [shuffle_numpy(np.asarray(x.value()), axis, group)]
    g = ctx.b
    if is_static(x.shape):
        target = i64(g, list(x.shape[:axis]) + [group, c // group] + list(x.shape[axis + 1:]), "shape")
    else:
        size = i64(g, [c // group]) if c is not None else g.Div(dims_of(g, x, axis, axis + 1), i64(g, [group]))
        parts = [dims_of(g, x, 0, axis)] if axis > 0 else []
        parts += [i64(g, [group]), size] + ([dims_of(g, x, axis + 1)] if axis < x.rank - 1 else [])
        target = g.Concat(*parts, axis=0)
    perm = list(range(x.rank + 1))
    perm[axis], perm[axis + 1] = axis + 1, axis
    y = g.Transpose(g.Reshape(x, target, allowzero=1), perm=perm)
    return [g.Reshape(y, shape_of(g, x), allowzero=1)]
