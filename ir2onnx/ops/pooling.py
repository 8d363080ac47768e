"""MaxPool-1/-8/-14 and AvgPool-1/-14/-16 (1-D/2-D/3-D pooling; AvgPool-16 adds dilations,
ONNX AveragePool's from opset 19; MaxPool-8/-14's indices output is ONNX MaxPool's Indices taken
modulo the element count of the dims from ``axis`` on).

The output size per axis follows OpenVINO: explicit/valid pads with ``floor`` or ``ceil``
rounding (``ceil_torch`` drops a last window that would start in the end padding), auto_pad
same_* gives ``ceil(X / s)`` with the padding split like Convolution. The ONNX pooling node never
uses ``auto_pad`` or ``ceil_mode``: its end pad is widened (or a Slice crops) so that floor
rounding yields exactly that size, which is exact because padded elements never count. A dynamic spatial dim
keeps the layer's pads under floor rounding (and auto_pad same_* with stride 1); with ceil,
ceil_torch or same_* with a stride > 1 the graph computes the pads from the run-time size
(:mod:`ir2onnx.ops._pooling_padding`):

* MaxPool: padding is ignored (a window with no input element gives the type's lowest finite
  value, as OpenVINO's CPU plugin does; the ONNX form then pads with that value explicitly);
* AvgPool exclude-pad: AveragePool(count_include_pad=0) divides by the input elements in the
  window; a window with none is refused (OpenVINO's CPU plugin returns NaN or -0 there);
* AvgPool include-pad with non-zero pads: OpenVINO divides by the whole kernel size even where
  the ceil rounding runs past the pads: AveragePool(count_include_pad=1) with an end pad wide
  enough for every window that touches the input, then a Pad of zeros for windows that hold
  padding only (a zero-valued Pad *before* the pool would be fused into it by onnxruntime,
  which then rejects pads >= kernel);
* AvgPool include-pad without pads: OpenVINO divides by the elements inside the input (as
  count_include_pad=0 does).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.shapes import dims_of, i64
from ._pooling_axes import Axis, axes_of
from ._pooling_padding import graph_padded, may_have_empty_window, needs_graph_pads, window_counts

MAX_TYPES = ("f16", "f32", "f64", "i8", "u8")  # ONNX MaxPool-12
AVG_TYPES = ("f16", "f32")  # onnxruntime's CPU AveragePool has no double kernel (1.32, measured)


def _slice_extra(ctx, y, axes: list[Axis], counts: list[int] | None = None):
    """Crop windows past ``counts`` (default: ``out``) that floor rounding with the widened pad
    would add."""
    counts = counts or [a.out for a in axes]
    extra = [i for i, (a, n) in enumerate(zip(axes, counts)) if n is not None and a.floor_count(n) > n]
    if not extra:
        return y
    g = ctx.b
    return g.Slice(y, i64(g, [0] * len(extra)), i64(g, [counts[i] for i in extra]),
                   i64(g, [i + 2 for i in extra]))


def _pads(axes: list[Axis], widened: bool = True) -> list[int]:
    return [a.begin for a in axes] + [a.onnx_end if widened else a.end for a in axes]


def _check_type(ctx, layer, x, allowed) -> None:
    if x.etype is None or x.etype.name not in allowed:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name if x.etype else '?'} "
                                      f"is not supported (only {', '.join(allowed)})")
    ctx.onnx_type(layer, x.etype)


def _lowest(etype):
    return np.finfo(etype.numpy).min if etype.name.startswith("f") else np.iinfo(etype.numpy).min


def _max_pool(ctx, layer, inputs, dilated: bool, with_indices: bool = False):
    x = inputs[0]
    _check_type(ctx, layer, x, MAX_TYPES)
    axes = axes_of(layer, x, dilated)
    g = ctx.b
    kw = dict(kernel_shape=[a.kernel for a in axes], strides=[a.stride for a in axes],
              dilations=[a.dilation for a in axes] if dilated else None)
    padded_in_graph = needs_graph_pads(axes)  # the pads depend on the run-time size
    past_limit = any(a.has_empty_window or a.begin >= a.kernel or a.onnx_end >= a.kernel for a in axes)
    if with_indices and (padded_in_graph or past_limit):
        raise UnsupportedLayer(layer, "the indices output with pads computed at run time or past "
                                      "onnxruntime's pad limit (pads >= kernel, or a window of padding "
                                      "only) is not supported")
    if padded_in_graph or past_limit:  # onnxruntime: pads < kernel, no "lowest value" for empty windows
        lowest = g.const(np.asarray(_lowest(x.etype), x.etype.numpy), x.etype.numpy, "lowest")
        if padded_in_graph:
            return [_slice_extra(ctx, g.MaxPool(graph_padded(g, x, axes, lowest), **kw), axes)]
        pads = [0, 0] + [a.begin for a in axes] + [0, 0] + [a.onnx_end for a in axes]
        return [_slice_extra(ctx, g.MaxPool(g.Pad(x, i64(g, pads, "pads"), lowest), **kw), axes)]
    if not with_indices:
        return [_slice_extra(ctx, g.MaxPool(x, pads=_pads(axes), **kw), axes)]
    y, flat = g.MaxPool(x, pads=_pads(axes), _outputs=2, **kw)
    return [_slice_extra(ctx, y, axes), _slice_extra(ctx, _index_from_axis(ctx, layer, x, flat), axes)]


def _index_from_axis(ctx, layer, x, flat: str) -> str:
    """ONNX's Indices (flattened over the whole input, row-major) as OpenVINO's: flattened over
    the dims from ``axis`` on, i.e. modulo their element count; Cast to index_element_type."""
    g = ctx.b
    rank = len(x.shape)
    axis = int(layer.attrs.get("axis", 0) or 0)
    if not -rank <= axis < rank:
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if axis:
        dims = x.shape[axis:]
        if all(d is not None for d in dims):
            count = g.const(np.asarray(int(np.prod(dims)), np.int64), np.int64, "count")
        else:
            count = g.ReduceProd(dims_of(g, x, axis), keepdims=0)
        flat = g.Mod(flat, count)
    etype = layer.outputs[1].etype if len(layer.outputs) > 1 else None
    return flat if etype is None or etype.name == "i64" else g.Cast(flat, to=etype.onnx)


def _indices_used(ctx, layer) -> bool:
    return any(s.layer == layer.id and s.output == 1 for l in ctx.graph.order for s in l.sources)


def _max_pool_with_indices(ctx, layer, inputs):
    """MaxPool-8/-14's two outputs; the indices are emitted only when a layer reads them."""
    if _indices_used(ctx, layer):
        return _max_pool(ctx, layer, inputs, dilated=True, with_indices=True)
    port = layer.outputs[1] if len(layer.outputs) > 1 else None
    unused = UnsupportedLayer(layer, "the indices output of MaxPool is not read by any layer")
    return _max_pool(ctx, layer, inputs, dilated=True) + [
        Value(ctx.b, port.etype if port else None, port.shape if port else None, unrepresentable=unused)]


