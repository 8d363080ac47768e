"""ReduceMean-1, ReduceMax-1, ReduceMin-1 over constant axes (keep_dims), through the shared
reduction lowering of :mod:`.elementwise` (axes as an input from ONNX opset 18, narrow integers via
i64). Integer ReduceMean is i32/i64 only: ReduceSum, Div (truncating, like OpenVINO's reference);
OpenVINO's CPU plugin saturates the sum of narrower integers, which ONNX cannot mirror."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.inputs import const_ints, foldable
from ..lowering.registry import lowers
from .elementwise import _reduce, _trunc_div


def _int_mean(x: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    total = np.sum(x.astype(np.int64), axis=axis, keepdims=keepdims)
    count = int(np.prod([x.shape[a] for a in axis])) if x.ndim else 1
    return _trunc_div(total, np.int64(max(count, 1))).astype(x.dtype)


@lowers("ReduceMean", "opset1")
def reduce_mean(ctx, layer, inputs):
    """ReduceMean-1 -> ReduceMean (integers: ReduceSum, Div by the element count)."""
    x, axes_v = inputs
    if not x.etype.is_integer:
        return _reduce(ctx, layer, inputs, "ReduceMean", np.mean)
    if foldable(x, axes_v):
        return _reduce(ctx, layer, inputs, "ReduceSum", _int_mean)
    if x.etype.name not in ("i32", "i64"):
        raise UnsupportedLayer(layer, f"ReduceMean on {x.etype.name} is not supported (integer means: i32, i64)")
    total = _reduce(ctx, layer, inputs, "ReduceSum", np.sum)[0]
    if total is x:
        return [x]
    rank = x.rank
    axes = {a % rank for a in const_ints(layer, axes_v, "axes")} if rank else set()
    dims = [x.shape[a] for a in axes]
    if any(d is None for d in dims):
        raise UnsupportedLayer(layer, "integer ReduceMean over dynamic dims is not supported")
    count = int(np.prod(dims))
    return [ctx.b.Div(total, ctx.b.const(np.asarray(max(count, 1), x.etype.numpy), x.etype.numpy, "count"))]


@lowers("ReduceMax", "opset1")
def reduce_max(ctx, layer, inputs):
    """ReduceMax-1 -> ReduceMax (axes an input from opset 18)."""
    return _reduce(ctx, layer, inputs, "ReduceMax", np.max)


@lowers("ReduceMin", "opset1")
def reduce_min(ctx, layer, inputs):
    """ReduceMin-1 -> ReduceMin (axes an input from opset 18)."""
    return _reduce(ctx, layer, inputs, "ReduceMin", np.min)
