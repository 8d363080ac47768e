"""The index tensors of the gather and scatter ops (and the index outputs of NonZero and
NonMaxSuppression): integer indices as ONNX takes them (:func:`i64_indices`, :func:`int_indices`),
the rank checks they share (:func:`known_ranks`, :func:`same_rank`) and the i32/i64
``output_type`` attribute (:func:`output_type`)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...errors import InvalidLayer, UnsupportedLayer

_INT64 = TensorProto.INT64


def i64_indices(ctx, layer, idx):
    """i32 or i64 indices as i64 (Cast of i32); InvalidLayer for another type."""
    if idx.etype is None or idx.etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, f"indices must be i32 or i64, got {idx.etype.name if idx.etype else '?'}")
    return idx if idx.etype.name == "i64" else ctx.b.Cast(idx, to=_INT64)


def known_ranks(layer, *values) -> None:
    """UnsupportedLayer unless every value's rank is known."""
    if any(v.rank is None for v in values):
        raise UnsupportedLayer(layer, f"{layer.type} needs inputs of known rank")


def int_indices(ctx, layer, idx, allowed=("i32", "i64")):
    """Integer indices, Cast to i64 unless their type is in ``allowed``; InvalidLayer otherwise."""
    name = idx.etype.name if idx.etype is not None else "?"
    if idx.etype is None or idx.etype.numpy is None or np.dtype(idx.etype.numpy).kind not in "iu":
        raise InvalidLayer(layer, f"indices must be an integer type, got {name}")
    return idx if name in allowed else ctx.b.Cast(idx, to=_INT64)


def same_rank(layer, *values) -> None:
    """Data, indices (and updates) of one known rank >= 1."""
    if any(v.rank is None for v in values):
        raise UnsupportedLayer(layer, f"{layer.type} needs inputs of known rank")
    if len({v.rank for v in values}) != 1 or values[0].rank == 0:
        raise InvalidLayer(layer, "data, indices (and updates) must have the same rank >= 1, got "
                                  + ", ".join(str(v.rank) for v in values))


def _etype_name(value) -> str:
    return getattr(value, "name", value)


def output_type(layer) -> str:
    """The output_type attribute as 'i64' or 'i32' (InvalidLayer otherwise)."""
    name = _etype_name(layer.attrs["output_type"])
    if name not in ("i64", "i32"):
        raise InvalidLayer(layer, f"output_type must be i64 or i32, got {name}")
    return name
