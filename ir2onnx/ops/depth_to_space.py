"""DepthToSpace-1 and SpaceToDepth-1: blocks of channels <-> blocks of space, every rank >= 3.

Both are pure data movement, lowered in one of these ways, chosen per layer at convert time:

* the ONNX operator, where onnxruntime runs it bit-exactly: 4-D NCHW input of f32, f64, i8 or u8
  (its f16 kernels go through float and quiet signalling NaNs, so f16 takes the paths below)
  (DepthToSpace mode DCR == blocks_first, CRD == depth_first; ONNX SpaceToDepth has only the
  blocks_first order). onnxruntime rejects other ranks and has no kernel for other types;
* otherwise Reshape -> Transpose -> Reshape over the spec's split axes
  (:func:`move`), which works for every rank and element type;
  with every dim but the batch static and output rows of >= 16 bytes it becomes
  [Transpose ->] Reshape -> Gather of whole rows (one pass that writes the output; rows of W
  that end in a block axis: one Gather per phase and a Concat), and where onnxruntime would
  copy element by element, two Transposes; never a Transpose that onnxruntime runs as many
  small thread-pool matrix transposes (``depth_to_space_move.slow_transpose``).

DepthToSpace also takes the optional IR attribute ``data_format`` (TensorFlow's layouts):
``NCHW`` (absent: OpenVINO semantics), ``NHWC`` (channels last) and ``NCHW_VECT_C``
(``[N, C/4, spatial..., 4]``, logical channel ``outer*4 + inner``). ``mode`` then picks how the
channel index splits, exactly as for NCHW; TensorFlow's own order is ``blocks_first``. TensorFlow
defines these layouts for 2 spatial axes; here they take any number K >= 1 the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.graph import shape_str
from ..lowering.builder import Builder, Value
from ..lowering.registry import lowers
from . import _depth_to_space_move as chain, _depth_to_space_rows as depth_to_space_rows
from ._depth_to_space_move import Dim

# element types onnxruntime 1.31's CPU DepthToSpace / SpaceToDepth kernels accept (4-D only)
ONNX_OP_TYPES = frozenset({"f32", "f64", "i8", "u8"})  # f16: its kernels quiet signalling NaNs
MODES = ("blocks_first", "depth_first")
LAYOUTS = ("NCHW", "NHWC", "NCHW_VECT_C")
MAX_BLOCK = 2**62


@dataclass(frozen=True)
class Params:
    """A validated layer: block size, mode, layout, rank and number of spatial axes."""

    bs: int
    mode: str
    layout: str
    rank: int
    k: int


def params(layer, x, ops_layouts=LAYOUTS) -> Params:
    """Validate the attributes and the input's rank; InvalidLayer / UnsupportedLayer otherwise."""
    bs, mode = layer.attrs.get("block_size", 1), layer.attrs.get("mode", "blocks_first")
    layout = layer.attrs.get("data_format") or "NCHW"
    if not isinstance(bs, int) or bs < 1:
        raise InvalidLayer(layer, f"block_size must be an integer >= 1, got {bs}")
    if mode not in MODES:
        raise InvalidLayer(layer, f"mode '{mode}' is not one of: {', '.join(MODES)}")
    if layout not in ops_layouts:
        if layout in LAYOUTS:
            raise UnsupportedLayer(layer, f"data_format '{layout}' is not defined for {layer.type}")
        raise InvalidLayer(layer, f"data_format '{layout}' is not one of: {', '.join(ops_layouts)}")
    if x.shape is None:
        raise UnsupportedLayer(layer, "the input's rank must be known at convert time")
    rank = len(x.shape)
    least = 4 if layout == "NCHW_VECT_C" else 3
    if rank < least:
        raise InvalidLayer(layer, f"input {shape_str(x.shape)} has rank {rank}; {layout} needs rank >= {least}")
    k = rank - (3 if layout == "NCHW_VECT_C" else 2)
    if bs**k > MAX_BLOCK:
        raise InvalidLayer(layer, f"block_size^{k} = {bs}^{k} is too large")
    if layout == "NCHW_VECT_C" and x.shape[-1] not in (None, 4):
        raise InvalidLayer(layer, f"NCHW_VECT_C input {shape_str(x.shape)}: the last dim must be 4")
    return Params(bs, mode, layout, rank, k)


def check_declared(layer, shape) -> None:
    """The IR's declared output shape must agree with the op's wherever both are known."""
    declared = layer.outputs[0].shape if layer.outputs else None
    if declared is None or len(declared) != len(shape):
        if declared:
            raise InvalidLayer(layer, f"output is declared {shape_str(declared)}, the op gives {shape_str(shape)}")
        return
    if any(a is not None and b is not None and a != b for a, b in zip(declared, shape)):
        raise InvalidLayer(layer, f"output is declared {shape_str(declared)}, the op gives {shape_str(shape)}")


def _channel_split(p: Params, channels: Dim) -> list[tuple[str, Dim]]:
    """The channel axis split by ``mode``: blocks_first (b_1..b_K, c), depth_first (c, b_1..b_K)."""
    blocks = [(f"b{i}", Dim.const(p.bs)) for i in range(p.k)]
    return blocks + [("c", channels)] if p.mode == "blocks_first" else [("c", channels)] + blocks


