"""RMSNorm without a scale: a Mul by ones after the Divide, for onnxruntime's fusion.

OpenVINO writes RMSNorm as::

    Power(x, 2) -> ReduceMean(last axis) -> Add(eps) -> Sqrt -> Divide(x, .) [-> Multiply(weight)]

and its weight compression drops the Multiply where the weight is all ones or has been folded
into the MatMul that follows (optimum-intel's int8/int4 LLM IRs: every RMSNorm ends at the
Divide). Lowered op by op that is five ONNX nodes that onnxruntime leaves alone: its
SimplifiedLayerNormalization fusion wants the trailing Mul by a scale. The Divide's value is
therefore ``Mul(Div(x, .), ones[H])`` (exact: a product by one), and a following Multiply by a
constant takes the place of the ones (:attr:`absorb_mul`), so a norm that keeps its weight gets
no extra node.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..lowering.builder import LazyValue, Value


def x_operand(ctx, layer) -> int | None:
    """The index of ``x`` when ``layer`` is RMSNorm's Divide(x, Sqrt(Add(ReduceMean(Power(x,
    .)), .))) or Multiply(x, Divide(1, that Sqrt)) (OpenVINO's rsqrt), of the same ``x``; else None.
    The constants are onnxruntime's to check: a Mul by ones that does not fuse is still exact."""
    g = ctx.graph

    def producer(of, index: int):
        if of is None or index >= len(of.sources) or of.sources[index].layer not in g.layers:
            return None
        return g.producer(of, index)[0]

    def rms_of(sqrt, source) -> bool:
        add = producer(sqrt, 0) if sqrt is not None and sqrt.type == "Sqrt" else None
        if add is None or add.type != "Add":
            return False
        means = [p for p in (producer(add, 0), producer(add, 1)) if p is not None and p.type == "ReduceMean"]
        power = producer(means[0], 0) if len(means) == 1 else None
        return power is not None and power.type == "Power" and power.sources[0] == source

    if layer.type == "Divide":
        return 0 if rms_of(producer(layer, 1), layer.sources[0]) else None
    for i in (0, 1):
        inverse = producer(layer, i)
        if inverse is not None and inverse.type == "Divide" and producer(inverse, 0) is not None \
                and producer(inverse, 0).type == "Const" and rms_of(producer(inverse, 1), layer.sources[1 - i]):
            return 1 - i
    return None


def normalized(ctx, x: Value, divisor: Value, product: Callable[[Value, Value], str]) -> Value | None:
    """``x / divisor`` times ones over the last dim, as a value whose ``absorb_mul`` replaces the
    ones by a constant; None when the last dim is not static. ``product(a, b)`` emits a Mul as
    the Multiply lowering does."""
    if x.shape is None or not x.shape or x.shape[-1] is None or x.is_const \
            or divisor.shape is None or not _fits(divisor.shape, x.shape):
        return None
    g, et, h = ctx.b, x.etype, x.shape[-1]
    made: dict = {}

    def divided() -> Value:
        if "div" not in made:
            made["div"] = Value(g, et, x.shape, name=g.Div(x, divisor))
        return made["div"]

    def ones() -> Value:  # one initializer for every norm of this width
        return Value(g, et, (h,), name=g.add_tensor(np.ones(h, et.numpy), et, (h,), "ones", key=("ones",)))

    out = LazyValue(g, et, x.shape, lambda: product(divided(), ones()))

    def absorb(other: Value):
        if not other.is_const or other.etype != et or other.shape is None or not _fits(other.shape, x.shape):
            return None
        return Value(g, et, x.shape, name=product(divided(), other))

    out.absorb_mul = absorb
    return out


def _fits(small, shape) -> bool:
    """Whether ``small`` broadcasts into ``shape`` without changing it (a dynamic dim against a
    dynamic one: the IR's own shape inference let them broadcast)."""
    return len(small) <= len(shape) and all(d == 1 or d == t for d, t in zip(reversed(small), reversed(shape)))
