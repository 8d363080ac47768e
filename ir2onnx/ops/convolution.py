"""Convolution-1 and GroupConvolution-1 (forward convolution, 1-D/2-D/3-D).

The Conv node always carries explicit, non-negative ``pads`` (never ONNX ``auto_pad``):
``same_upper`` / ``same_lower`` are resolved here by OpenVINO's rule: output ``ceil(X / s)``,
total padding ``max((ceil(X/s) - 1)*s + (K-1)*d + 1 - X, 0)``, the odd element at the end for
same_upper and at the beginning for same_lower; ``valid`` pads nothing; ``explicit`` takes
pads_begin / pads_end. With a dynamic spatial dim the same_* pads are still known when the
stride is 1 (total ``(K-1)*d``); otherwise the graph computes them from the run-time size
(Shape, arithmetic) and pads the input with zeros (Pad) before a Conv without pads.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import is_static
from ..lowering.builder import LazyValue
from ..lowering.registry import lowers
from ._common.shapes import i64
from ._common.windows import attr_ints, same_pads, same_pads_in_graph
from ._convolution_integer import integer_conv

AUTO_PADS = ("explicit", "notset", "same_upper", "same_lower", "valid")
FLOAT_TYPES = ("f16", "f32", "f64")  # ONNX Conv's types (onnxruntime's CPU: f16, f32)
INT_TYPES = ("i32",)  # exact through ConvInteger on bytes (convolution_integer.py)


def conv_pads(layer, rank: int, spatial, kernel, strides, dilations) -> list[int]:
    """ONNX ``pads`` ([begins..., ends...]) for the layer's auto_pad mode."""
    mode = layer.attrs.get("auto_pad") or "explicit"
    if mode not in AUTO_PADS:
        raise InvalidLayer(layer, f"auto_pad='{mode}' is not one of {', '.join(AUTO_PADS)}")
    if mode == "valid":
        return [0] * (2 * rank)
    if mode in ("explicit", "notset"):
        begins = list(layer.attrs.get("pads_begin") or [])
        ends = list(layer.attrs.get("pads_end") or [])
        for name, values in (("pads_begin", begins), ("pads_end", ends)):
            if len(values) != rank:
                raise InvalidLayer(layer, f"{name} has {len(values)} values, a {rank}-D op needs {rank}")
            if any(v < 0 for v in values):
                raise UnsupportedLayer(layer, f"negative {name}={values} (cropping) is not supported")
        return begins + ends
    if any(x is None and s > 1 for x, s in zip(spatial, strides)):
        return None  # the pads depend on a run-time size: computed in the graph (see _lower)
    pairs = [same_pads(layer, mode, x, k, s, d) for x, k, s, d in zip(spatial, kernel, strides, dilations)]
    return [p[0] for p in pairs] + [p[1] for p in pairs]


def _lower(ctx, layer, inputs, grouped: bool):
    x, w = inputs
    etype = x.etype
    if etype is None or etype.name not in FLOAT_TYPES + INT_TYPES:
        raise UnsupportedLayer(layer, f"element type {etype.name if etype else '?'} is not supported "
                                      f"(supported: {', '.join(FLOAT_TYPES + INT_TYPES)}; OpenVINO's frontends write "
                                      "integer convolutions as i32, and its CPU plugin saturates 8-bit ones)")
    if w.etype != etype:
        raise InvalidLayer(layer, f"data is {etype.name} but filters are {w.etype.name}")
    ctx.onnx_type(layer, etype)
    if not is_static(w.shape):
        raise UnsupportedLayer(layer, "filters with a dynamic shape are not supported")
    extra = 3 if grouped else 2
    rank = len(w.shape) - extra
    if rank not in (1, 2, 3):
        raise InvalidLayer(layer, f"filters of rank {len(w.shape)} do not describe a 1-D, 2-D or 3-D "
                                  f"{'grouped ' if grouped else ''}convolution")
    if 0 in w.shape:
        raise InvalidLayer(layer, f"filters of shape {list(w.shape)} are empty")
    if x.shape is not None and len(x.shape) != rank + 2:
        raise InvalidLayer(layer, f"data of rank {len(x.shape)} does not fit filters of rank {len(w.shape)}")
    groups, c_out, c_in_g = (w.shape[0], w.shape[0] * w.shape[1], w.shape[2]) if grouped else (1, *w.shape[:2])
    c_in = None if x.shape is None else x.shape[1]
    if c_in is not None and c_in != groups * c_in_g:
        raise InvalidLayer(layer, f"data has {c_in} channels but the filters expect {groups * c_in_g}"
                                  + (f" ({groups} groups of {c_in_g})" if grouped else ""))
    kernel = list(w.shape[extra:])
    strides = attr_ints(layer, "strides", rank, 1)
    dilations = attr_ints(layer, "dilations", rank, 1)
    spatial = [None] * rank if x.shape is None else list(x.shape[2:])
    pads = conv_pads(layer, rank, spatial, kernel, strides, dilations)
    if pads is None:  # same_* with a stride > 1 on a dynamic dim: Pad(zeros) by pads the graph computes
        x, pads = _same_padded(ctx, layer, x, spatial, kernel, strides, dilations), [0] * (2 * rank)
    for i, size in enumerate(spatial):
        span = (kernel[i] - 1) * dilations[i] + 1
        if size is not None and size + pads[i] + pads[rank + i] < span:
            raise InvalidLayer(layer, f"spatial axis {i}: the padded input ({size} + pads) is smaller "
                                      f"than the dilated kernel ({span})")
    weights = w
    if grouped:
        moved = w.reshaped((c_out, c_in_g, *kernel)) if w.reshaped is not None else None
        weights = moved if moved is not None else ctx.b.Reshape(
            w, i64(ctx.b, [c_out, c_in_g, *kernel], "filter_shape"), allowzero=1)
    attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, pads=pads,
                 group=groups if grouped else None)
    if etype.name in INT_TYPES:
        return [integer_conv(ctx.b, x, weights, **attrs)]
    if ctx.quantized == "exact" or len(ctx.graph.consumers().get((layer.id, 0), [])) != 1:
        return [ctx.b.Conv(x, weights, **attrs)]
    return [_with_bias_slot(ctx, layer, x, weights, attrs, c_out, rank + 2)]


