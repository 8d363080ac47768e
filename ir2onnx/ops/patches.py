"""Patches: ExtractImagePatches-3 -> Concat (zero rows and columns: the padding), one strided Slice
per kernel position, Concat along channels; Col2Im-15 -> ScatterElements(add) at a position map.

ExtractImagePatches output channel ``(kh * KW + kw) * C + c`` at ``(oh, ow)`` is input
``[c, oh * SH - PT + kh * RH, ow * SW - PL + kw * RW]`` (0 outside), as the spec's examples and
OpenVINO's reference index it; the same_* padding is the reference's: the total
``PH = (ceil(H / SH) - 1) * SH + (KH - 1) * RH + 1 - H`` is used only when ``0 < PH`` and ``PH`` is
below the dilated kernel, split evenly, the odd one at the end (same_upper) or the start
(same_lower). Pure data movement, bit for bit; every dim may be dynamic.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import i64


def patch_geometry(size: int, k: int, s: int, r: int, auto_pad: str) -> tuple[int, int]:
    """(output size, padding at the start) of one spatial axis."""
    eff = (k - 1) * r + 1
    if auto_pad == "valid":
        return max((size - eff) // s + 1, 0), 0
    out = -(-size // s)
    total = (out - 1) * s + eff - size
    if not 0 < total < eff:
        return out, 0
    if total % 2 == 0:
        return out, total // 2
    return out, (total + 1) // 2 if auto_pad == "same_lower" else (total - 1) // 2


def _runtime_geometry(g, dim: str, k: int, s: int, r: int, auto_pad: str) -> tuple[str, str]:
    """:func:`patch_geometry` at run time on an int64 [1] dim: (output size, padding at the start)."""
    eff = (k - 1) * r + 1
    if auto_pad == "valid":  # max(floor((d - eff) / s) + 1, 0), all operands kept >= 0 for Div
        return g.Div(g.Max(g.Add(dim, i64(g, [s - eff])), i64(g, [0])), i64(g, [s])), i64(g, [0])
    out = g.Div(g.Add(dim, i64(g, [s - 1])), i64(g, [s]))
    total = g.Sub(g.Add(g.Mul(g.Sub(out, i64(g, [1])), i64(g, [s])), i64(g, [eff])), dim)
    start = g.Div(g.Add(total, i64(g, [1 if auto_pad == "same_lower" else 0])), i64(g, [2]))
    used = g.And(g.Greater(total, i64(g, [0])), g.Less(total, i64(g, [eff])))
    return out, g.Where(used, start, i64(g, [0]))


def _zeros_around(g, x, axis: int, before, after, etype) -> str:
    """``x`` with ``before``/``after`` (ints, or int64 [1] tensors >= 0) zero slices along ``axis``
    (2 or 3) by Concat, which onnxruntime runs for every type (its Pad lacks i16/u16)."""
    parts = []
    for n in (before, after):
        if isinstance(n, int) and n <= 0:
            parts.append(None)
            continue
        shape = g.Shape(x)
        dims = g.Concat(g.Slice(shape, i64(g, [0]), i64(g, [axis])), i64(g, [n]) if isinstance(n, int) else n,
                        g.Slice(shape, i64(g, [axis + 1]), i64(g, [4])), axis=0)
        zero = helper.make_tensor("zero", etype.onnx, [1], np.zeros(1, etype.numpy).tobytes(), raw=True) \
            if etype.numpy is not None else helper.make_tensor("zero", etype.onnx, [1], [0])
        parts.append(g.ConstantOfShape(dims, value=zero))
    if parts == [None, None]:
        return x
    return g.Concat(*[p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)


@lowers("ExtractImagePatches", "opset3")
def extract_image_patches3(ctx, layer, inputs):
    """ExtractImagePatches-3 (data [N, C, H, W]; sizes, strides, rates, auto_pad) -> Concat (zero
    padding), KH * KW strided Slices, Concat(axis 1). Static spatial dims: the padding and output
    size are constants; dynamic ones: computed from Shape (Div, Where)."""
    (x,) = inputs
    if x.rank != 4:
        raise InvalidLayer(layer, f"data must be 4-D, got rank {x.rank}")
    ctx.onnx_type(layer, x.etype)
    sizes, strides, rates = (list(layer.attrs[a]) for a in ("sizes", "strides", "rates"))
    if any(len(v) != 2 for v in (sizes, strides, rates)) or min(sizes + strides + rates) < 1:
        raise InvalidLayer(layer, f"sizes {sizes}, strides {strides} and rates {rates} must be two positive ints")
    auto_pad = layer.attrs["auto_pad"]
    g = ctx.b
    padded, spans = x.name, []
    for axis, k, s, r in zip((2, 3), sizes, strides, rates):
        d = x.shape[axis]
        eff = (k - 1) * r + 1
        if d is not None:
            out, start = patch_geometry(d, k, s, r, auto_pad)
            if out > 0:
                padded = _zeros_around(g, padded, axis, start, (out - 1) * s + eff - start - d, x.etype)
            spans.append(i64(g, [(out - 1) * s + 1 if out else 0]))
            continue
        dim = g.Slice(g.Shape(x), i64(g, [axis]), i64(g, [axis + 1]))
        out, start = _runtime_geometry(g, dim, k, s, r, auto_pad)
        need = g.Add(g.Mul(g.Sub(out, i64(g, [1])), i64(g, [s])), i64(g, [eff]))
        after = g.Max(g.Sub(g.Sub(need, start), dim), i64(g, [0]))
        padded = _zeros_around(g, padded, axis, start, after, x.etype)
        spans.append(g.Max(g.Add(g.Mul(g.Sub(out, i64(g, [1])), i64(g, [s])), i64(g, [1])), i64(g, [0])))
    span = g.Concat(*spans, axis=0)
    blocks = []
    for kh in range(sizes[0]):
        for kw in range(sizes[1]):
            first = i64(g, [kh * rates[0], kw * rates[1]])
            blocks.append(g.Slice(padded, first, g.Add(first, span), i64(g, [2, 3]), i64(g, strides)))
    return [blocks[0] if len(blocks) == 1 else g.Concat(*blocks, axis=1)]


def _col2im_map(out_hw, kernel, strides, dilations, begins, ends) -> tuple[np.ndarray, int]:
    """For one channel: the flat output position (or H * W, a junk slot) of every
    (kernel row, kernel col, block) of the input, [K * L]; and L."""
    (h, w), (kh, kw) = out_hw, kernel
    blocks = [(o + b + e - (d * (k - 1) + 1)) // s + 1 for o, b, e, d, k, s in zip(out_hw, begins, ends, dilations, kernel, strides)]
    ki, kj, bh, bw = np.meshgrid(np.arange(kh), np.arange(kw), np.arange(max(blocks[0], 0)), np.arange(max(blocks[1], 0)),
                                 indexing="ij")
    y = bh * strides[0] - begins[0] + ki * dilations[0]
    x = bw * strides[1] - begins[1] + kj * dilations[1]
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    return np.where(inside, y * w + x, h * w).reshape(-1).astype(np.int64), max(blocks[0], 0) * max(blocks[1], 0)


@lowers("Col2Im", "opset15")
def col2im15(ctx, layer, inputs):
    """Col2Im-15 (data [N, C * kh * kw, L] or [C * kh * kw, L], output_size, kernel_size; strides,
    dilations, pads_begin, pads_end) -> ScatterElements(add) (opset 16) into [N, C, H * W + 1] at a
    position map fixed at conversion (the extra slot takes what falls in the padding), Slice,
    Reshape. The sums run in OpenVINO's reference order (channel, kernel row, kernel col, block);
    f16/bf16 add in f32. Run-time output_size or kernel_size: ONNX Col2Im (opset 18, the same
    fold), for f32/f16 (onnxruntime's kernels)."""
    data, size_v, kernel_v = inputs
    if data.rank not in (2, 3):
        raise InvalidLayer(layer, f"data must be 2-D or 3-D, got rank {data.rank}")
    et = data.etype.name
    ctx.onnx_type(layer, data.etype)
    if et == "boolean":
        raise UnsupportedLayer(layer, "boolean data cannot be summed")
    attrs = [list(layer.attrs[a]) for a in ("strides", "dilations", "pads_begin", "pads_end")]
    if not (size_v.is_const and kernel_v.is_const):
        return _onnx_col2im(ctx, layer, data, size_v, kernel_v, attrs)
    out_hw, kernel = ([int(t) for t in np.asarray(v.value()).reshape(-1)] for v in (size_v, kernel_v))
    if len(out_hw) != 2 or len(kernel) != 2 or any(len(a) != 2 for a in attrs) or min(kernel + attrs[0] + attrs[1]) < 1:
        raise InvalidLayer(layer, f"output_size {out_hw}, kernel_size {kernel} and the attributes must be pairs "
                                  "(kernel, strides, dilations positive)")
    ctx.require_opset(layer, 16, "Col2Im (ScatterElements with reduction add)")
    where, blocks = _col2im_map(out_hw, kernel, *attrs)
    k, hw = kernel[0] * kernel[1], out_hw[0] * out_hw[1]
    rows, length = data.shape[-2], data.shape[-1]
    if length is not None and length != blocks:
        raise InvalidLayer(layer, f"data holds {length} blocks; output_size, kernel and attributes give {blocks}")
    if rows is not None and rows % k:
        raise InvalidLayer(layer, f"dim {rows} is not a multiple of the kernel's {k} positions")
    g = ctx.b
    widen = et in ("f16", "bf16")
    x = g.Cast(data, to=TensorProto.FLOAT) if widen else data.name
    x = g.Unsqueeze(x, i64(g, [0])) if data.rank == 2 else x
    shape = g.Shape(x)
    batch = g.Slice(shape, i64(g, [0]), i64(g, [1]))
    channels = g.Div(g.Slice(shape, i64(g, [1]), i64(g, [2])), i64(g, [k]))
    # channel c's positions are c * (H * W + 1) + map
    base = g.Mul(g.Range(i64(g, 0), g.Squeeze(channels), i64(g, 1)), i64(g, hw + 1))
    index = g.Reshape(g.Add(g.Unsqueeze(base, i64(g, [1])), g.const(where[None], np.int64)), i64(g, [1, -1]))
    index = g.Expand(index, g.Concat(batch, i64(g, [1]), axis=0))
    acc_type = TensorProto.FLOAT if widen else data.etype.onnx
    zero = helper.make_tensor("zero", acc_type, [1], np.zeros(1, np.float32 if widen else data.etype.numpy).tobytes(), raw=True)
    buf = g.ConstantOfShape(g.Concat(batch, g.Mul(channels, i64(g, [hw + 1])), axis=0), value=zero)
    out = g.ScatterElements(buf, index, g.Reshape(x, g.Concat(batch, i64(g, [-1]), axis=0)), axis=1, reduction="add")
    out = g.Slice(g.Reshape(out, g.Concat(batch, channels, i64(g, [hw + 1]), axis=0)), i64(g, [0]), i64(g, [hw]),
                  i64(g, [2]))
    out = g.Reshape(out, g.Concat(batch, channels, i64(g, out_hw), axis=0))
    out = g.Squeeze(out, i64(g, [0])) if data.rank == 2 else out
    return [g.Cast(out, to=data.etype.onnx) if widen else out]


def _onnx_col2im(ctx, layer, data, size_v, kernel_v, attrs):
    """Col2Im-15 with run-time sizes -> ONNX Col2Im (Unsqueeze/Squeeze around unbatched data)."""
    if data.etype.name not in ("f32", "f16"):
        raise UnsupportedLayer(layer, f"run-time output_size/kernel_size on {data.etype.name}: ONNX Col2Im takes them, "
                                      "but onnxruntime runs it for f32/f16 only")
    ctx.require_opset(layer, 18, "Col2Im with run-time output_size/kernel_size (ONNX Col2Im)")
    strides, dilations, begins, ends = attrs
    g = ctx.b
    x = g.Unsqueeze(data, i64(g, [0])) if data.rank == 2 else data.name
    size, kernel = (g.Cast(v, to=TensorProto.INT64) for v in (size_v, kernel_v))
    out = g.Col2Im(x, size, kernel, dilations=dilations, pads=begins + ends, strides=strides)
    return [g.Squeeze(out, i64(g, [0])) if data.rank == 2 else out]
