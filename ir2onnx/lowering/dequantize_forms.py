"""The DequantizeLinear forms of a matched decompression chain (:class:`.decompression.Match`):
per tensor, per axis, blocked, and the transposed copy that MatMul(transpose_b) reads (see
:mod:`.decompression` for the IR, the forms and their arithmetic)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..ir.element_types import TYPES
from . import compressed_gather, packing, table_weights
from .builder import Deferred, LazyValue, Value

_FLOAT8 = ("f8e4m3", "f8e5m2")  # DequantizeLinear-19 x types; no zero point


def _varying_axes(m) -> list[int]:
    axes = {i for a in (m.scale, m.zero_point) if a is not None for i, d in enumerate(a.shape) if d != 1}
    return sorted(axes)


def _blocked_axis(m, lo: int, hi: int) -> int | None:
    """The axis of a blocked DequantizeLinear that replaces the root Reshape: the groups ``lo..hi``
    vary, axis ``hi+1`` is the group itself, and the Reshape merges axes ``hi`` and ``hi+1``."""
    w = m.weight.shape
    if m.reshape_to is None or hi < 0 or hi + 1 >= len(w):
        return None
    merged = tuple(w[:hi]) + (w[hi] * w[hi + 1],) + tuple(w[hi + 2:])
    return hi if merged == m.reshape_to else None


MATMUL_BLOCK = 128  # the largest block of K a per-channel MatMul weight is written in (see _matmul_block)
_INTEGER = ("u8", "i8", "u4", "i4")


def _matmul_block(ctx, m, axes: list[int]) -> int | None:
    """The block of K in which a MatMul(transpose_b) weight [N, K] with one scale per output
    channel (or per tensor) is written as blocked DequantizeLinear (opset 21), or None.

    The same values, exactly: each scale and zero point is repeated over the K / block blocks of
    its row. What it changes is onnxruntime's kernel: it fuses DequantizeLinear -> MatMul into
    MatMulNBits, which takes a per-channel weight as blocks of 32; at its default accuracy level
    (int8 activations) the kernel's time per token falls with larger blocks (the ~124M-parameter
    int8 Llama of ``bench_llm.py``, docs/llm.md), while its activations are quantized per block,
    so that larger blocks also round them more coarsely. The largest power of two from 16 to
    MATMUL_BLOCK that divides K is used. Only the ``onnxruntime`` target raises the opset to 21 for
    it; ``web`` writes the blocks where the opset is 21 already, ``onnx`` and ``tensorrt`` never
    (:mod:`.targets`)."""
    w = m.weight.shape
    if not ctx.target.matmul_blocks:
        return None
    if not m.matmul_b or m.out_type != "f32" or len(w) != 2 or m.weight.etype.name not in _INTEGER \
            or axes not in ([], [0]) or (m.reshape_to is not None and tuple(m.reshape_to) != tuple(w)):
        return None
    block = MATMUL_BLOCK
    while block >= 16 and w[1] % block:
        block //= 2
    if block < 16 or not ctx.prefer_opset(m.root, 21, "per-channel MatMul weights written in blocks "
                                                       "(blocked DequantizeLinear: onnxruntime's faster "
                                                       "MatMulNBits form)"):
        return None
    return block


def _form(ctx, m) -> tuple[tuple[int, ...], np.ndarray, np.ndarray | None, dict]:
    """DequantizeLinear's input dims, scale, zero point and attributes for ``m`` at ``ctx.opset``."""
    w = tuple(m.weight.shape)
    axes = _varying_axes(m)
    lo, hi = (axes[0], axes[-1]) if axes else (0, -1)
    blocked = _blocked_axis(m, lo, hi) if ctx.opset >= 21 else None
    full_scale = lambda a: np.broadcast_to(a, (1,) * lo + w[lo:hi + 1] + (1,) * (len(w) - hi - 1))  # noqa: E731
    block = _matmul_block(ctx, m, axes)
    if block:  # one scale per output channel (or per tensor), repeated per block of K
        ctx.stats["matmul_blocks"] = ctx.stats.get("matmul_blocks", 0) + 1
        scale, zp = (None if a is None else np.ascontiguousarray(np.broadcast_to(a, (w[0], w[1] // block)))
                     for a in (m.scale, m.zero_point))
        return w, scale, zp, dict(axis=1, block_size=block)
    if blocked is not None:
        ctx.require_opset(m.root, 21, "blocked DequantizeLinear (group-wise compressed weights)")
        keep = lambda a: np.broadcast_to(a, w[:hi + 1] + (1,) + w[hi + 2:]).reshape(  # noqa: E731
            w[:hi + 1] + w[hi + 2:])
        zp = None if m.zero_point is None else keep(m.zero_point)
        return tuple(m.reshape_to), keep(m.scale), zp, dict(axis=blocked, block_size=w[hi + 1])
    if not axes:  # per tensor
        zp = None if m.zero_point is None else m.zero_point.reshape(())
        return w, m.scale.reshape(()), zp, {}
    pre, mid = int(np.prod(w[:lo], dtype=np.int64)), int(np.prod(w[lo:hi + 1], dtype=np.int64))
    dims = w if lo == hi else (pre, mid, int(np.prod(w[hi + 1:], dtype=np.int64)))
    zp = None if m.zero_point is None else full_scale(m.zero_point).reshape(-1)
    return dims, full_scale(m.scale).reshape(-1), zp, dict(axis=lo if lo == hi else 1)


def matmul_form(ctx, m):
    """``(block, scale, zero point)`` when ``m`` is a MatMul(transpose_b) weight [N, K] written as
    f32 DequantizeLinear blocked along K (scale and zero point [N, K / block]), else None; counts
    nothing (see :mod:`.merged_matmuls`)."""
    if not m.matmul_b or m.out_type != "f32" or m.tied or m.codebook is not None \
            or m.weight.etype.name not in _INTEGER:
        return None
    stats, ctx.stats = ctx.stats, {}
    try:
        dims, scale, zp, attrs = _form(ctx, m)
    finally:
        ctx.stats = stats
    if len(dims) != 2 or tuple(m.reshape_to or m.weight.shape) != tuple(dims) or attrs.get("axis") != 1:
        return None
    return attrs["block_size"], np.asarray(scale), None if zp is None else np.asarray(zp)


def emit(ctx, m) -> Value:
    """The DequantizeLinear (and the Reshape / Cast it needs) that replaces ``m.root``."""
    if m.weight.etype.name in table_weights.TABLE_TYPES or m.codebook is not None:
        return table_weights.emit(ctx, m)
    b, layer = ctx.b, m.root
    wtype = m.weight.etype
    if wtype.name in _FLOAT8:
        ctx.require_opset(layer, 19, f"{wtype.name} weights kept as they are (DequantizeLinear; "
                                     "--compressed-weights unpack unpacks them)")
    if wtype.bits == 4:
        ctx.require_opset(layer, 21, f"{wtype.name} weights kept packed (DequantizeLinear; "
                                     "--compressed-weights unpack unpacks them)")
    ctx.onnx_type(layer, wtype)
    w = tuple(m.weight.shape)
    dims, scale, zp, attrs = _form(ctx, m)
    f16_out = m.out_type == "f16" and ctx.opset >= 19
    scale_np = np.float16 if f16_out else np.float32
    target = tuple(m.reshape_to or w)
    ctx.stats["compressed_weights"] = ctx.stats.get("compressed_weights", 0) + 1

    plan = compressed_gather.Plan(m, tuple(int(d) for d in dims), scale, zp, attrs, f16_out, target)

    def dq_inputs(data, dims, scale, zp, key=None) -> list[str]:
        """The packed weight, its scale (widened to f32 where needed) and zero point."""
        name = b.add_tensor(data, wtype, dims, f"{m.chain[0].name}_packed", key=key)
        scale_name = b.const(np.asarray(scale, m.scale.dtype, order="C"), m.scale.dtype, "dq_scale")
        if m.scale.dtype != scale_np:  # f16 scales stay f16 in the file; the Cast is folded by runtimes
            scale_name = b.Cast(scale_name, to=TensorProto.FLOAT)
        inputs = [name, scale_name]
        if zp is not None:  # integers within the weight type's range (Match.zero_point)
            inputs.append(b.add_initializer(np.asarray(zp, order="C"), wtype, "dq_zero_point"))
        return inputs

    def emit_dq(inputs, dims, attrs, target) -> str:
        out = b.DequantizeLinear(*inputs, **attrs)
        if tuple(dims) != target:
            out = b.Reshape(out, b.const(list(target)))
        if m.out_type == "f16" and not f16_out:
            out = b.Cast(out, to=TensorProto.FLOAT16)
        return out

    out = LazyValue(b, TYPES[m.out_type], target,
                    lambda: emit_dq(dq_inputs(m.weight, dims, scale, zp), dims, attrs, target))
    if len(dims) == 2 and tuple(dims) == target and m.out_type == "f32":
        # MatMul(transpose_b): store the weights transposed, so that DequantizeLinear feeds the
        # MatMul directly (onnxruntime then runs MatMulNBits, ~30x faster than dequantizing the
        # weights on every run); the packed bytes are transposed when the file is written
        moved = dict(attrs)
        if "axis" in moved:
            moved["axis"] = 1 - moved["axis"]
        rows, cols = (int(d) for d in dims)
        made: dict = {}

        def transposed_inputs() -> list[str]:
            if "inputs" not in made:
                data = Deferred(lambda: packing.transposed(m.weight, wtype, rows, cols))
                key = ("transposed", m.weight.bin.path, m.weight.offset, m.weight.size)
                zt = None if zp is None else np.asarray(zp).T
                made["inputs"] = dq_inputs(data, (cols, rows), np.asarray(scale).T, zt, key)
            return made["inputs"]

        def transposed(perm):
            if "value" not in made:
                made["value"] = LazyValue(b, out.etype, target[::-1], lambda: emit_dq(
                    transposed_inputs(), (cols, rows), moved, target[::-1]))
            return made["value"]

        out.transposed = transposed
        plan.transposed = (transposed_inputs, moved)
        if m.tied:  # one stored copy, transposed: every other reader transposes it back
            out = LazyValue(b, out.etype, target, lambda: b.Transpose(transposed(None), perm=[1, 0]))
            out.transposed = transposed
    compressed_gather.attach(ctx, plan, out)
    return out
