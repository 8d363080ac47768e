"""Small shape computations shared by lowerings: constant when the values are known at convert
time, ONNX nodes (Shape, Cast, Concat ...) when they are only known at run time."""
from __future__ import annotations

import numpy as np

from ...ir.graph import is_static
from ...lowering.builder import Builder, Value

INT64_MAX = np.iinfo(np.int64).max


def i64(b: Builder, values, hint: str = "const") -> str:
    """An int64 initializer (1-D for a list, 0-D for a scalar)."""
    return b.const(values, np.int64, hint)


def folded_sum(b: Builder, terms: list, dtype, hint: str = "index") -> str:
    """Broadcast sum of ``terms`` as Add nodes: NumPy tables become initializers and come first,
    so that onnxruntime folds their sum into one tensor when the session is created (the model
    file keeps the small tables only); names of run-time tensors are added after them."""
    names = [t if isinstance(t, str) else b.const(t, dtype, hint) for t in terms]
    out = names[0]
    for n in names[1:]:
        out = b.Add(out, n)
    return out


def static_values(v: Value) -> np.ndarray | None:
    """The int64 values of a constant integer input, or None when known only at run time."""
    return np.asarray(v.value()).astype(np.int64) if v.is_const else None


def shape_of(b: Builder, v: Value) -> str:
    """int64 1-D shape of ``v``: a constant when the shape is static, else a Shape node."""
    if is_static(v.shape):
        return i64(b, list(v.shape), "shape")
    return b.Shape(v)


def dims_of(b: Builder, v: Value, start: int, end: int | None = None) -> str:
    """int64 1-D ``shape(v)[start:end]``: constant when those dims are known."""
    if v.shape is not None:
        part = v.shape[start:end]
        if all(d is not None for d in part):
            return i64(b, list(part), "dims")
    if b.opset >= 15:
        return b.Shape(v, start=start, end=end)
    return b.Slice(b.Shape(v), i64(b, [start]), i64(b, [INT64_MAX if end is None else end]), i64(b, [0]))


def as_int64(b: Builder, v: Value) -> str:
    """``v`` as an int64 tensor name (a constant when ``v`` is one; Cast when needed)."""
    if v.is_const:
        return i64(b, np.asarray(v.value()).astype(np.int64), "ints")
    return v.name if v.etype.name == "i64" else b.Cast(v, to=7)
