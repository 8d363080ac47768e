"""MVN-6 in LayerNorm's form followed by OpenVINO's affine step (Multiply by gamma, Add beta, both
constants over the normalized dims) -> one LayerNormalization(x, gamma, beta).

OpenVINO writes ``torch.nn.LayerNorm`` as MVN -> Multiply -> Add; lowered one by one that is
LayerNormalization(scale of ones) -> Mul -> Add, which onnxruntime's transformer fusions
(SkipLayerNormalization, EmbedLayerNormalization) do not recognise, and which runs three kernels
instead of one. The MVN's output is a lazily emitted value that offers ``absorb_mul`` and
``absorb_add`` (see :class:`ir2onnx.lowering.builder.Value`): the Multiply and Add lowerings hand
it their constant operand and get the LayerNormalization that includes it. LayerNormalization
computes ``normalized * scale + bias`` in the data's type, as the Mul and Add did. The bias is
always given (zeros when the IR has none: onnxruntime's SkipLayerNormalization fusion reads it).
"""
from __future__ import annotations

import numpy as np

from ..lowering.builder import LazyValue, Value


def layer_norm(ctx, x: Value, axis: int, eps: float, scale=None, bias=None) -> LazyValue:
    """LayerNormalization of ``x`` over the dims from ``axis`` on (static), with constant
    ``scale``/``bias`` arrays of those dims (ones / zeros when None), absorbing a following
    constant Multiply (while no scale or bias is taken) and Add (while no bias is taken)."""
    g, et = ctx.b, x.etype
    tail = tuple(x.shape[axis:])

    def emit() -> str:
        s = scale if scale is not None else np.ones(tail, et.numpy)
        b = bias if bias is not None else np.zeros(tail, et.numpy)
        return g.LayerNormalization(x, g.const(s, et.numpy, "ones" if scale is None else "ln_scale"),
                                    g.const(b, et.numpy, "zeros" if bias is None else "ln_bias"),
                                    axis=axis, epsilon=eps)

    out = LazyValue(g, et, x.shape, emit)
    if bias is None:
        out.absorb_add = lambda other: _absorb(ctx, x, axis, eps, other, scale, "bias")
        if scale is None:
            out.absorb_mul = lambda other: _absorb(ctx, x, axis, eps, other, None, "scale")
    return out


def _absorb(ctx, x: Value, axis: int, eps: float, other: Value, scale, what: str):
    """The LayerNormalization that also applies the constant ``other`` as its scale or bias, or
    None when ``other`` is not a constant of the data's type that only varies over the normalized
    dims (the result of the Mul/Add must have the data's shape)."""
    rank = len(x.shape)
    if not other.is_const or other.etype != x.etype or other.shape is None or len(other.shape) > rank:
        return None
    full = (1,) * (rank - len(other.shape)) + tuple(other.shape)
    tail = tuple(x.shape[axis:])
    if any(d != 1 for d in full[:axis]) or any(d not in (1, t) for d, t in zip(full[axis:], tail)):
        return None
    value = np.broadcast_to(np.asarray(other.value()).reshape(full[axis:]), tail).astype(x.etype.numpy)
    if what == "scale":
        return layer_norm(ctx, x, axis, eps, scale=value)
    return layer_norm(ctx, x, axis, eps, scale=scale, bias=value)
