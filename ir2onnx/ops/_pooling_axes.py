"""The pooling window along each spatial axis, as OpenVINO counts it (:class:`Axis`, built by
:func:`axes_of` from MaxPool's / AvgPool's attributes): kernel, stride, dilation, OpenVINO's pads
and output size, and the end pad that makes ONNX's floor rounding give that size (see
:mod:`ir2onnx.ops.pooling`)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidLayer
from ._common.windows import attr_ints, same_pads


@dataclass(frozen=True)
class Axis:
    size: int | None
    kernel: int
    stride: int
    dilation: int
    begin: int  # pads as OpenVINO sees them
    end: int
    out: int | None
    rule: str = "floor"  # how a dynamic axis counts windows: floor, ceil, ceil_torch, same_upper/lower

    @property
    def span(self) -> int:
        return (self.kernel - 1) * self.dilation + 1

    def end_for(self, n: int | None) -> int:
        """End pad that makes floor rounding reach ``n`` windows (at least); a dynamic size keeps
        floor rounding with the layer's own pad."""
        if self.size is None:
            return self.end
        return max(0, (n - 1) * self.stride + self.span - self.size - self.begin)

    def floor_count(self, n: int | None) -> int | None:
        """Windows floor rounding gives with the end pad ``end_for(n)`` (>= n)."""
        if self.size is None:
            return n
        return (self.size + self.begin + self.end_for(n) - self.span) // self.stride + 1

    @property
    def onnx_end(self) -> int:
        return self.end_for(self.out)

    @property
    def trailing_empty(self) -> int:
        """Windows at the end that start past the input (they hold padding only)."""
        if self.size is None:
            return 0  # floor rounding: only pads_end >= kernel makes such windows (see callers)
        first = -(-(self.size + self.begin) // self.stride)  # first o with o*s - begin >= size
        return max(0, self.out - first)

    @property
    def has_empty_window(self) -> bool:
        """Some window holds no input element (it starts past the input's end)."""
        return self.trailing_empty > 0


def axes_of(layer, x, dilated: bool) -> list[Axis]:
    kernel = list(layer.attrs.get("kernel") or [])
    rank = len(kernel)
    if rank not in (1, 2, 3):
        raise InvalidLayer(layer, f"kernel {kernel} must have 1, 2 or 3 values")
    if x.shape is not None and len(x.shape) != rank + 2:
        raise InvalidLayer(layer, f"data of rank {len(x.shape)} does not fit a {rank}-D kernel")
    kernel = attr_ints(layer, "kernel", rank, 1)
    strides = attr_ints(layer, "strides", rank, 1)
    dilations = attr_ints(layer, "dilations", rank, 1) if dilated else [1] * rank
    mode = layer.attrs.get("auto_pad") or "explicit"
    rounding = layer.attrs.get("rounding_type") or "floor"
    spatial = [None] * rank if x.shape is None else list(x.shape[2:])
    if mode in ("explicit", "notset"):
        begins, ends = attr_ints(layer, "pads_begin", rank, 0), attr_ints(layer, "pads_end", rank, 0)
    else:
        begins, ends = [0] * rank, [0] * rank
    out = []
    for i in range(rank):
        size, k, s, d = spatial[i], kernel[i], strides[i], dilations[i]
        b, e = begins[i], ends[i]
        span = (k - 1) * d + 1
        if size is None:
            rule = rounding if mode in ("explicit", "notset", "valid") else mode
            if mode in ("same_upper", "same_lower") and s == 1:
                (b, e), rule = same_pads(layer, mode, None, k, s, d), "floor"
            out.append(Axis(None, k, s, d, b, e, None, rule))  # see pooling_padding
            continue
        if mode in ("same_upper", "same_lower"):
            b, e = same_pads(layer, mode, size, k, s, d)
            n = -(-size // s)
        else:
            room = size + b + e - span
            if room < 0:
                raise InvalidLayer(layer, f"spatial axis {i}: the padded input ({size} + {b} + {e}) is "
                                          f"smaller than the kernel ({span})")
            n = room // s + 1 if rounding == "floor" else -(-room // s) + 1
            if rounding == "ceil_torch" and (n - 1) * s >= size + b:
                n -= 1
        out.append(Axis(size, k, s, d, b, e, n))
    return out