def _d2s_plan(p: Params, shape) -> tuple[list, list]:
    """(split of each input axis into labelled sub-axes, output axes as label groups)."""
    k, bs, r = p.k, p.bs, p.rank
    spatial_out = [(f"d{i}", f"b{i}") for i in range(k)]
    if p.layout == "NHWC":
        cp = Dim.of_axis(r - 1, div=bs**k)
        split = [[("n", Dim.of_axis(0))]] + [[(f"d{i}", Dim.of_axis(1 + i))] for i in range(k)]
        return split + [_channel_split(p, cp)], [("n",)] + spatial_out + [("c",)]
    cp = Dim.of_axis(1, div=bs**k)
    split = [[("n", Dim.of_axis(0))], _channel_split(p, cp)]
    split += [[(f"d{i}", Dim.of_axis(2 + i))] for i in range(k)]
    if p.layout == "NCHW":
        return split, [("n",), ("c",)] + spatial_out
    v = Dim.of_axis(r - 1) if shape[-1] == 4 else Dim.const(4)  # dynamic: Reshape checks it is 4
    return split + [[("v", v)]], [("n",), ("c",)] + spatial_out + [("v",)]  # NCHW_VECT_C


def _check_channels(layer, p: Params, shape) -> None:
    axis = p.rank - 1 if p.layout == "NHWC" else 1
    c = shape[axis]
    if c is None:
        return
    total = c * 4 if p.layout == "NCHW_VECT_C" else c
    blocks = p.bs**p.k
    if total % blocks:
        raise InvalidLayer(layer, f"input {shape_str(shape)}: {total} channels are not divisible by "
                                  f"block_size^{p.k} = {blocks}")
    if p.layout == "NCHW_VECT_C" and (total // blocks) % 4:
        raise InvalidLayer(layer, f"input {shape_str(shape)}: NCHW_VECT_C needs output channels "
                                  f"({total // blocks}) that are a multiple of 4")


def _vect_c_depth_first(ctx, layer, p: Params, x):
    """NCHW_VECT_C with depth_first: the channel index c = (o*4 + i)*bs^K + b straddles the
    outer/inner channel axes, so first gather the channels ([N, C/4, S.., 4] -> [N, C, S..]),
    then split them as (o, i, b_1..b_K) and move i back to the end."""
    k = p.k
    whole = [[("n", Dim.of_axis(0))], [("o", Dim.of_axis(1))]]
    whole += [[(f"d{i}", Dim.of_axis(2 + i))] for i in range(k)] + [[("v", Dim.const(4))]]
    x = _chain(ctx, layer, x, whole, [("n",), ("o", "v")] + [(f"d{i}",) for i in range(k)])
    o = Dim.of_axis(1, div=4 * p.bs**k)
    split = [[("n", Dim.of_axis(0))], [("o", o), ("v", Dim.const(4))]
             + [(f"b{i}", Dim.const(p.bs)) for i in range(k)]]
    split += [[(f"d{i}", Dim.of_axis(2 + i))] for i in range(k)]
    return _chain(ctx, layer, x, split, [("n",), ("o",)] + [(f"d{i}", f"b{i}") for i in range(k)] + [("v",)])


@lowers("DepthToSpace", "opset1")
def depth_to_space(ctx, layer, inputs):
    """DepthToSpace-1 -> DepthToSpace (4-D NCHW f32/f64/i8/u8) | [Transpose,] Reshape, Gather
    (static but the batch, rows >= 16 bytes; Gather per phase + Concat where the rows end in a
    block axis) | Reshape, Transpose, Reshape (two Transposes with a Reshape between where that
    avoids an element-wise copy).

    ``[N, C, D_1..D_K] -> [N, C/bs^K, D_1*bs, .., D_K*bs]`` (or the NHWC / NCHW_VECT_C layout).
    """
    x = inputs[0]
    p = params(layer, x)
    ctx.onnx_type(layer, x.etype)
    _check_channels(layer, p, x.shape)
    if p.layout == "NCHW_VECT_C" and p.mode == "depth_first" and p.bs > 1:
        y = _vect_c_depth_first(ctx, layer, p, x)
    else:
        split, groups = _d2s_plan(p, x.shape)
        if use_onnx_op(p, x) and p.bs > 1:
            y = _onnx_op(ctx, "DepthToSpace", x, p, split, groups)
        else:
            y = _chain(ctx, layer, x, split, groups)
    check_declared(layer, y.shape)
    return [y]


def move(b: Builder, x: Value, split: list[list[tuple[str, Dim]]], groups: list[tuple[str, ...]]) -> Value:
    """Split each axis of ``x`` into its labelled sub-axes, reorder them into ``groups`` order and
    merge each group into one output axis: folded for a small constant, else the row Gather
    (:func:`~ir2onnx.ops._depth_to_space_rows.gather_rows`) where it applies, else the Reshape /
    Transpose chain of :mod:`~ir2onnx.ops._depth_to_space_move`."""
    subs = [(label, d) for axis in split for label, d in axis]
    size = {label: d for label, d in subs}
    order = [label for g in groups for label in g]
    assert sorted(order) == sorted(size), (order, list(size))
    out_dims = [Dim.prod(size[l] for l in g) for g in groups]
    out_shape = tuple(d.static(x.shape) for d in out_dims)
    keep = [l for l, _ in subs if size[l].static(x.shape) != 1]
    src = chain.merge_runs(keep, [l for l in order if l in keep])
    dst = sorted(src, key=lambda run: order.index(run[0]))
    perm = [src.index(run) for run in dst]
    if x.is_const and math.prod(x.shape) <= chain.FOLD_ELEMENTS:
        return chain.fold(b, x, src, perm, size, out_shape)
    rows = depth_to_space_rows.gather_rows(b, x, split, groups, out_shape)
    if rows is not None:
        return rows
    if perm == sorted(perm):  # no element moves: a reshape (or nothing at all)
        if out_dims == [Dim.of_axis(i) for i in range(len(x.shape))]:
            return x
        return Value(b, x.etype, out_shape, name=chain.reshape(b, x, out_dims))
    src_dims = [Dim.prod(size[l] for l in run) for run in src]
    name = x.name if src_dims == [Dim.of_axis(i) for i in range(len(x.shape))] else chain.reshape(b, x, src_dims)
    dims = src_dims
    for p, merge in chain.transposes(perm, [d.static(x.shape) for d in src_dims], x.etype.bits):
        name, dims = b.Transpose(name, perm=p), [dims[i] for i in p]
        if merge:
            dims = [Dim.prod(dims[i] for i in g) for g in merge]
            name = chain.reshape(b, x, dims, name)
    if dims != out_dims:  # (a Reshape into a graph output costs onnxruntime a copy)
        name = chain.reshape(b, x, out_dims, name)
    return Value(b, x.etype, out_shape, name=name)


def _chain(ctx, layer, x, split, groups) -> Value:
    """:func:`move`; ONNX's Reshape and Transpose take the float8 / 4-bit types from opset 21."""
    y = move(ctx.b, x, split, groups)
    if y is not x and x.etype.min_opset > 13:
        ctx.require_opset(layer, max(21, x.etype.min_opset), f"moving {x.etype.name} data (Transpose)")
    return y


def use_onnx_op(p: Params, x) -> bool:
    """True where onnxruntime's own kernel runs the layer: 4-D NCHW of the types it implements."""
    return p.layout == "NCHW" and p.rank == 4 and x.etype.name in ONNX_OP_TYPES and not x.is_const


def _onnx_op(ctx, op: str, x, p: Params, split, groups) -> Value:
    """The ONNX DepthToSpace / SpaceToDepth node (SpaceToDepth has no mode: blocks_first only)."""
    by_label = {label: d for axis in split for label, d in axis}
    shape = tuple(Dim.prod(by_label[l] for l in g).static(x.shape) for g in groups)
    mode = {"blocks_first": "DCR", "depth_first": "CRD"}[p.mode] if op == "DepthToSpace" else None
    return Value(ctx.b, x.etype, shape, name=ctx.b.op(op, x, blocksize=p.bs, mode=mode))


def _s2d_plan(p: Params) -> tuple[list, list]:
    k, bs = p.k, p.bs
    split = [[("n", Dim.of_axis(0))], [("c", Dim.of_axis(1))]]
    split += [[(f"d{i}", Dim.of_axis(2 + i, div=bs)), (f"b{i}", Dim.const(bs))] for i in range(k)]
    blocks = tuple(f"b{i}" for i in range(k))
    channel = blocks + ("c",) if p.mode == "blocks_first" else ("c",) + blocks
    return split, [("n",), channel] + [(f"d{i}",) for i in range(k)]


@lowers("SpaceToDepth", "opset1")
def space_to_depth(ctx, layer, inputs):
    """SpaceToDepth-1 -> SpaceToDepth (4-D blocks_first f32/f64/i8/u8) | [Transpose,] Reshape,
    Gather (static but the batch, rows >= 16 bytes) | Reshape, Transpose, Reshape (two Transposes
    with a Reshape between where that avoids an element-wise copy).

    ``[N, C, D_1*bs, .., D_K*bs] -> [N, C*bs^K, D_1, .., D_K]``.
    """
    x = inputs[0]
    p = params(layer, x, ops_layouts=("NCHW",))
    ctx.onnx_type(layer, x.etype)
    for i, d in enumerate(x.shape[2:]):
        if d is not None and d % p.bs:
            raise InvalidLayer(layer, f"input {shape_str(x.shape)}: spatial dim {i + 2} ({d}) is not "
                                      f"divisible by block_size {p.bs}")
    split, groups = _s2d_plan(p)
    if use_onnx_op(p, x) and p.mode == "blocks_first" and p.bs > 1:
        y = _onnx_op(ctx, "SpaceToDepth", x, p, split, groups)
    else:
        y = _chain(ctx, layer, x, split, groups)
    check_declared(layer, y.shape)
    return [y]