@lowers("MaxPool", "opset1")
def max_pool1(ctx, layer, inputs):
    """MaxPool-1 -> MaxPool (explicit pads, floor rounding) [-> Slice]; windows reaching past
    onnxruntime's pad limit: Pad(lowest value) -> MaxPool."""
    return _max_pool(ctx, layer, inputs, dilated=False)


@lowers("MaxPool", "opset8")
def max_pool8(ctx, layer, inputs):
    """MaxPool-8 -> MaxPool(dilations) [-> Slice]; a read indices output -> MaxPool's Indices, Mod
    (the element count from ``axis`` on), Cast [-> Slice]."""
    return _max_pool_with_indices(ctx, layer, inputs)


@lowers("MaxPool", "opset14")
def max_pool14(ctx, layer, inputs):
    """MaxPool-14 -> as MaxPool-8, with rounding ceil_torch too."""
    return _max_pool_with_indices(ctx, layer, inputs)


def _avg_pool(ctx, layer, inputs, dilated: bool = False):
    x = inputs[0]
    _check_type(ctx, layer, x, AVG_TYPES)
    axes = axes_of(layer, x, dilated=dilated)
    exclude = bool(layer.attrs.get("exclude-pad"))
    padded = any(a.begin or a.end for a in axes)
    g = ctx.b
    kw = dict(kernel_shape=[a.kernel for a in axes], strides=[a.stride for a in axes])
    if any(a.dilation != 1 for a in axes):
        ctx.require_opset(layer, 19, "AvgPool with dilations")
        kw["dilations"] = [a.dilation for a in axes]
    if exclude and any(a.begin >= a.kernel or a.end >= a.kernel for a in axes):
        raise InvalidLayer(layer, "exclude-pad=true needs every pad smaller than the kernel")
    if needs_graph_pads(axes):
        return _avg_pool_graph_pads(ctx, layer, x, axes, exclude, kw)
    if not exclude and padded:
        # divisor: the whole kernel. Windows that hold padding only (ceil rounding) are zeros,
        # appended by a Pad after the pooling; the rest fit inside the pads onnxruntime allows.
        if any(a.begin >= a.kernel or (a.size is None and a.end >= a.kernel) for a in axes):
            raise UnsupportedLayer(layer, "exclude-pad=false with pads >= kernel is not supported")
        counts = [None if a.out is None else a.out - a.trailing_empty for a in axes]
        pads = [a.begin for a in axes] + [a.end_for(n) for a, n in zip(axes, counts)]
        y = _slice_extra(ctx, g.AveragePool(x, pads=pads, count_include_pad=1, **kw), axes, counts)
        if any(a.trailing_empty for a in axes):
            tail = [0] * (len(axes) + 2) + [0, 0] + [a.trailing_empty for a in axes]
            y = g.Pad(y, i64(g, tail, "pads"), g.const(np.zeros((), x.etype.numpy), x.etype.numpy, "zero"))
        return y
    if any(a.has_empty_window for a in axes):
        raise UnsupportedLayer(layer, "a pooling window holds no input element (ceil rounding past the "
                                      "input): OpenVINO's result there is not defined")
    return _slice_extra(ctx, g.AveragePool(x, pads=_pads(axes), count_include_pad=0, **kw), axes)


