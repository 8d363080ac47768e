"""AdaptiveAvgPool-8 and AdaptiveMaxPool-8 (1-D/2-D/3-D spatial; floats).

Bin ``i`` of a spatial axis of size ``H`` pooled to ``O`` outputs covers
``floor(i*H/O) .. ceil((i+1)*H/O)`` (end excluded). Bins may overlap and differ in length, so no
ONNX pooling node expresses them in general. Each axis is pooled in turn with one ``Gather`` of
an ``[O, L]`` index table (``L``: the longest bin; shorter bins repeat their last index) that
inserts the bin and in-bin axes, followed by a reduction over the in-bin axis:

* AdaptiveAvgPool: ``Where(valid, ., 0)`` and ``ReduceSum`` per axis, then one ``Div`` by the
  product of the bin lengths (the sum is exact up to float summation order);
* AdaptiveMaxPool: ``ArgMax`` (first occurrence) and ``GatherElements`` per axis, innermost
  axis first. Row-major first occurrence inside a box is the first row holding the box's maximum
  and, in it, the first column, which is what the separable ArgMax chain picks, as OpenVINO's
  reference does (``std::max_element`` per row, a later row only when strictly greater). The
  indices are flattened over the spatial dims (``[0, D*H*W)``), like OpenVINO's.

The tables come from the input's spatial dims and ``output_size``: numpy constants when both are
known at conversion time, else ``Range``/``Div``/``Min`` nodes at run time (dynamic spatial dims
and a run-time ``output_size`` both convert). All output sizes 1 and no indices read:
``GlobalAveragePool`` / ``GlobalMaxPool``. f16 is computed in f32 (exact for max; one rounding
for avg).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import known_rank
from ._common.shapes import as_int64, dims_of, i64

FLOATS = ("f16", "f32", "f64")
_FLOAT, _INT64 = 1, 7


def _table(h: int, o: int):
    """Numpy bins of an axis of ``h`` elements pooled to ``o``: start, length, index table, mask."""
    start = np.array([k * h // o for k in range(o)], np.int64)
    length = np.array([-(-(k + 1) * h // o) for k in range(o)], np.int64) - start
    t = np.arange(int(length.max()) if o else 0, dtype=np.int64)
    idx = start[:, None] + np.minimum(t[None, :], length[:, None] - 1)
    return start, length, idx, t[None, :] < length[:, None]


def _run_time_table(g, h: str, o: str):
    """The bins of :func:`_table` as ONNX nodes from int64 scalars ``h`` and ``o``."""
    zero, one = i64(g, 0), i64(g, 1)
    k = g.Range(zero, o, one)
    start = g.Div(g.Mul(k, h), o)
    end = g.Div(g.Sub(g.Add(g.Mul(g.Add(k, one), h), o), one), o)
    length = g.Sub(end, start)
    t = g.Unsqueeze(g.Range(zero, g.ReduceMax(length, keepdims=0), one), i64(g, [0]))
    col = g.Unsqueeze(length, i64(g, [1]))
    idx = g.Add(g.Unsqueeze(start, i64(g, [1])), g.Min(t, g.Sub(col, one)))
    return start, length, idx, g.Less(t, col)


class _Axis:
    """One spatial axis's bins as ONNX tensor names (``start``, ``length``: [O]; ``idx``, ``mask``:
    [O, L]) and the output size when static."""

    def __init__(self, g, x, axis: int, size: int | None, out: int | None, out_vec: str | None):
        self.axis, self.out = axis, out
        if size is not None and out is not None:
            start, length, idx, mask = _table(size, out)
            self.start, self.length = i64(g, start, "start"), i64(g, length, "length")
            self.idx, self.mask = i64(g, idx, "bins"), g.const(mask, np.bool_, "valid")
            return
        h = g.Squeeze(dims_of(g, x, axis, axis + 1), i64(g, [0]))
        o = i64(g, out) if out is not None else g.Gather(out_vec, i64(g, axis - 2))
        self.start, self.length, self.idx, self.mask = _run_time_table(g, h, o)


def _trailing(g, name: str, count: int) -> str:
    """``name`` ([O] or [O, L]) with ``count`` unit dims appended, to broadcast over later axes."""
    if not count:
        return name
    return g.Unsqueeze(name, i64(g, list(range(-count, 0))))


def _prepare(ctx, layer, inputs):
    x, size = inputs
    if x.etype is None or x.etype.name not in FLOATS:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name if x.etype else '?'} is not "
                                      "supported (floats only, as the spec says)")
    rank = known_rank(layer, x, 3)
    if rank > 5:
        raise InvalidLayer(layer, f"{layer.type} takes 3-D, 4-D or 5-D data, not {rank}-D")
    spatial = rank - 2
    if size.shape is not None and (len(size.shape) != 1 or size.shape[0] not in (None, spatial)):
        raise InvalidLayer(layer, f"output_size of shape {list(size.shape)} does not fit {spatial} spatial dims")
    outs, out_vec = [None] * spatial, None
    if size.is_const:
        outs = [int(v) for v in np.asarray(size.value()).reshape(-1)]
        if len(outs) != spatial or min(outs) < 1:
            raise InvalidLayer(layer, f"output_size {outs} must hold {spatial} positive sizes")
    else:
        out_vec = as_int64(ctx.b, size)
    dims = [None] * spatial if x.shape is None else list(x.shape[2:])
    g = ctx.b
    axes = [_Axis(g, x, 2 + i, dims[i], outs[i], out_vec) for i in range(spatial)]
    data = x.name if x.etype.name != "f16" else g.Cast(x, to=_FLOAT)
    return x, data, axes


def _back(ctx, x, y: str) -> str:
    return y if x.etype.name != "f16" else ctx.b.Cast(y, to=x.etype.onnx)


@lowers("AdaptiveAvgPool", "opset8")
def adaptive_avg_pool8(ctx, layer, inputs):
    """AdaptiveAvgPool-8 -> per spatial axis Gather(bin table), Where(valid), ReduceSum; then Div by
    the bin sizes (all output sizes 1: GlobalAveragePool). Tables constant or computed at run time."""
    x, data, axes = _prepare(ctx, layer, inputs)
    g = ctx.b
    if all(a.out == 1 for a in axes):
        return [_back(ctx, x, g.GlobalAveragePool(data))]
    dtype = np.float64 if x.etype.name == "f64" else np.float32
    zero = g.const(np.zeros((), dtype), dtype, "zero")
    count = None
    for a in axes:
        rest = len(axes) - 1 - (a.axis - 2)
        picked = g.Where(_trailing(g, a.mask, rest), g.Gather(data, a.idx, axis=a.axis), zero)
        data = g.ReduceSum(picked, i64(g, [a.axis + 1]), keepdims=0)
        n = _trailing(g, g.Cast(a.length, to=1 if dtype == np.float32 else 11), rest)
        count = n if count is None else g.Mul(count, n)
    return [_back(ctx, x, g.Div(data, count))]


@lowers("AdaptiveMaxPool", "opset8")
def adaptive_max_pool8(ctx, layer, inputs):
    """AdaptiveMaxPool-8 -> per spatial axis, innermost first: Gather(bin table), ArgMax(first),
    GatherElements (values, and the flat index carried from the inner axes), Add(start) and
    Mul(stride) for the index; Cast to index_element_type."""
    x, data, axes = _prepare(ctx, layer, inputs)
    g = ctx.b
    flat, rank = None, len(axes) + 2
    for a in reversed(axes):
        rest = rank - 1 - a.axis
        window = g.Gather(data, a.idx, axis=a.axis)
        arg = g.ArgMax(window, axis=a.axis + 1, keepdims=1, select_last_index=0)
        inbin = i64(g, [a.axis + 1])
        data = g.Squeeze(g.GatherElements(window, arg, axis=a.axis + 1), inbin)
        pos = g.Add(g.Squeeze(arg, inbin), _trailing(g, a.start, rest))
        if flat is not None:
            stride = g.ReduceProd(dims_of(g, x, a.axis + 1), keepdims=0)
            inner = g.Squeeze(g.GatherElements(g.Gather(flat, a.idx, axis=a.axis), arg, axis=a.axis + 1), inbin)
            pos = g.Add(g.Mul(pos, stride), inner)
        flat = pos
    etype = layer.outputs[1].etype if len(layer.outputs) > 1 else None
    if etype is not None and etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, f"index_element_type {etype.name} is not i32 or i64")
    indices = flat if etype is None or etype.name == "i64" else g.Cast(flat, to=etype.onnx)
    return [_back(ctx, x, data), indices]
