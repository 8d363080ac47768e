"""ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1 (transposed convolution).

The output is a window of the *natural* result F (no pads, no output_padding; length
``s*(X-1) + (K-1)*d + 1`` per axis) extended with zeros at the end: ``out[j] = F_ext[begin + j]``.
``begin`` and the end crop are known at convert time unless output_shape is computed at run time
(or the input's spatial dims are dynamic while output_shape is given).

With output_shape ``O`` the output is ``O`` elements of F from ``begin`` (zeros past F's end), and
``begin`` is what OpenVINO's runtime crops, which its ONNX frontend relies on (ConvTranspose with
output_shape becomes this layer with explicit pads_begin/pads_end plus an output_shape input):
explicit -> the pads_begin attribute; valid -> 0; same_upper/same_lower -> the spec's split of
``total = max(natural + output_padding - O, 0)``: ``total - total // 2`` (same_upper) or
``total // 2`` (same_lower). pads_end is not used. (The spec text's ``total // 2`` for explicit and
valid would change those models; measured on 5760 1-D cases against OpenVINO 2026.4: no mismatch.)

The ConvTranspose node never carries auto_pad or output_shape, nor negative pads: it takes the
symmetric part of the crops (CUDA-safe), a Slice the asymmetric rest, a Pad the zeros past F.
Strided layers whose kernel overlaps itself may instead use stride-phase Convs (chosen per shape).
Both forms: convolution_backprop_forms.py.
Nodes are emitted when the output's name is first read, so a following per-channel Add can still
become the bias input without leaving a dead ConvTranspose behind.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import is_static
from ..lowering.builder import LazyValue, Value
from ..lowering.registry import lowers
from . import _convolution_backprop_forms as forms

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
FLOAT_TYPES = ("f16", "f32", "f64")  # ONNX ConvTranspose's types (onnxruntime's CPU lacks f64)
# None chooses per shape (convolution_backprop_forms.choose); "convtranspose" or "phase" forces one
# formulation where it is expressible (benchmarks and tests).
FORMULATION: str | None = None


@dataclass(frozen=True)
class Geometry:
    """The validated attributes and static sizes of one layer."""

    rank: int
    groups: int
    c_out: int
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]
    output_padding: tuple[int, ...]
    auto_pad: str
    spatial: tuple[int | None, ...]  # input spatial dims (None: dynamic)

    def natural(self) -> list[int]:
        return [s * (x - 1) + (k - 1) * d + 1 for s, x, k, d in
                zip(self.strides, self.spatial, self.kernel, self.dilations)]


def _ints(layer, name: str, rank: int, minimum: int, allow_empty: bool = False) -> tuple[int, ...]:
    values = list(layer.attrs.get(name) or [])
    if allow_empty and not values:
        return (0,) * rank
    if len(values) != rank:
        raise InvalidLayer(layer, f"{name} has {len(values)} values, a {rank}-D op needs {rank}")
    if any(v < minimum for v in values):
        raise InvalidLayer(layer, f"{name}={values}: every value must be >= {minimum}")
    return tuple(values)


def geometry(layer, x: Value, w: Value, grouped: bool) -> Geometry:
    """Check the layer against the spec; raise InvalidLayer / UnsupportedLayer naming it."""
    if not is_static(w.shape):
        raise UnsupportedLayer(layer, "filters with a dynamic shape are not supported")
    extra = 3 if grouped else 2
    rank = len(w.shape) - extra
    if 0 in w.shape:
        raise InvalidLayer(layer, f"filters of shape {list(w.shape)} are empty")
    if rank not in (1, 2, 3):
        raise InvalidLayer(layer, f"filters of rank {len(w.shape)} do not describe a 1-D, 2-D or 3-D op")
    if x.shape is not None and len(x.shape) != rank + 2:
        raise InvalidLayer(layer, f"data of rank {len(x.shape)} does not fit filters of rank {len(w.shape)}")
    groups, cin_g, cout_g = w.shape[:3] if grouped else (1, *w.shape[:2])
    c_in = x.shape[1] if x.shape is not None else None
    if grouped and groups < 1:
        raise InvalidLayer(layer, f"filters have {groups} groups")
    if c_in is not None and c_in % groups:
        raise InvalidLayer(layer, f"{groups} groups do not divide the {c_in} input channels")
    if c_in is not None and c_in != groups * cin_g:
        raise InvalidLayer(layer, f"data has {c_in} channels but the filters expect {groups * cin_g}")
    auto_pad = layer.attrs.get("auto_pad", "explicit")
    if auto_pad not in AUTO_PADS:
        raise InvalidLayer(layer, f"auto_pad='{auto_pad}' is not one of {', '.join(AUTO_PADS)}")
    spatial = (None,) * rank if x.shape is None else tuple(x.shape[2:])
    return Geometry(rank, groups, groups * cout_g, tuple(w.shape[extra:]),
                    _ints(layer, "strides", rank, 1), _ints(layer, "dilations", rank, 1),
                    _ints(layer, "pads_begin", rank, 0), _ints(layer, "pads_end", rank, 0),
                    _ints(layer, "output_padding", rank, 0, allow_empty=True), auto_pad, spatial)


def _const_output_shape(layer, geo: Geometry, out_shape: Value) -> list[int] | None:
    if not out_shape.is_const:
        return None
    sizes = [int(v) for v in np.asarray(out_shape.value()).reshape(-1)]
    if len(sizes) != geo.rank:
        raise InvalidLayer(layer, f"output_shape has {len(sizes)} values, a {geo.rank}-D op needs {geo.rank}")
    if any(v < 1 for v in sizes):
        raise InvalidLayer(layer, f"output_shape={sizes} must be positive")
    return sizes


def static_window(layer, geo: Geometry, out_shape: Value | None):
    """``(begins, crops)`` per axis (``out = F_ext[begin : F - crop]``, a negative crop being zeros
    past F), or None when they are only known at run time."""
    r = geo.rank
    if out_shape is None:
        explicit = geo.auto_pad == "explicit"
        begins = geo.pads_begin if explicit else (0,) * r
        crops = [(geo.pads_end[i] if explicit else 0) - geo.output_padding[i] for i in range(r)]
        if all(d is not None for d in geo.spatial):
            sizes = [f - b - c for f, b, c in zip(geo.natural(), begins, crops)]
            if any(v < 1 for v in sizes):
                raise InvalidLayer(layer, f"the pads leave no output (spatial size {sizes})")
        return list(begins), crops
    sizes = _const_output_shape(layer, geo, out_shape)
    if sizes is None or any(d is None for d in geo.spatial):
        return None
    natural = geo.natural()
    begins = output_shape_begins(geo, natural, sizes)
    return begins, [natural[i] - begins[i] - sizes[i] for i in range(r)]


def output_shape_begins(geo: Geometry, natural, sizes) -> list[int]:
    """Where the output_shape window starts in F (module docstring: OpenVINO's runtime rule)."""
    r = geo.rank
    if geo.auto_pad == "explicit":
        return list(geo.pads_begin)
    if geo.auto_pad == "valid":
        return [0] * r
    totals = [max(natural[i] + geo.output_padding[i] - sizes[i], 0) for i in range(r)]
    return [t - t // 2 if geo.auto_pad == "same_upper" else t // 2 for t in totals]


def bias_values(other: Value, etype, c_out: int, out_rank: int) -> np.ndarray | None:
    """The [C_OUT] bias that ``other`` adds, when it is a constant with one value per channel."""
    if not other.is_const or other.etype != etype or other.shape is None or len(other.shape) > out_rank:
        return None
    full = (1,) * (out_rank - len(other.shape)) + tuple(other.shape)
    if any(d != 1 for i, d in enumerate(full) if i != 1) or full[1] not in (1, c_out):
        return None
    return np.broadcast_to(np.asarray(other.value()).reshape(-1), (c_out,)).astype(etype.numpy)


def known_filters(ctx, layer, w: Value) -> np.ndarray | None:
    """The filter values when fixed in the file: a Const, or a Const -> Convert (f16 weights)."""
    if w.is_const:
        return np.asarray(w.value())
    src, _ = ctx.graph.producer(layer, 1)
    if src.type == "Convert" and src.sources:
        const, _ = ctx.graph.producer(src, 0)
        if const.type == "Const" and const.const is not None:
            return const.const.array()
    return None


def _lower(ctx, layer, inputs, grouped: bool):
    x, w = inputs[0], inputs[1]
    out_shape = inputs[2] if len(inputs) > 2 else None
    etype = x.etype
    if etype is None or etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"element type {etype.name if etype else '?'} has no ONNX ConvTranspose")
    if w.etype != etype:
        raise InvalidLayer(layer, f"data is {etype.name} but filters are {w.etype.name}")
    ctx.onnx_type(layer, etype)
    geo = geometry(layer, x, w, grouped)
    if out_shape is not None and (not out_shape.etype.is_integer or out_shape.shape not in (None, (geo.rank,))):
        raise InvalidLayer(layer, f"output_shape must be a 1-D integer tensor of {geo.rank} values, "
                                  f"not {out_shape.etype.name} {out_shape.shape}")
    window = static_window(layer, geo, out_shape)

    def finite_filters() -> bool:  # read only when the stride-phase form would be chosen
        known = known_filters(ctx, layer, w)
        return known is not None and bool(np.isfinite(known).all())

    plan = None if window is None else forms.plan(geo, *window, FORMULATION, finite_filters,
                                                   None if x.shape is None else x.shape[0])
    # with other consumers the result without bias is needed too: folding would compute it twice
    single_use = len(ctx.graph.consumers().get((layer.id, 0), [])) == 1

    def make(bias: np.ndarray | None) -> LazyValue:
        def emit() -> str:
            if plan is not None:
                return forms.emit_phase(ctx, geo, plan, x, w, bias, etype)
            bname = None if bias is None else ctx.b.add_initializer(bias, etype, f"{layer.name}/bias")
            if window is None:
                return forms.emit_runtime(ctx, geo, x, w, bname, out_shape)
            return forms.emit_static(ctx, geo, x, w, bname, *window)

        out = LazyValue(ctx.b, etype, layer.outputs[0].shape, emit)
        pad_zeros = window is None or (plan is None and any(c < 0 for c in window[1]))
        if bias is None and not pad_zeros and single_use:  # a Pad's zeros would miss the bias
            def absorb(other: Value) -> Value | None:
                values = bias_values(other, etype, geo.c_out, geo.rank + 2)
                return None if values is None else make(values)

            out.absorb_add = absorb
        return out

    return [make(None)]


@lowers("ConvolutionBackpropData", "opset1")
def convolution_backprop_data(ctx, layer, inputs):
    """ConvolutionBackpropData-1 -> ConvTranspose [-> Pad] [-> Slice]; stride phases (static batch):
    Conv (one per residue of axes with unequal taps) [-> Concat] -> Reshape -> GatherElements ->
    Reshape, (dynamic batch) Conv -> DepthToSpace (1-D/3-D: with Reshape, Transpose) [-> Slice];
    run-time output_shape: ConvTranspose -> Shape, Sub, Max, Div, Add, Concat -> Pad -> Slice."""
    return _lower(ctx, layer, inputs, grouped=False)


@lowers("GroupConvolutionBackpropData", "opset1")
def group_convolution_backprop_data(ctx, layer, inputs):
    """GroupConvolutionBackpropData-1 -> Reshape(filters) -> ConvTranspose(group) [-> Pad] [-> Slice]
    (or the stride-phase Conv(group) forms); pads and bias as the ungrouped op."""
    return _lower(ctx, layer, inputs, grouped=True)
