"""Checks and reads of a layer's inputs shared by the lowerings of several op families.

Whether inputs are small constants to fold at convert time (:func:`foldable`), a constant input's
values (:func:`const_ints`), a known rank and an axis in range (:func:`known_rank`,
:func:`normalize_axis`), operands of one element type that broadcast (:func:`same_etype`,
:func:`check_broadcast`), float-only inputs (:func:`float_input`), and the float element-wise
pattern built on them (:func:`float_elementwise`: a small constant folded in float64, else one
emitted node).
"""
from __future__ import annotations

import numpy as np

from ...errors import InvalidLayer, UnsupportedLayer
from ...ir.graph import Shape
from ...lowering.builder import Value

FOLD_ELEMENTS = 4096
FLOAT_TYPES = ("f16", "f32", "f64")
INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def foldable(*values: Value) -> bool:
    """All constants, small enough to compute at convert time."""
    return all(v.is_const and v.shape is not None for v in values) and all(
        int(np.prod(v.shape, dtype=np.int64)) <= FOLD_ELEMENTS for v in values)


def known_rank(layer, x: Value, minimum: int = 0, what: str = "data") -> int:
    """``x``'s rank: UnsupportedLayer when unknown, InvalidLayer below ``minimum``."""
    if x.rank is None:
        raise UnsupportedLayer(layer, f"{layer.type} needs {what} of known rank")
    if x.rank < minimum:
        raise InvalidLayer(layer, f"{layer.type} needs {what} of rank >= {minimum}")
    return x.rank


def normalize_axis(layer, value, rank: int, what: str = "axis") -> int:
    """``value`` in ``[0, rank)``; InvalidLayer outside ``[-rank, rank)``."""
    if not -rank <= value < rank:
        raise InvalidLayer(layer, f"{what} {value} is out of range for rank {rank}")
    return value % rank


def const_ints(layer, v: Value, what: str, why: str | None = None) -> list[int]:
    """The values of a constant input; UnsupportedLayer when it is known only at run time (``why``:
    the reason ONNX cannot take it then, e.g. an attribute)."""
    if not v.is_const:
        if why:
            raise UnsupportedLayer(layer, f"{what} known only at run time cannot be expressed: {why}")
        raise UnsupportedLayer(layer, f"{what} known only at run time is not supported")
    return [int(a) for a in np.asarray(v.value()).reshape(-1)]


def check_broadcast(layer, *shapes: Shape) -> None:
    """Shapes compatible under the layer's ``auto_broadcast`` (numpy or none), where known."""
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode not in ("numpy", "none"):
        raise UnsupportedLayer(layer, f"auto_broadcast='{mode}' is not supported (only 'numpy' and 'none')")
    known = [s for s in shapes if s is not None]
    if mode == "none":
        if len({len(s) for s in known}) > 1 or any(
                len({d for d in dims if d is not None}) > 1 for dims in zip(*known)):
            raise InvalidLayer(layer, "auto_broadcast='none' needs equal shapes, got "
                                      + " and ".join(str(list(s)) for s in known))
        return
    rank = max((len(s) for s in known), default=0)
    for axis in range(1, rank + 1):
        dims = {s[-axis] for s in known if len(s) >= axis and s[-axis] is not None} - {1}
        if len(dims) > 1:
            raise InvalidLayer(layer, "shapes " + ", ".join(str(list(s)) for s in known)
                               + " do not broadcast (numpy rules)")


def same_etype(layer, *values) -> None:
    """InvalidLayer unless every operand has the same element type."""
    if len({v.etype for v in values}) > 1:
        names = " and ".join(v.etype.name for v in values)
        raise InvalidLayer(layer, f"operands have different element types ({names})")


def float_input(ctx, layer, x) -> None:
    """UnsupportedLayer unless ``x`` is f16, f32 or f64 (and ONNX holds it at the model's opset)."""
    if x.etype is None or x.etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name if x.etype else '?'} "
                                      f"is not supported (only {', '.join(FLOAT_TYPES)})")
    ctx.onnx_type(layer, x.etype)


def float_elementwise(ctx, layer, inputs, emit, fold):
    """Float-only element-wise op: ``fold(float64 array)`` for small constants, else ``emit(x)``."""
    x = inputs[0]
    float_input(ctx, layer, x)
    if foldable(x):
        with np.errstate(all="ignore"):
            return [np.asarray(fold(x.value().astype(np.float64))).astype(x.etype.numpy)]
    return [emit(x)]
