"""Per-element knowledge of small 1-D integer vectors (shape vectors) while converting.

``Value.elements`` holds, per element, an ``int`` when it is known, ``DimOf(v, j)`` when it equals
dim ``j`` of the tensor ``v``, ``None`` otherwise. Fully known vectors fold to constants; the rest
is emitted lazily (a node only when some consumer asks for the tensor), so Reshape can resolve a
pattern built from its own input's shape (ShapeOf -> Gather -> Concat) without leaving dead nodes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...ir.element_types import ElementType
from ...lowering.builder import Builder, LazyValue as BaseLazyValue, Value

MAX_TRACKED = 64  # vectors longer than this carry no per-element knowledge


@dataclass(frozen=True, eq=False)
class DimOf:
    """An element known to equal ``shape(value)[index]`` at run time (identity of ``value``)."""

    value: Value
    index: int

    def __eq__(self, other) -> bool:
        return isinstance(other, DimOf) and other.value is self.value and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self.value), self.index))


class LazyValue(BaseLazyValue):
    """A lazily emitted Value that also carries per-element knowledge of a shape vector."""

    def __init__(self, b: Builder, etype: ElementType, shape, emit: Callable[[], str], elements=None):
        super().__init__(b, etype, shape, emit)
        self.elements = elements


def elements_of(v: Value) -> tuple | None:
    """Per-element knowledge of a 0-D/1-D integer tensor, or None."""
    if v.shape is None or len(v.shape) > 1 or not (v.etype.is_integer and v.etype.numpy is not None):
        return None
    if v.is_const:
        if int(np.prod(v.shape, dtype=np.int64)) > MAX_TRACKED:
            return None
        return tuple(int(e) for e in np.asarray(v.value()).reshape(-1))
    return getattr(v, "elements", None)


def vector_value(b: Builder, etype: ElementType, shape, elements: tuple, emit: Callable[[], str]):
    """A folded array when every element is known, else a lazily emitted tensor."""
    if all(isinstance(e, int) for e in elements):
        return np.array(elements, dtype=etype.numpy).reshape(shape)
    return LazyValue(b, etype, shape, emit, elements if len(elements) <= MAX_TRACKED else None)
