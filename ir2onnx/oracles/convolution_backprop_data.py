"""Oracles of ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1, from the spec's
scatter-add definition: every input element ``x[n, ci, p]`` adds ``x * w[ci, co, k]`` at output
position ``p*stride + k*dilation - pads_begin`` on each axis; positions outside ``[0, Y)`` are
dropped and positions never reached stay 0. Accumulates in float64; no convolution routine."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

_AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")


def _attr_list(layer, name: str, rank: int, minimum: int, allow_empty: bool = False) -> list[int]:
    values = list(layer.attrs.get(name) or [])
    if allow_empty and not values:
        return [0] * rank
    if len(values) != rank:
        raise InvalidLayer(layer, f"{name} has {len(values)} values, the {rank}-D op needs {rank}")
    if any(v < minimum for v in values):
        raise InvalidLayer(layer, f"{name}={values}: every value must be >= {minimum}")
    return values


def _pads(layer, natural: list[int], out_shape, rank: int) -> tuple[list[int], list[int]]:
    """pads_begin and the output size per spatial axis.

    Without output_shape: the spec's formula. With output_shape ``O`` the output keeps ``O``
    elements from the start crop (zeros where that runs past the natural result), and the start
    crop is the one OpenVINO's frontends rely on (specs/ConvolutionBackpropData.md, decision of
    2026-11-23): explicit -> the pads_begin attribute; valid -> 0; same_upper/same_lower -> the
    split of ``total = max(natural + output_padding - O, 0)``: ``total - total // 2`` for
    same_upper, ``total // 2`` for same_lower. pads_end is not used."""
    auto_pad = layer.attrs.get("auto_pad", "explicit")
    if auto_pad not in _AUTO_PADS:
        raise InvalidLayer(layer, f"auto_pad='{auto_pad}' is not one of {', '.join(_AUTO_PADS)}")
    pads_begin = _attr_list(layer, "pads_begin", rank, 0)
    pads_end = _attr_list(layer, "pads_end", rank, 0)
    out_pad = _attr_list(layer, "output_padding", rank, 0, allow_empty=True)
    if out_shape is None:
        if auto_pad != "explicit":
            pads_begin, pads_end = [0] * rank, [0] * rank
        sizes = [natural[i] - pads_begin[i] - pads_end[i] + out_pad[i] for i in range(rank)]
        if any(s < 1 for s in sizes):
            raise InvalidLayer(layer, f"the pads leave an empty output (spatial size {sizes})")
        return pads_begin, sizes
    sizes = [int(v) for v in np.asarray(out_shape).reshape(-1)]
    if len(sizes) != rank:
        raise InvalidLayer(layer, f"output_shape has {len(sizes)} values, the {rank}-D op needs {rank}")
    if any(s < 1 for s in sizes):
        raise InvalidLayer(layer, f"output_shape={sizes} must be positive")
    if auto_pad == "explicit":
        return pads_begin, sizes
    if auto_pad == "valid":
        return [0] * rank, sizes
    begins = []
    for i in range(rank):
        total = max(natural[i] + out_pad[i] - sizes[i], 0)
        begins.append(total - total // 2 if auto_pad == "same_upper" else total // 2)
    return begins, sizes


def _scatter(layer, x: np.ndarray, w: np.ndarray, out_shape) -> np.ndarray:
    """``w`` is [GROUPS, C_IN/GROUPS, C_OUT/GROUPS, K...]."""
    rank = x.ndim - 2
    n, c_in = x.shape[:2]
    g, cin_g, cout_g = w.shape[:3]
    if c_in != g * cin_g:
        raise InvalidLayer(layer, f"data has {c_in} channels, filters expect {g} x {cin_g}")
    strides = _attr_list(layer, "strides", rank, 1)
    dilations = _attr_list(layer, "dilations", rank, 1)
    kernel = w.shape[3:]
    xs = x.shape[2:]
    natural = [strides[i] * (xs[i] - 1) + (kernel[i] - 1) * dilations[i] + 1 for i in range(rank)]
    begins, sizes = _pads(layer, natural, out_shape, rank)
    xg = x.astype(np.float64).reshape((n, g, cin_g) + tuple(xs))
    wg = w.astype(np.float64)
    out = np.zeros((n, g, cout_g) + tuple(sizes), np.float64)
    for k in itertools.product(*(range(kk) for kk in kernel)):
        # output position o = p*s + k*d - b must lie in [0, Y): p in [p_lo, p_hi)
        src, dst = [], []
        for i in range(rank):
            off = k[i] * dilations[i] - begins[i]
            p_lo = max(0, -(off // strides[i]))  # smallest p with p*s + off >= 0
            p_hi = min(xs[i], (sizes[i] - 1 - off) // strides[i] + 1) if sizes[i] - 1 - off >= 0 else 0
            if p_hi <= p_lo:
                break
            src.append(slice(p_lo, p_hi))
            o_lo = p_lo * strides[i] + off
            dst.append(slice(o_lo, o_lo + (p_hi - p_lo - 1) * strides[i] + 1, strides[i]))
        else:
            tap = wg[(slice(None),) * 3 + tuple(k)]  # [G, C_IN/G, C_OUT/G]
            contrib = np.einsum("ngc...,gco->ngo...", xg[(Ellipsis,) + tuple(src)], tap)
            out[(Ellipsis,) + tuple(dst)] += contrib
    return out.reshape((n, g * cout_g) + tuple(sizes)).astype(x.dtype)


def _output_shape(inputs):
    return inputs[2] if len(inputs) > 2 else None


def _check_ranks(layer, x: np.ndarray, w: np.ndarray, extra: int) -> None:
    if x.ndim not in (3, 4, 5):
        raise InvalidLayer(layer, f"data must have rank 3, 4 or 5, not {x.ndim}")
    if w.ndim != x.ndim + extra:
        raise InvalidLayer(layer, f"filters of rank {w.ndim} do not fit data of rank {x.ndim} (need {x.ndim + extra})")


@oracle("ConvolutionBackpropData", "opset1")
def convolution_backprop_data(layer, inputs):
    x, w = inputs[0], inputs[1]
    _check_ranks(layer, x, w, 0)
    if w.shape[0] != x.shape[1]:
        raise InvalidLayer(layer, f"data has {x.shape[1]} channels, filters expect {w.shape[0]}")
    return [_scatter(layer, x, w[None], _output_shape(inputs))]


@oracle("GroupConvolutionBackpropData", "opset1")
def group_convolution_backprop_data(layer, inputs):
    x, w = inputs[0], inputs[1]
    _check_ranks(layer, x, w, 1)
    groups = w.shape[0]
    if groups < 1 or x.shape[1] % groups:
        raise InvalidLayer(layer, f"{groups} groups do not divide the {x.shape[1]} input channels")
    return [_scatter(layer, x, w, _output_shape(inputs))]
