"""OpenVINO's compressed weights kept packed: the decompression chain becomes one DequantizeLinear.

OpenVINO's weight-compression exports (NNCF ``compress_weights``, optimum-intel LLM exports)
store weights as integers and decompress them in the graph::

    Const(u8/i8/u4/i4/f8/nf4/f4e2m1) -> Convert(F) -> [Subtract(zero point)] -> Multiply(scale)
        -> [Reshape] -> [Convert(f32)]

The zero point (integer types only) is a Const of the weight's type -> Convert(F), or a float
Const holding integers; the scale a float Const, or a small constant sub-graph of Const, Convert
and Multiply computed at convert time in the IR's types (MXFP's f8e8m0 -> Convert(F), converted
exactly; NVFP4's Convert(f16)(f8e4m3 -> Convert(f32) times a global f32 scale), rounded as the IR
and OpenVINO do: onnxruntime's CPU provider would drop that f32 -> f16 -> f32 rounding, as it
removes Cast pairs); its layers are skipped by the converter. :func:`find` matches the chain
before lowering and the converter replaces its last layer by :func:`emit`: a DequantizeLinear
whose ``x`` is the .bin's packed bytes as they are (OpenVINO and ONNX both pack 4-bit values low
nibble first), so the ONNX file is about as small as the IR.

Forms (all exact):

* scale per tensor, or varying along one axis: DequantizeLinear per tensor / per axis (opset 13);
* scale varying along several neighbouring axes (group-wise ``[N, G, 1]`` on ``[N, G, gs]``):
  at opset >= 21, when the chain ends in the Reshape that merges the group axes (the usual
  ``[N, G*gs]``), blocked DequantizeLinear (``axis``, ``block_size=gs``) that replaces the
  Reshape; otherwise per axis on the flattened groups, then Reshape;
* u4/i4 weights need opset 21 (the ONNX types), f8e4m3/f8e5m2 (scale only, no zero point)
  opset 19, asked for through ``ctx.require_opset``;
* nf4/f4e2m1 (scale only): no DequantizeLinear that onnxruntime runs; :mod:`.table_weights`
  emits UINT4 codes -> Cast -> Gather(16-entry table) -> Mul(scale) -> [Reshape] (opset 21).

Arithmetic: ``(w - zp)`` is an integer of at most 9 bits (an f8 value: at most 4 significant
bits) and a scale has at most 24 significant bits, so DequantizeLinear's f32 product is exact. OpenVINO's CPU plugin decompresses f16-scaled
weights in f32 without rounding the product to f16 (measured, 2026.4: the MatMul output matches
an f64 reference within 5e-7 and the f16-rounded weights only within 3e-4); so a chain with f16
scales that ends in Convert(f32) becomes an f32 DequantizeLinear (scale widened exactly by a Cast) whose
output replaces the Convert: bit-exact to OpenVINO, and to the IR's f16 arithmetic within one f16
rounding of each weight (docs/deviations.md). Without the Convert the
output stays f16 as the IR computes it: f16 DequantizeLinear (opset 19), or f32 then Cast, which
rounds the exact product once, as the f16 Multiply does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.element_types import TYPES
from ..ir.graph import ConstData, Graph, Layer
from . import codebook_weights, table_weights
from .dequantize_forms import emit  # noqa: F401  (the converter calls decompression.emit)

MODES = ("dequantize", "unpack")
WEIGHT_TYPES = ("u8", "i8", "u4", "i4", "f8e4m3", "f8e5m2", *table_weights.TABLE_TYPES)
_FLOAT8 = ("f8e4m3", "f8e5m2")  # DequantizeLinear-19 x types; no zero point
_NO_ZERO_POINT = (*_FLOAT8, *table_weights.TABLE_TYPES)
_SCALE_TYPES = ("f16", "f32")
_RANGE = {"u8": (0, 255), "i8": (-128, 127), "u4": (0, 15), "i4": (-8, 7)}


@dataclass
class Match:
    """One decompression chain: its layers (the last one, ``root``, is replaced) and constants."""

    root: Layer
    chain: list[Layer]  # weight Const .. root, each consumed only by the next
    weight: ConstData
    zero_point: np.ndarray | None  # integers, broadcast to the weight's rank
    scale: np.ndarray  # broadcast to the weight's rank
    scale_type: str  # "f16" / "f32"
    out_type: str  # the root's element type
    reshape_to: tuple[int, ...] | None  # the root Reshape's output shape, if the chain has one
    consts: list[Layer]  # the layers of the zero point's and scale's constant sub-graphs
    tied: bool = False  # the root feeds both a Gather (a table) and a MatMul(transpose_b)
    codebook: np.ndarray | None = None  # CB4: the f16/f32 values the u4 weight indexes
    matmul_b: bool = False  # the root feeds a MatMul(transpose_b) as its weights


def _only_consumer(consumers, layer: Layer) -> tuple[Layer, int] | None:
    users = consumers.get((layer.id, 0), [])
    return users[0] if len(users) == 1 and len(layer.outputs) == 1 else None


def _const_value(graph: Graph, layer: Layer, used: list, depth: int = 0) -> np.ndarray | None:
    """Values of a constant sub-graph of Const, Convert and Multiply layers at most 3 deep (NVFP4's
    scale: Convert(f16) of Multiply(Convert(Const f8e4m3 -> f32), Const f32)), computed in the
    IR's types with IEEE round-to-nearest-even as OpenVINO does, else None; ``used`` collects
    its layers. A Convert from a type other than f32/f16 must convert every value exactly."""
    if layer.type == "Const" and layer.const is not None:
        used.append(layer)
        return layer.const.array()
    if depth >= 3 or len(layer.outputs) != 1 or layer.type not in ("Convert", "Multiply"):
        return None
    inputs = [_const_value(graph, graph.producer(layer, i)[0], used, depth + 1) for i in range(len(layer.sources))]
    if any(v is None for v in inputs):
        return None
    if layer.type == "Convert" and layer.attrs["destination_type"].numpy is not None:
        value, dst = inputs[0], layer.attrs["destination_type"].numpy
        with np.errstate(all="ignore"):
            out = value.astype(dst)
            exact = np.array_equal(out.astype(np.float64), value.astype(np.float64))
        if not exact and not (value.dtype in (np.float32, np.float16) and dst in (np.float32, np.float16)):
            return None
    elif layer.type == "Multiply" and layer.attrs.get("auto_broadcast", "numpy") == "numpy" \
            and inputs[0].dtype == inputs[1].dtype and inputs[0].dtype.kind == "f":
        with np.errstate(all="ignore"):
            out = inputs[0] * inputs[1]
    else:
        return None
    used.append(layer)
    return out


def _integer_zero_point(graph: Graph, layer: Layer, wtype: str, used: list) -> np.ndarray | None:
    """NNCF's zero point, Const(the weight's type) -> Convert(f16/f32), as int8/uint8 read off the
    .bin directly (exact: every such integer is an f16), else None."""
    if layer.type != "Convert" or layer.attrs["destination_type"].name not in _SCALE_TYPES:
        return None
    const = graph.producer(layer, 0)[0]
    if const.type != "Const" or const.const is None or const.const.etype.name != wtype:
        return None
    data, count = const.const, int(np.prod(const.const.shape, dtype=np.int64))
    raw = data.raw()
    signed = wtype[0] == "i"
    if data.etype.bits == 8:
        values = raw.view(np.int8 if signed else np.uint8)[:count]
    else:
        values = np.stack([raw & 0x0F, raw >> 4], axis=-1).reshape(-1)[:count]
        if signed:
            values = (values.astype(np.int8) ^ 8) - 8  # sign-extend 4 bits
    used.extend([const, layer])
    return values.reshape(tuple(data.shape))


def _folded(consumers, consts: list[Layer], chain: list[Layer]) -> set[str]:
    """Ids of the layers of ``consts`` (a zero point's or scale's constant sub-graph) read only
    inside it or by the chain: computed at convert time, so the converter skips them."""
    ids = {l.id for l in consts}
    inside = ids | {l.id for l in chain}
    changed = True
    while changed:
        out = {i for i in ids if any(c.id not in inside for c, _ in consumers.get((i, 0), []))}
        changed = bool(out)
        ids -= out
        inside -= out
    return ids


def _static(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def find(graph: Graph) -> tuple[dict[str, Match], set[str]]:
    """The decompression chains of ``graph``: root layer id -> Match, and the ids of the layers
    that the roots replace (skipped by the converter)."""
    consumers = graph.consumers()
    roots: dict[str, Match] = {}
    for layer in graph.order:
        if layer.type == "Const" and layer.const is not None and layer.const.etype.name in WEIGHT_TYPES:
            match = _match(graph, consumers, layer)
            if match is not None:
                roots[match.root.id] = match
    folded = {i for m in roots.values() for i in _folded(consumers, m.consts, m.chain)}
    roots = {r: m for r, m in roots.items() if r not in folded}  # NVFP4: the f8e4m3 scale's own chain
    skip = {l.id for m in roots.values() for l in m.chain if l is not m.root} | folded
    return roots, skip


def _match(graph, consumers, const: Layer) -> Match | None:
    wtype = const.const.etype.name
    chain, consts = [const], []
    step = _only_consumer(consumers, const)
    if step is None or step[0].type != "Convert":
        return None
    convert = step[0]
    ftype = convert.attrs["destination_type"].name
    chain.append(convert)
    codebook = None
    if wtype == "u4" and ftype in codebook_weights.INDEX_TYPES:
        found = codebook_weights.head(graph, consumers, convert, consts, _const_value)
        if found is None:
            return None
        codebook, gather = found
        ftype = codebook.dtype.name.replace("float", "f")
        chain.append(gather)
        step = _only_consumer(consumers, gather)
        if step is None or step[0].type != "Multiply":
            raise codebook_weights.refuse(gather, "its Gather is not followed by one Multiply by a scale")
        return _tail(graph, consumers, const, chain, consts, ftype, step, None, codebook)
    if ftype not in _SCALE_TYPES:
        return None
    step = _only_consumer(consumers, convert)
    zero_point = None
    if step is not None and step[0].type == "Subtract" and step[1] == 0:
        if wtype in _NO_ZERO_POINT:
            return None
        sub = step[0]
        lo, hi = _RANGE[wtype]
        zero_point = _integer_zero_point(graph, graph.producer(sub, 1)[0], wtype, consts)
        if zero_point is None:
            zp = _const_value(graph, graph.producer(sub, 1)[0], consts)
            if zp is None or not np.all(np.isfinite(zp)) or np.any(zp != np.round(zp)) \
                    or np.any(zp < lo) or np.any(zp > hi):
                return None
            zero_point = np.asarray(zp).astype(np.int8 if lo < 0 else np.uint8)  # exact: within the range
        chain.append(sub)
        step = _only_consumer(consumers, sub)
    if step is None or step[0].type != "Multiply":
        return None
    return _tail(graph, consumers, const, chain, consts, ftype, step, zero_point, None)


def _tail(graph, consumers, const: Layer, chain, consts, ftype: str, step, zero_point, codebook) -> Match | None:
    """The Multiply(scale) -> [Reshape] -> [Convert f32] that ends every chain."""
    wshape = tuple(const.const.shape)
    mul = step[0]
    scale = _const_value(graph, graph.producer(mul, 1 - step[1])[0], consts)
    if scale is None or scale.dtype != TYPES[ftype].numpy or not np.all(np.isfinite(scale)):
        if codebook is not None:
            raise codebook_weights.refuse(mul, f"the scale is not a finite constant of the codebook's type {ftype}")
        return None
    chain.append(mul)
    for arr in (scale, zero_point):  # both broadcast onto the weight without growing it
        if arr is not None and (arr.ndim > len(wshape) or np.broadcast_shapes(arr.shape, wshape) != wshape):
            if codebook is not None:
                raise codebook_weights.refuse(mul, f"the scale {list(arr.shape)} does not broadcast onto "
                                                   f"the indices {list(wshape)}")
            return None
    if any(l.attrs.get("auto_broadcast", "numpy") != "numpy" for l in chain[2:]):
        return None
    pad = lambda a: None if a is None else a.reshape((1,) * (len(wshape) - a.ndim) + a.shape)  # noqa: E731
    out_type, reshape_to = ftype, None
    step = _only_consumer(consumers, mul)
    if step is not None and step[0].type == "Reshape" and step[1] == 0 and _static(step[0].outputs[0].shape):
        reshape_to = tuple(step[0].outputs[0].shape)
        chain.append(step[0])
        step = _only_consumer(consumers, step[0])
    if step is not None and step[0].type == "Convert" and ftype == "f16" \
            and step[0].attrs["destination_type"].name == "f32":
        chain.append(step[0])
        out_type = "f32"
    root = chain[-1]
    readers = {(c.type, port, bool(c.attrs.get("transpose_b"))) for c, port in consumers.get((root.id, 0), [])}
    tied = any(t == "Gather" and p == 0 for t, p, _ in readers) and ("MatMul", 1, True) in readers
    return Match(root, chain, const.const, pad(zero_point), pad(scale), ftype, out_type, reshape_to, consts, tied,
                 codebook, matmul_b=("MatMul", 1, True) in readers)
