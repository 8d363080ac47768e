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

For the ``onnx`` target at opset >= 23 (:mod:`ir2onnx.lowering.targets`) a norm whose constants
are exactly RMSNorm's (exponent 2, the mean over the last axis kept, a scalar epsilon added, the
reciprocal's numerator 1) becomes one RMSNormalization-23 (``axis=-1``, ``epsilon``; its scale the
ones or the following Multiply's constant): the same formula, x / Sqrt(Mean(x^2) + eps) * scale,
computed in f32 (``stash_type`` 1).
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


def epsilon(ctx, layer, k: int) -> float | None:
    """The epsilon of an f32 RMSNorm ending at ``layer`` (``x`` its input ``k``, as
    :func:`x_operand` found it) when every constant is exactly RMSNorm's; else None."""
    g = ctx.graph

    def producer(of, index: int):
        if of is None or index >= len(of.sources) or of.sources[index].layer not in g.layers:
            return None
        return g.producer(of, index)[0]

    def const(of, index: int):
        v = ctx.values.get((of.sources[index].layer, of.sources[index].output)) if of is not None else None
        return np.asarray(v.value()) if v is not None and v.is_const else None

    if layer.type == "Divide":
        sqrt = producer(layer, 1)
    else:
        inverse = producer(layer, 1 - k)
        one = const(inverse, 0)
        if one is None or one.size != 1 or float(one.reshape(())) != 1.0:
            return None
        sqrt = producer(inverse, 1)
    add = producer(sqrt, 0)
    if add is None or add.type != "Add":
        return None
    m = 0 if producer(add, 0) is not None and producer(add, 0).type == "ReduceMean" else 1
    mean, eps = producer(add, m), const(add, 1 - m)
    power = producer(mean, 0)
    rank = power.outputs[0].shape if power is not None else None
    axes, two = const(mean, 1), const(power, 1)
    if eps is None or eps.size != 1 or eps.dtype != np.float32 or axes is None or two is None \
            or rank is None or not mean.attrs.get("keep_dims", False) \
            or sorted(int(a) % len(rank) for a in axes.reshape(-1)) != [len(rank) - 1] \
            or not np.all(two == 2) or power.outputs[0].etype.name != "f32":
        return None
    return float(eps.reshape(()))


def standard(ctx, x: Value, eps: float) -> Value | None:
    """RMSNormalization-23(x, ones[H], axis=-1, epsilon) as a value whose ``absorb_mul`` takes a
    following Multiply's constant as the scale; None when the last dim is not static."""
    if x.shape is None or not x.shape or x.shape[-1] is None or x.is_const or x.etype.name != "f32":
        return None
    g, et, h = ctx.b, x.etype, x.shape[-1]

    def norm(scale) -> str:
        return g.RMSNormalization(x, scale, axis=-1, epsilon=eps)

    def ones() -> str:
        return g.add_tensor(np.ones(h, et.numpy), et, (h,), "ones", key=("ones",))

    out = LazyValue(g, et, x.shape, lambda: norm(ones()))

    def absorb(other: Value):
        if not other.is_const or other.etype != et or other.shape is None or not _fits(other.shape, x.shape):
            return None
        weight = np.broadcast_to(np.asarray(other.value()), (h,)) if len(other.shape) <= 1 else None
        if weight is None:  # [1, .., 1, H] or [.., 1]: the scale as a vector of H
            if any(d != 1 for d in other.shape[:-1]):
                return None
            weight = np.broadcast_to(np.asarray(other.value()).reshape(-1), (h,))
        return Value(g, et, x.shape, name=norm(g.const(np.ascontiguousarray(weight), et.numpy, "rms_scale")))

    out.absorb_mul = absorb
    return out
