"""OneHot-1/-16: an ``axis`` of length ``depth`` inserted into ``indices``, ``on_value`` where the
position equals the index, ``off_value`` elsewhere.

-> Unsqueeze (indices at ``axis``, Cast to i64), Equal with Range(0, depth) shaped [depth, 1, ...],
Where (on, off). Not ONNX OneHot: it wraps every negative index in [-depth, -1], which OneHot-1
and OneHot-16's ``ignore_negative`` mode do not (a negative index gives all off values), and
onnxruntime's kernel takes few type combinations. OneHot-16 ``normalize``: Where (index < 0,
index + depth, index) first; indices below -depth stay all off. ``depth``, ``on_value`` and
``off_value`` may be inputs known only at run time.

Output types onnxruntime's Where lacks are selected in a wider type and Cast back (i16/u16 via
i32, u64 via i64 bits, bf16 via f32); boolean output is (eq and on) or (not eq and off).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import known_rank, normalize_axis
from ._common.shapes import i64

_INT64, _INT32, _FLOAT, _BOOL = 7, 6, 1, 9  # TensorProto
_WIDER = {"i16": _INT32, "u16": _INT32, "u64": _INT64, "bf16": _FLOAT}
_WHERE_TYPES = ("i8", "u8", "i32", "u32", "i64", "f16", "f32", "f64")


def _scalar(layer, v, what: str) -> None:
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got shape {list(v.shape)}")


def _as_scalar(g, v, to: int | None = None) -> str:
    """``v`` as a 0-D tensor (Reshape to []), Cast to ``to`` when given."""
    name = v.name if v.shape == () else g.Reshape(v, i64(g, [], "scalar"))
    return g.Cast(name, to=to) if to is not None else name


def _select(g, layer, eq: str, on, off) -> str:
    et = on.etype
    if et.name == "boolean":
        on_s, off_s = _as_scalar(g, on), _as_scalar(g, off)
        return g.Or(g.And(eq, on_s), g.And(g.Not(eq), off_s))
    if et.name in _WHERE_TYPES:
        return g.Where(eq, _as_scalar(g, on), _as_scalar(g, off))
    if et.name in _WIDER:
        wide = _WIDER[et.name]
        return g.Cast(g.Where(eq, _as_scalar(g, on, wide), _as_scalar(g, off, wide)), to=et.onnx)
    raise UnsupportedLayer(layer, f"OneHot with {et.name} values is not supported")


def _one_hot(ctx, layer, inputs, normalize: bool):
    indices, depth, on, off = inputs
    if not indices.etype.is_integer or indices.etype.bits < 8:
        raise UnsupportedLayer(layer, f"OneHot indices of type {indices.etype.name} are not supported "
                                      "(8- to 64-bit integers are)")
    if not depth.etype.is_integer:
        raise UnsupportedLayer(layer, f"OneHot depth of type {depth.etype.name} is not supported")
    if on.etype != off.etype:
        raise InvalidLayer(layer, f"on_value ({on.etype.name}) and off_value ({off.etype.name}) differ in type")
    for v, what in ((depth, "depth"), (on, "on_value"), (off, "off_value")):
        _scalar(layer, v, what)
    rank = known_rank(layer, indices, what="indices")
    axis = normalize_axis(layer, int(layer.attrs["axis"]), rank + 1)
    if depth.is_const and int(np.asarray(depth.value()).reshape(-1)[0]) < 0:
        raise InvalidLayer(layer, f"depth must be >= 0, got {int(np.asarray(depth.value()).reshape(-1)[0])}")
    g = ctx.b
    idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=_INT64)
    depth_s = _as_scalar(g, depth, _INT64)
    if normalize and not indices.etype.name.startswith("u"):
        zero = g.const(np.zeros((), np.int64), np.int64, "zero")
        idx = g.Where(g.Less(idx, zero), g.Add(idx, depth_s), idx)
    positions = g.Range(g.const(np.zeros((), np.int64), np.int64, "zero"), depth_s,
                        g.const(np.ones((), np.int64), np.int64, "one"))
    tail = rank - axis  # the dims of indices after the new axis
    if tail:
        positions = g.Reshape(positions, i64(g, [-1] + [1] * tail, "shape"))
    eq = g.Equal(g.Unsqueeze(idx, i64(g, [axis], "axes")), positions)
    return [_select(g, layer, eq, on, off)]


@lowers("OneHot", "opset1")
def one_hot1(ctx, layer, inputs):
    """OneHot-1 (indices, depth, on_value, off_value) -> Cast, Unsqueeze, Range, Reshape, Equal,
    Where (negative and too large indices: all off)."""
    return _one_hot(ctx, layer, inputs, False)


@lowers("OneHot", "opset16")
def one_hot16(ctx, layer, inputs):
    """OneHot-16 -> OneHot-1's chain; negative_indices_mode=normalize adds Less, Add, Where
    (index + depth for an index in [-depth, -1])."""
    mode = str(layer.attrs.get("negative_indices_mode", "ignore_negative"))
    return _one_hot(ctx, layer, inputs, mode == "normalize")
