"""Oracles of DepthToSpace-1 (NCHW, and TensorFlow's NHWC / NCHW_VECT_C) and SpaceToDepth-1.

Written from the spec element by element: for every output index, the input index it reads.
With K spatial axes and block coordinates ``b_1..b_K`` (``b_1`` most significant,
``b = sum b_i * bs^(K-i)``), output spatial coordinate ``o_i = d_i*bs + b_i`` and output channel
``c`` read input channel ``b*c' + c`` (blocks_first, TensorFlow's DCR order) or ``c*bs^K + b``
(depth_first). NCHW_VECT_C stores channel ``ch`` at ``[ch // 4, ..., ch % 4]``.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

_MODES = ("blocks_first", "depth_first")
_LAYOUTS = ("NCHW", "NHWC", "NCHW_VECT_C")


def _attrs(layer, x: np.ndarray, layouts=_LAYOUTS) -> tuple[int, str, str, int]:
    bs = layer.attrs.get("block_size", 1)
    mode = layer.attrs.get("mode", "blocks_first")
    layout = layer.attrs.get("data_format") or "NCHW"
    if not isinstance(bs, int) or bs < 1:
        raise InvalidLayer(layer, f"block_size must be an integer >= 1, got {bs}")
    if mode not in _MODES:
        raise InvalidLayer(layer, f"mode '{mode}' is not one of: {', '.join(_MODES)}")
    if layout not in layouts:
        raise InvalidLayer(layer, f"data_format '{layout}' is not one of: {', '.join(layouts)}")
    least = 4 if layout == "NCHW_VECT_C" else 3
    if x.ndim < least:
        raise InvalidLayer(layer, f"input rank {x.ndim}; {layout} needs rank >= {least}")
    k = x.ndim - (3 if layout == "NCHW_VECT_C" else 2)
    return bs, mode, layout, k


def _block_index(blocks: list[np.ndarray], bs: int) -> np.ndarray:
    """b = b_1*bs^(K-1) + ... + b_K."""
    b = np.zeros_like(blocks[0])
    for bi in blocks:
        b = b * bs + bi
    return b


@oracle("DepthToSpace", "opset1")
def depth_to_space(layer, inputs):
    x = np.asarray(inputs[0])
    bs, mode, layout, k = _attrs(layer, x)
    if layout == "NCHW_VECT_C":
        if x.shape[-1] != 4:
            raise InvalidLayer(layer, f"NCHW_VECT_C input {x.shape}: the last dim must be 4")
        channels, spatial = 4 * x.shape[1], list(x.shape[2:-1])
    elif layout == "NHWC":
        channels, spatial = x.shape[-1], list(x.shape[1:-1])
    else:
        channels, spatial = x.shape[1], list(x.shape[2:])
    if channels % bs**k:
        raise InvalidLayer(layer, f"{channels} channels are not divisible by block_size^{k} = {bs**k}")
    cp = channels // bs**k
    if layout == "NCHW_VECT_C" and cp % 4:
        raise InvalidLayer(layer, f"NCHW_VECT_C needs output channels ({cp}) that are a multiple of 4")
    n = x.shape[0]
    out_spatial = [d * bs for d in spatial]
    if layout == "NCHW":
        out_shape = [n, cp] + out_spatial
    elif layout == "NHWC":
        out_shape = [n] + out_spatial + [cp]
    else:
        out_shape = [n, cp // 4] + out_spatial + [4]
    if not np.prod(out_shape):
        return [np.zeros(out_shape, x.dtype)]
    idx = list(np.indices(out_shape))
    if layout == "NCHW":
        on, oc, osp = idx[0], idx[1], idx[2:]
    elif layout == "NHWC":
        on, oc, osp = idx[0], idx[-1], idx[1:-1]
    else:
        on, oc, osp = idx[0], idx[1] * 4 + idx[-1], idx[2:-1]
    b = _block_index([o % bs for o in osp], bs)
    src_c = b * cp + oc if mode == "blocks_first" else oc * bs**k + b
    src_sp = [o // bs for o in osp]
    if layout == "NCHW":
        src = [on, src_c] + src_sp
    elif layout == "NHWC":
        src = [on] + src_sp + [src_c]
    else:
        src = [on, src_c // 4] + src_sp + [src_c % 4]
    return [x[tuple(src)]]


@oracle("SpaceToDepth", "opset1")
def space_to_depth(layer, inputs):
    x = np.asarray(inputs[0])
    bs, mode, _, k = _attrs(layer, x, layouts=("NCHW",))
    n, c, spatial = x.shape[0], x.shape[1], list(x.shape[2:])
    for d in spatial:
        if d % bs:
            raise InvalidLayer(layer, f"input {x.shape}: spatial dim {d} is not divisible by block_size {bs}")
    out_shape = [n, c * bs**k] + [d // bs for d in spatial]
    if not np.prod(out_shape):
        return [np.zeros(out_shape, x.dtype)]
    on, och, *od = np.indices(out_shape)
    if mode == "blocks_first":  # channel = b*C + c
        b, ic = och // c, och % c
    else:  # channel = c*bs^K + b
        b, ic = och % bs**k, och // bs**k
    blocks = []
    for _ in range(k):  # b_K is the least significant digit
        blocks.insert(0, b % bs)
        b = b // bs
    src = [on, ic] + [d * bs + bi for d, bi in zip(od, blocks)]
    return [x[tuple(src)]]
