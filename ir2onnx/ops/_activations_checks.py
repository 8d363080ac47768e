"""Input and attribute checks of the activations (ops/activations.py): Clamp's bounds in the
input's type, PReLU's slope layout, Selu's scalar parameters, the f64 inputs onnxruntime's Elu and
Softplus lack."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ._common.inputs import foldable


def type_name(x) -> str:
    """The element type's name, for messages."""
    return x.etype.name if x.etype is not None else "?"


def clamp_bounds(layer, etype) -> tuple[float | int, float | int]:
    """The bounds in the input's type: integers take ceil(min) and floor(max), saturated."""
    lo, hi = float(layer.attrs["min"]), float(layer.attrs["max"])
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise InvalidLayer(layer, f"min={lo} must not be greater than max={hi}")
    if not etype.is_integer:
        return lo, hi
    info = np.iinfo(etype.numpy)
    lo_i = info.min if lo <= info.min else (info.max if lo >= info.max else math.ceil(lo))
    hi_i = info.max if hi >= info.max else (info.min if hi <= info.min else math.floor(hi))
    if lo_i > hi_i:
        raise UnsupportedLayer(layer, f"min={lo} and max={hi} leave no integer between them")
    return lo_i, hi_i


def refuse_f64(layer, x, onnx_op: str) -> None:
    """onnxruntime's CPU Elu and Softplus have no f64 kernel (constants still fold)."""
    if x.etype is not None and x.etype.name == "f64" and not foldable(x):
        raise UnsupportedLayer(layer, f"{layer.type} on f64 is not supported (onnxruntime's {onnx_op} "
                                      "is f16/f32 only)")


def slope_shape(layer, x, slope) -> tuple | None:
    """The shape the slope takes before numpy broadcasting: OpenVINO puts a 1-D slope whose size
    equals the channel dim (dim 1, or dim 0 of a 1-D input) along that dim."""
    if x.rank is None or slope.shape is None:
        raise UnsupportedLayer(layer, "PReLU needs inputs of known rank")
    if len(slope.shape) != 1 or x.rank < 2:
        return None
    channel, size = x.shape[1], slope.shape[0]
    if channel is None or size is None:
        if size == 1:
            return None
        raise UnsupportedLayer(layer, "PReLU with a dynamic channel dim or slope size is not supported "
                                      "(OpenVINO decides per-channel or numpy broadcasting by the sizes)")
    if channel == size:
        return (size,) + (1,) * (x.rank - 2)
    return None


def check_scalar_param(layer, v, what: str, x) -> None:
    """Selu's alpha and lambda: one element of the data's type."""
    if v.etype != x.etype:
        raise InvalidLayer(layer, f"{what} must have the data's element type {type_name(x)}, got {type_name(v)}")
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must hold exactly one element, got shape {list(v.shape)}")
