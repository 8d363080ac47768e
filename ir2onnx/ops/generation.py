"""The ops that generate a tensor from scalars: Range-4 and Eye-9.

Range-4 -> Range, folded to a constant when start, stop and step are.

ONNX Range takes one type for its three inputs (f32, f64, i16, i32, i64), so the inputs get a
Cast: for integer outputs to ``output_type`` first (floats toward zero, as the spec says), for
float outputs straight to the working type (the spec computes in an accumulation type at least
as wide as the output: f16 outputs are counted and accumulated in f32, then rounded once).
8/16-bit integer outputs run in i32 and are cast back (exact).

Eye-9 folds to a constant when its sizes and diagonal are constants (and the result is small),
else a Range/Equal mask, Cast and Expand.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..ir.limits import MAX_ELEMENTS
from ..lowering.registry import lowers
from ._common.inputs import FOLD_ELEMENTS, foldable
from ._common.shapes import i64

_RANGE_TYPES = {"f32": 1, "f64": 11, "i16": 5, "i32": 6, "i64": 7}
_WIDER = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "i32", "u16": "i32", "u32": "i64"}


def range_count(start: float, stop: float, step: float, dtype: np.dtype) -> int:
    """How many elements Range-4 gives (ValueError for a zero step): for integer outputs the
    inputs are cast to the output type (toward zero); float outputs count
    max(ceil((stop - start) / step), 0) in float64."""
    if np.dtype(dtype).kind in "iu":
        start, stop, step = (math.trunc(v) for v in (start, stop, step))
        if step == 0:
            raise ValueError("step is zero")
        return max(-((start - stop) // step), 0)
    start, stop, step = (float(v) for v in (start, stop, step))
    if step == 0:
        raise ValueError("step is zero")
    if not math.isfinite((stop - start) / step):
        raise ValueError("the count is not finite")
    return max(math.ceil((stop - start) / step), 0)


def range_values(start: float, stop: float, step: float, dtype: np.dtype) -> np.ndarray:
    """Range-4 at convert time (:func:`range_count` elements)."""
    count = range_count(start, stop, step, dtype)
    if np.dtype(dtype).kind in "iu":
        start, step = math.trunc(start), math.trunc(step)
        return (start + np.arange(count, dtype=np.int64) * step).astype(dtype)
    return (float(start) + np.arange(count, dtype=np.float64) * float(step)).astype(dtype)


def _scalar(layer, v, what: str) -> None:
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must be a scalar, got shape {list(v.shape)}")


def _range(ctx, layer, inputs, out):
    start, stop, step = inputs
    for v, what in zip(inputs, ("start", "stop", "step")):
        _scalar(layer, v, what)
    if out.numpy is None or out.name == "boolean":
        raise UnsupportedLayer(layer, f"output_type {out.name} is not supported")
    if foldable(start, stop, step):
        vals = [np.asarray(v.value()).reshape(-1)[0].item() for v in inputs]
        try:
            count = range_count(*vals, out.numpy)
        except ValueError as e:
            raise InvalidLayer(layer, f"{e} after the cast to output_type") from None
        if count > MAX_ELEMENTS:  # computed from constants: no input makes it smaller
            raise InvalidLayer(layer, f"start {vals[0]}, stop {vals[1]}, step {vals[2]} give {count} "
                                      f"elements, over the limit of {MAX_ELEMENTS} (2^36) per tensor")
        if count <= FOLD_ELEMENTS:
            return [range_values(*vals, out.numpy)]
    g = ctx.b
    work = out.name if out.name in _RANGE_TYPES else _WIDER.get(out.name)
    if work is None:
        raise UnsupportedLayer(layer, f"Range with output_type {out.name} is not supported")
    to = _RANGE_TYPES[work]

    def cast(v):  # integer outputs: to output_type first (floats truncate); then the working type
        x = v.name
        if out.is_integer and v.etype != out:
            x = g.Cast(x, to=out.onnx)
        if v.etype.name != work or (out.is_integer and work != out.name):
            x = g.Cast(x, to=to)
        return x if v.shape == () else g.Reshape(x, g.const([], np.int64, "scalar_shape"))

    result = g.Range(cast(start), cast(stop), cast(step))
    return [result if work == out.name else g.Cast(result, to=out.onnx)]


@lowers("Range", "opset4")
def range4(ctx, layer, inputs):
    """Range-4 -> Range (Cast of the inputs to output_type; 8-bit/16-bit outputs via i32/f32)."""
    out = layer.attrs["output_type"]
    out = element_type(out) if isinstance(out, str) else out
    return _range(ctx, layer, inputs, out)


# -- Eye-9 -----------------------------------------------------------------------------------
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
            return [np.asarray(np.broadcast_to(mat, tuple(lead) + (n, m)), order="C")]
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
