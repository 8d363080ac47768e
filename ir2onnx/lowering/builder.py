"""The one place ONNX nodes and initializers are made while lowering.

``b.Reshape(x, shape)`` emits a node (any ONNX op name works as a method) and returns its
output name; ``b.Split(x, _outputs=2, axis=0)`` returns a list. Inputs may be names, :class:`Value`
objects or ``None`` (an omitted optional input). ``b.const(array)`` adds a small initializer
(equal constants are shared). Large weights are not copied here: a Const layer's bytes stay in
the .bin until the model is materialized or streamed to disk (see :mod:`ir2onnx.writer`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Union

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper

from ..ir.element_types import ElementType, from_numpy
from ..ir.graph import ConstData, Shape
from ..ir.names import fresh

@dataclass(frozen=True)
class Deferred:
    """Bytes made only when the file is written, one tensor at a time (a packed weight stored
    transposed): ``make()`` returns them in ONNX raw_data layout, as bytes or a uint8 array."""

    make: Callable[[], "bytes | np.ndarray"]


TensorData = Union[ConstData, np.ndarray, Deferred]


@dataclass
class TensorEntry:
    """An initializer: name, type, dims, and where its bytes come from (not copied yet)."""

    name: str
    etype: ElementType
    dims: tuple[int, ...]
    data: TensorData
    alias: str | None = None  # another entry whose bytes these are (see Builder.add_alias)

    @property
    def nbytes(self) -> int:
        """The size in raw_data, from the dims and type (nothing is packed to learn it)."""
        return self.etype.nbytes(math.prod(self.dims))

    def raw_bytes(self) -> bytes | memoryview:
        """The packed bytes as ONNX stores them in raw_data."""
        if isinstance(self.data, ConstData):
            raw = memoryview(self.data.raw())
        elif isinstance(self.data, Deferred):
            made = self.data.make()
            raw = memoryview(np.ascontiguousarray(made)).cast("B") if isinstance(made, np.ndarray) else made
        else:
            raw = pack(self.data, self.etype)
        if len(raw) != self.nbytes:
            raise AssertionError(f"internal: initializer {self.name} has {len(raw)} bytes, "
                                 f"its dims and type say {self.nbytes}")
        return raw

    def skeleton(self) -> TensorProto:
        """A TensorProto with everything but the data."""
        t = TensorProto(name=self.name, data_type=self.etype.onnx)
        t.dims.extend(self.dims)
        return t


def _low_bits(array: np.ndarray, mask: int) -> np.ndarray:
    """The low bits of integer values as uint8 (two's complement for negative ones)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.kind in "iu" and flat.dtype.itemsize == 1:
        return flat.view(np.uint8) & mask
    if flat.dtype.kind in "iu":
        return flat.astype(np.uint8) & mask  # wraps modulo 256: the low bits are kept
    if flat.dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        return flat.astype(np.int8).view(np.uint8) & mask
    return (flat.astype(np.int64) & mask).astype(np.uint8)  # ml_dtypes int4/uint4, floats holding integers


def pack(array: np.ndarray, etype: ElementType) -> bytes:
    """Bytes of ``array`` in ONNX raw_data layout (4-bit types packed, low nibble first)."""
    if etype.bits == 4:
        flat = _low_bits(array, 0x0F)
        if flat.size % 2:
            flat = np.append(flat, np.uint8(0))
        return (flat[0::2] | (flat[1::2] << 4)).tobytes()
    if etype.bits == 2:
        flat = np.asarray(array, order="C").reshape(-1).astype(np.int64) & 3
        flat = np.append(flat, np.zeros((-flat.size) % 4, np.int64))
        return (flat[0::4] | flat[1::4] << 2 | flat[2::4] << 4 | flat[3::4] << 6).astype(np.uint8).tobytes()
    return np.asarray(array, dtype=etype.numpy, order="C").tobytes()


class Value:
    """A tensor while lowering: ONNX name, IR element type, partial shape, constant when known.

    A constant's ONNX initializer is only created when someone asks for :attr:`name`, so values
    that are folded away at convert time (shapes, block sizes ...) leave nothing in the model.
    """

    def __init__(self, builder: "Builder", etype: ElementType, shape: Shape, *, name: str | None = None,
                 const: np.ndarray | Callable[[], np.ndarray] | None = None,
                 source: ConstData | None = None, hint: str = "const",
                 unrepresentable: Exception | None = None):
        self._b, self.etype, self.shape = builder, etype, shape
        self._name, self._const, self._source, self._hint = name, const, source, hint
        self._unrepresentable = unrepresentable  # raised if an ONNX tensor is ever needed
        # Set by a lowering whose output can absorb a following Add exactly (ConvTranspose bias):
        # absorb_add(other: Value) -> Value | None, called by the Add lowering before emitting Add.
        self.absorb_add: Callable[["Value"], "Value | None"] | None = None
        # ... and a following Multiply (LayerNormalization's scale): absorb_mul(other) -> Value | None.
        self.absorb_mul: Callable[["Value"], "Value | None"] | None = None
        # Set by a lowering that can produce its output transposed at no cost (a quantized weight
        # stored transposed): transposed(perm) -> Value | None, called by MatMul's transpose_b.
        self.transposed: Callable[[list[int]], "Value | None"] | None = None
        # ... and reshaped: reshaped(shape) -> Value | None, called by GroupConvolution's filters.
        self.reshaped: Callable[[tuple[int, ...]], "Value | None"] | None = None
        # Set by a lowering that can gather rows of its value before computing it (a compressed
        # table): gathered(indices) -> Value | None, with int64 indices all in range, called by
        # Gather on axis 0.
        self.gathered: Callable[["Value"], "Value | None"] | None = None

    @property
    def name(self) -> str:
        if self._name is None:
            if self._unrepresentable is not None:
                raise self._unrepresentable
            data = self._source if self._source is not None else self.value()
            self._name = self._b.add_initializer(data, self.etype, self._hint)
        return self._name

    @property
    def is_const(self) -> bool:
        return self._const is not None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def value(self) -> np.ndarray:
        """The constant's values (raises if the value is only known at run time)."""
        if self._const is None:
            raise ValueError(f"{self._name} is not a constant")
        if callable(self._const):
            self._const = self._const()
        return self._const

    def __repr__(self) -> str:
        return f"Value({self._name or '<const>'}, {self.etype.name}, {self.shape})"


class LazyValue(Value):
    """A Value whose ONNX nodes are emitted by ``emit()`` on the first read of :attr:`name`, so a
    value that a later layer folds away (a shape vector, a ConvTranspose that absorbs a bias)
    leaves no dead nodes. The nodes are named after the layer that made the value."""

    def __init__(self, builder: "Builder", etype: ElementType, shape: Shape, emit: Callable[[], str]):
        super().__init__(builder, etype, shape)
        self._emit, self._layer = emit, builder.layer_name

    @property
    def name(self) -> str:
        if self._name is None:
            saved, self._b.layer_name = self._b.layer_name, self._layer
            try:
                self._name = self._emit()
            finally:
                self._b.layer_name = saved
        return self._name


class Builder:
    """Collects nodes, initializers and graph inputs/outputs for one ONNX graph."""

    def __init__(self, opset: int):
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.tensors: list[TensorEntry] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._used: set[str] = set()
        self._small: dict[tuple, str] = {}
        self._shared: dict[tuple, str] = {}  # a .bin region (or a value made from one) -> its initializer
        self.layer_name = "node"  # prefix for node names, set per layer by the converter
        self.node_layers: dict[str, str] = {}  # node name -> the name of the layer that made it

    def unique(self, hint: str) -> str:
        """A tensor or node name made from ``hint`` that no other has (:func:`ir2onnx.ir.names.fresh`)."""
        return fresh(hint, self._used)

    def is_free(self, name: str) -> bool:
        return name not in self._used

    def reserve(self, name: str) -> str:
        """Claim an exact name (graph inputs and outputs); returns it."""
        if name in self._used:
            raise ValueError(f"tensor name '{name}' is used twice")
        self._used.add(name)
        return name

    # -- nodes -------------------------------------------------------------------------
    def op(self, op_type: str, *inputs: Any, _outputs: int = 1, _names: list[str] | None = None,
           **attrs: Any) -> Any:
        ins = ["" if x is None else (x.name if isinstance(x, Value) else x) for x in inputs]
        outs = _names or [self.unique(f"{self.layer_name}/{op_type}") for _ in range(_outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, ins, outs, name=self.unique(f"{self.layer_name}/{op_type}#"), **attrs)
        self.nodes.append(node)
        self.node_layers[node.name] = self.layer_name
        return outs[0] if _outputs == 1 and _names is None else outs

    def subgraph(self, make: Callable[[], list[tuple[str, ElementType, Shape]]]) -> onnx.GraphProto:
        """A graph (an If branch) of the nodes ``make()`` adds, taken out of this one; its outputs
        are the (name, element type, shape) that ``make`` returns. Values it reads that were made
        before it are read from the outer graph (name them first: a lazy value emitted inside
        would not be seen outside); initializers stay the outer graph's."""
        start = len(self.nodes)
        outputs = make()
        nodes = self.nodes[start:]
        del self.nodes[start:]
        return helper.make_graph(nodes, self.unique("branch"), [],
                                 [self.value_info(name, etype, shape) for name, etype, shape in outputs])

    def __getattr__(self, op_type: str) -> Callable[..., Any]:
        if not op_type[:1].isupper():
            raise AttributeError(op_type)
        return lambda *inputs, **attrs: self.op(op_type, *inputs, **attrs)

    # -- constants -----------------------------------------------------------------------
    def add_initializer(self, data: TensorData, etype: ElementType, hint: str = "const") -> str:
        """An initializer of ``data`` (a .bin region, or an array); equal small arrays and Consts
        of the same .bin region, type and shape share one."""
        dims = data.shape
        if isinstance(data, np.ndarray) and data.size <= 16:
            key = (etype.name, dims, pack(data, etype))
            if key in self._small:
                return self._small[key]
        name = self.add_tensor(data, etype, dims, hint)
        if isinstance(data, np.ndarray) and data.size <= 16:
            self._small[key] = name
        return name

    def add_tensor(self, data: TensorData, etype: ElementType, dims, hint: str = "const",
                   key: tuple | None = None) -> str:
        """An initializer of ``etype`` and ``dims`` whose bytes are ``data``'s. Tensors with equal
        ``key`` are stored once; a .bin region's key is its place, size, type and dims
        (``openvino.save_model`` stores equal constants once, and every Const reading the region
        gets the same initializer). ``key`` names what a Deferred or array is made from."""
        dims = tuple(int(d) for d in dims)
        if key is None and isinstance(data, ConstData):
            key = ()
        if key is not None:
            if isinstance(data, ConstData):
                key = (*key, data.bin.path, data.offset, data.size)
            key = (*key, etype.name, dims)
            if key in self._shared:
                return self._shared[key]
        name = self.unique(hint)
        self.tensors.append(TensorEntry(name, etype, dims, data))
        if key is not None:
            self._shared[key] = name
        return name

    def add_alias(self, name: str) -> str:
        """A second initializer with the bytes of ``name``: with external data both point at the
        same bytes of the .data file (stored once); in one file the writer replaces it by
        ``name`` itself (:func:`ir2onnx.lowering.convert.Converted.without_aliases`). For
        onnxruntime, which fuses DequantizeLinear -> MatMul into MatMulNBits only for a weight
        no other node reads."""
        entry = next(t for t in self.tensors if t.name == name)
        alias = self.unique(f"{name}_alias")
        self.tensors.append(TensorEntry(alias, entry.etype, entry.dims, entry.data, alias=name))
        return alias

    def const(self, values: Any, dtype: Any = np.int64, hint: str = "const") -> str:
        """Name of an initializer holding ``values`` (np.int64 unless ``dtype`` says otherwise)."""
        array = np.asarray(values, dtype=dtype)
        return self.add_initializer(array, from_numpy(array.dtype), hint)

    def value(self, name: str, etype: ElementType, shape: Shape) -> Value:
        return Value(self, etype, shape, name=name)

    def const_value(self, array: np.ndarray, hint: str = "const") -> Value:
        """A constant :class:`Value`; its initializer is made only if it is used."""
        array = np.asarray(array)
        return Value(self, from_numpy(array.dtype), array.shape, const=array, hint=hint)

    # -- graph inputs / outputs ------------------------------------------------------------
    def value_info(self, name: str, etype: ElementType, shape: Shape,
                   dim_prefix: str | None = None) -> onnx.ValueInfoProto:
        """Type and partial shape; dynamic dims get symbolic names ``{dim_prefix}_d{i}`` when a
        prefix is given (graph inputs), else stay anonymous (graph outputs)."""
        if shape is None:
            return helper.make_tensor_value_info(name, etype.onnx, None)
        dims = [d if d is not None else (f"{dim_prefix}_d{i}" if dim_prefix else None)
                for i, d in enumerate(shape)]
        return helper.make_tensor_value_info(name, etype.onnx, dims)
