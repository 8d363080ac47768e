"""The in-memory IR graph: layers, ports, edges, constants (read by :mod:`ir2onnx.ir.reader`).

A shape is a tuple of dims, each an ``int`` or ``None`` (dynamic), or ``None`` for a dynamic
rank. Const data stays in the memory-mapped .bin until someone asks for it.
"""
from __future__ import annotations

import math
import mmap
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import IRFormatError
from .element_types import ElementType, unpack

Dim = int | None
Shape = tuple[Dim, ...] | None


def is_static(shape: Shape) -> bool:
    """True when the rank and every dim are known."""
    return shape is not None and all(d is not None for d in shape)


def shape_str(shape: Shape) -> str:
    """``[?,3,224,224]`` style, for messages."""
    if shape is None:
        return "[...]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class BinFile:
    """The weights file, memory-mapped once on first use and shared by every Const."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.size = os.path.getsize(self.path)
        self._map: np.ndarray | None = None

    def bytes_view(self, offset: int, size: int) -> np.ndarray:
        """A read-only uint8 view of ``size`` bytes at ``offset`` (no copy)."""
        if size == 0:
            return np.zeros(0, np.uint8)
        if self._map is None:
            with open(self.path, "rb") as f:
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._map = np.frombuffer(mm, dtype=np.uint8)
        return self._map[offset : offset + size]

    def read(self, offset: int, size: int) -> np.ndarray:
        """A writable copy of ``size`` bytes at ``offset``, read without the memory map, so that
        the pages of a weight that is transformed once do not stay in the process."""
        out = np.empty(size, np.uint8)
        view = memoryview(out)
        with open(self.path, "rb", buffering=0) as f:
            f.seek(offset)
            done = 0
            while done < size:
                n = f.readinto(view[done:])
                if not n:
                    raise IRFormatError(f"'{self.path}' ended early while reading weights")
                done += n
        return out


@dataclass(frozen=True)
class ConstData:
    """Where a Const's bytes are: a range of the .bin, plus how to interpret it."""

    bin: BinFile
    offset: int
    size: int
    etype: ElementType
    shape: tuple[int, ...]

    def raw(self) -> np.ndarray:
        """The packed bytes as a uint8 view of the .bin."""
        return self.bin.bytes_view(self.offset, self.size)

    def array(self) -> np.ndarray:
        """The values, one numpy element each (a view of the .bin where the type allows)."""
        count = math.prod(self.shape)
        return unpack(self.raw(), self.etype, count).reshape(self.shape)


@dataclass
class Port:
    """An input or output port of a layer."""

    id: int
    etype: ElementType | None
    shape: Shape
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """The producer of an input: layer id and the index of its output port."""

    layer: str
    output: int


@dataclass(frozen=True)
class PortMapEntry:
    """One ``<port_map>`` rule of If/Loop/TensorIterator: an outer port <-> a body Parameter/Result.

    ``port`` is the index of the outer input (or output) port in ``layer.inputs`` (``outputs``),
    -1 for Loop's special ports (``purpose`` then says which); ``axis`` is None unless the tensor
    is sliced (inputs) or concatenated (outputs) along it.
    """

    port: int
    internal_layer_id: str
    axis: int | None = None
    start: int = 0
    end: int = -1
    stride: int = 1
    part_size: int = 1
    purpose: str | None = None


@dataclass
class Body:
    """A sub-graph of If/Loop/TensorIterator with its port map and back edges."""

    graph: "Graph"
    inputs: list[PortMapEntry]
    outputs: list[PortMapEntry]
    back_edges: list[tuple[str, str]]  # (body Result id, body Parameter id)


@dataclass
class Layer:
    """One ``<layer>``: type, version, typed attributes, ports and where each input comes from."""

    id: str
    name: str
    type: str
    version: str
    attrs: dict[str, Any]
    inputs: list[Port]
    outputs: list[Port]
    sources: list[Source] = field(default_factory=list)
    const: ConstData | None = None
    rt_info: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, Body] = field(default_factory=dict)  # "body", "then_body", "else_body"

    @property
    def key(self) -> tuple[str, str]:
        return (self.type, self.version)

    def __repr__(self) -> str:
        return f"<Layer {self.id} '{self.name}' {self.type}-{self.version}>"


@dataclass
class Graph:
    """A whole IR model: layers in topological order, Parameters and Results in file order."""

    name: str
    ir_version: int
    layers: dict[str, Layer]
    order: list[Layer]
    parameters: list[Layer]
    results: list[Layer]
    xml_path: str = ""
    bin_path: str | None = None
    precision: str | None = None  # the compute precision it was transformed to (lowering/precision.py); None: as read

    def producer(self, layer: Layer, index: int) -> tuple[Layer, int]:
        """The layer and output index that feed input ``index`` of ``layer``."""
        src = layer.sources[index]
        return self.layers[src.layer], src.output

    def all_layers(self):
        """Every layer in order, each followed by the layers of its bodies (If/Loop/TensorIterator)."""
        for layer in self.order:
            yield layer
            for body in layer.bodies.values():
                yield from body.graph.all_layers()

    def consumers(self) -> dict[tuple[str, int], list[tuple[Layer, int]]]:
        """For each (layer id, output index): the (layer, input index) pairs it feeds."""
        out: dict[tuple[str, int], list[tuple[Layer, int]]] = {}
        for layer in self.order:
            for i, src in enumerate(layer.sources):
                out.setdefault((src.layer, src.output), []).append((layer, i))
        return out
