"""Transpose-1: permute the axes by a constant order (an empty order reverses them)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers

FOLD_ELEMENTS = 4096  # constant inputs up to this size are transposed at convert time


@lowers("Transpose", "opset1")
def transpose(ctx, layer, inputs):
    """Transpose-1 -> Transpose(perm) (folded for small constants; empty order: reversed axes)."""
    x, order_v = inputs
    if not order_v.is_const:
        raise UnsupportedLayer(layer, "an input_order known only at run time is not supported")
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
        return [np.ascontiguousarray(np.transpose(x.value(), order))]
    if order == list(range(len(order))):
        return [x]
    return [ctx.b.Transpose(x, perm=order)]
