"""Oracle of Reshape-1, from the spec: resolve the pattern, then copy element k of the input (in
row-major order) to element k of the output (numpy.unravel_index gives the input index of every k)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _product(values) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out


def resolve_pattern(layer, in_shape: tuple[int, ...], pattern: list[int], special_zero: bool) -> tuple[int, ...]:
    """The output shape that ``pattern`` asks for on an input of shape ``in_shape``.

    -1 is the dim that keeps the element count. Where every value keeps it (the other dims
    multiply to 0) the spec leaves it open; this follows OpenVINO's runtime: with special_zero
    the copied dims cancel out (product of the input dims not copied / product of the values not
    copied), without it the -1 becomes 0.
    """
    out: list[int | None] = []
    copied: set[int] = set()
    for i, v in enumerate(pattern):
        if v < -1:
            raise InvalidLayer(layer, f"shape value {v} at index {i} is invalid")
        if v == 0 and special_zero:
            if i >= len(in_shape):
                raise InvalidLayer(layer, f"special_zero copies dim {i} beyond the input rank {len(in_shape)}")
            out.append(in_shape[i])
            copied.add(i)
        elif v == -1:
            out.append(None)
        else:
            out.append(v)
    holes = [i for i, v in enumerate(out) if v is None]
    if len(holes) > 1:
        raise InvalidLayer(layer, "more than one -1 in the shape")
    count = _product(in_shape)
    if holes:
        others = _product(v for v in out if v is not None)
        if others != 0:
            if count % others:
                raise InvalidLayer(layer, f"{pattern} cannot hold {count} elements")
            out[holes[0]] = count // others
        elif special_zero:
            num = _product(d for k, d in enumerate(in_shape) if k not in copied)
            den = _product(v for k, v in enumerate(out) if k not in copied and v is not None)
            out[holes[0]] = num // den
        else:
            out[holes[0]] = 0
    if _product(out) != count:
        raise InvalidLayer(layer, f"shape {out} does not hold the {count} elements of {list(in_shape)}")
    return tuple(int(v) for v in out)


@oracle("Reshape", "opset1")
def reshape(layer, inputs):
    data, pattern = inputs
    pattern = np.asarray(pattern)
    if pattern.ndim != 1:
        raise InvalidLayer(layer, "the shape input must be 1-D")
    out_shape = resolve_pattern(layer, data.shape, [int(v) for v in pattern], bool(layer.attrs["special_zero"]))
    k = np.arange(_product(out_shape))  # element k of the output is element k of the input
    return [data[np.unravel_index(k, data.shape)].reshape(out_shape) if data.ndim else
            np.full(out_shape, data, data.dtype)]
