"""The sliding-window attributes that Convolution and the pooling ops share: per-axis ints
(strides, dilations, kernel, pads) and OpenVINO's same_upper / same_lower padding rule."""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer


def attr_ints(layer, name: str, rank: int, minimum: int) -> list[int]:
    """An ints attribute of exactly ``rank`` values, each >= ``minimum``."""
    values = list(layer.attrs.get(name) or [])
    if len(values) != rank:
        raise InvalidLayer(layer, f"{name} has {len(values)} values, a {rank}-D op needs {rank}")
    if any(v < minimum for v in values):
        raise InvalidLayer(layer, f"{name}={values}: every value must be >= {minimum}")
    return values


def same_pads(layer, mode: str, size: int | None, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """(begin, end) padding of one axis for auto_pad same_upper / same_lower (OpenVINO's rule)."""
    span = (kernel - 1) * dilation + 1
    if size is None:
        if stride != 1:
            raise UnsupportedLayer(layer, f"auto_pad={mode} with stride {stride} on a dynamic spatial "
                                          "dim: the padding is only known at run time")
        total = span - 1
    else:
        total = max((-(-size // stride) - 1) * stride + span - size, 0)
    small, large = total // 2, total - total // 2
    return (small, large) if mode == "same_upper" else (large, small)