def _avg_pool_graph_pads(ctx, layer, x, axes, exclude: bool, kw):
    """AvgPool on dynamic dims whose pads the graph computes: Pad(zeros) -> AveragePool gives the
    window sums / kernel size; exclude-pad (and include-pad without pads, which OpenVINO treats
    alike) divides that by the share of input elements in the window (the same pooling over a
    mask of ones). Whether same_* pads are zero is known at run time only: Where picks then."""
    g = ctx.b
    if (exclude or not any(a.begin or a.end for a in axes)) and any(may_have_empty_window(a) for a in axes):
        raise UnsupportedLayer(layer, "ceil rounding can give a window that holds no input element on a "
                                      "dynamic dim (stride - 1 + pads_end >= kernel): OpenVINO's result "
                                      "there is not defined")
    zero = g.const(np.zeros((), x.etype.numpy), x.etype.numpy, "zero")
    sums = _slice_extra(ctx, g.AveragePool(graph_padded(g, x, axes, zero), **kw), axes)
    if not exclude and any(a.begin or a.end for a in axes):
        return sums  # include-pad with pads: the divisor is the whole kernel, padding-only windows 0
    counts = _slice_extra(ctx, window_counts(g, x, axes, x.etype), axes)
    mean = g.Div(sums, counts)
    if exclude or not any(a.rule in ("same_upper", "same_lower") for a in axes):
        return mean
    # include-pad: the whole kernel where the same_* pads are not zero (some window holds padding)
    padded = g.Less(g.ReduceMin(counts, keepdims=0), g.const(np.ones((), x.etype.numpy), x.etype.numpy, "one"))
    return g.Where(padded, sums, mean)


@lowers("AvgPool", "opset1")
def avg_pool1(ctx, layer, inputs):
    """AvgPool-1 -> AveragePool(count_include_pad=0, explicit pads) [-> Slice]; include-pad with
    pads: AveragePool(count_include_pad=1) [-> Slice] [-> Pad(zeros)]."""
    return [_avg_pool(ctx, layer, inputs)]


@lowers("AvgPool", "opset14")
def avg_pool14(ctx, layer, inputs):
    """AvgPool-14 -> as AvgPool-1, with rounding_type ceil_torch too."""
    return [_avg_pool(ctx, layer, inputs)]


@lowers("AvgPool", "opset16")
def avg_pool16(ctx, layer, inputs):
    """AvgPool-16 -> as AvgPool-14, with dilations (AveragePool's dilations: ONNX opset >= 19 when
    any is not 1)."""
    return [_avg_pool(ctx, layer, inputs, dilated=True)]