def _with_bias_slot(ctx, layer, x, weights, attrs, c_out: int, out_rank: int):
    """The Conv as a LazyValue that takes a following per-channel constant Add as its bias (the
    ``--quantized qdq`` form: onnxruntime fuses DequantizeLinear -> Conv(bias) -> [Relu] ->
    QuantizeLinear into QLinearConv only without an Add in between; Conv adds B to each output
    element in the same f32 rounding as the Add)."""
    etype = x.etype

    def make(bias):
        def emit() -> str:
            b = None if bias is None else ctx.b.add_initializer(bias, etype, f"{layer.name}/bias")
            return ctx.b.Conv(x, weights, *([b] if b else []), **attrs)

        out = LazyValue(ctx.b, etype, layer.outputs[0].shape, emit)
        if bias is None:
            out.absorb_add = lambda other: _absorb(other, etype, c_out, out_rank, make)
        return out

    return make(None)


def _absorb(other, etype, c_out: int, out_rank: int, make):
    if not other.is_const or other.etype != etype or other.shape is None or len(other.shape) > out_rank:
        return None
    full = (1,) * (out_rank - len(other.shape)) + tuple(other.shape)
    if any(d != 1 for i, d in enumerate(full) if i != 1) or full[1] not in (1, c_out):
        return None
    return make(np.broadcast_to(np.asarray(other.value()).reshape(-1), (c_out,)).astype(etype.numpy))


def _same_padded(ctx, layer, x, spatial, kernel, strides, dilations):
    """x padded with zeros by OpenVINO's same_* pads, from the run-time sizes where dynamic."""
    g, mode = ctx.b, layer.attrs.get("auto_pad")
    begins, ends = [i64(g, [0, 0])], [i64(g, [0, 0])]
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)):
        if size is None:
            b, e = same_pads_in_graph(g, x, i, mode, (k - 1) * d + 1, s)
        else:
            b, e = (i64(g, [p]) for p in same_pads(layer, mode, size, k, s, d))
        begins.append(b), ends.append(e)
    zero = g.const(np.zeros((), x.etype.numpy), x.etype.numpy, "zero")
    return g.value(g.Pad(x, g.Concat(*begins, *ends, axis=0), zero), x.etype, x.shape)


@lowers("Convolution", "opset1")
def convolution(ctx, layer, inputs):
    """Convolution-1 -> Conv (explicit pads; auto_pad resolved at convert time); i32 -> Cast,
    BitShift (bytes), ConvInteger, Mul, Add (exact modulo 2^32)."""
    return _lower(ctx, layer, inputs, grouped=False)


@lowers("GroupConvolution", "opset1")
def group_convolution(ctx, layer, inputs):
    """GroupConvolution-1 -> Reshape(filters [G, C_OUT/G, C_IN/G, ...] -> [C_OUT, C_IN/G, ...]),
    Conv(group=G) (explicit pads; auto_pad resolved at convert time)."""
    return _lower(ctx, layer, inputs, grouped=True)
