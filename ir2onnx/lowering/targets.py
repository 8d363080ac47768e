"""Deployment targets (``--target``): which ONNX forms the converter may emit, and the limits of
the runtime that will load the file.

* ``onnxruntime`` (the default): forms tuned for onnxruntime's CPU provider: the lowest opset
  >= 17 that every layer needs, raised to 21 where per-channel compressed MatMul weights are
  written in blocks (onnxruntime fuses those into its ``com.microsoft`` MatMulNBits when it loads
  the file), tied 8-bit tables stored through an alias for that fusion.
* ``onnx``: the standard ``ai.onnx`` domain for any runtime: the lowest opset (from 14) and IR
  version the model needs; compressed weights as plain (per axis / group-wise blocked)
  DequantizeLinear, per-channel weights per axis (blocks of K serve onnxruntime's MatMulNBits, and
  OpenVINO's ONNX frontend cannot read a blocked DequantizeLinear of gathered table rows);
  FakeQuantize as QuantizeLinear -> DequantizeLinear where it is an 8-bit quantization; at opset
  >= 23 (``--opset 23``) ScaledDotProductAttention as Attention-23, RMS norms as
  RMSNormalization-23 and Llama's rotary embedding as RotaryEmbedding-23 where they fit exactly.
* ``web``: onnxruntime-web (WebAssembly): the ``onnx`` forms within opset 21 and IR version 10
  (per-channel MatMul weights in blocks of K where the opset is 21 anyway: the wasm build fuses
  them into MatMulNBits as onnxruntime does)
  (onnxruntime-web 1.18 and newer load them), weights within one ArrayBuffer (2 GiB) and the
  4 GiB wasm32 memory, f16 weights kept f16.
* ``tensorrt``: TensorRT's ONNX parser: the ``onnx`` forms, FakeQuantize as symmetric int8
  QuantizeLinear -> DequantizeLinear, no op its parser lacks, int64 constants that fit int32
  (the parser narrows them; a Slice's "to the end" sentinel and a Loop's "no limit" trip count are
  clamped, exactly); dynamic dims stay (TensorRT builds optimization profiles over them),
  ``--shape`` fixes them where the deployment has one shape, and the shape arithmetic then folds
  to constants.

docs/targets.md says the same with the reasons.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper

from ..errors import Ir2OnnxError, UnsupportedLayer, UnsupportedLayers

STANDARD_DOMAINS = ("", "ai.onnx")
INT32_MAX = 2**31 - 1
WEB_ARRAY_BUFFER = 0x7FE00000  # Chrome's largest ArrayBuffer: one fetched file, one .data file


@dataclass(frozen=True)
class Target:
    """What a deployment target lets the converter emit."""

    name: str
    runtime: str  # who loads the file, for messages
    onnxruntime_forms: bool = False  # forms chosen for onnxruntime's fusions (MatMulNBits)
    matmul_blocks: bool = True  # per-channel MatMul weights in blocks of K where the opset has them
    lowest_opset: bool = True  # the opset search starts at MIN_OPSET instead of DEFAULT_OPSET
    opset23_forms: bool = False  # Attention-23, RMSNormalization-23, RotaryEmbedding-23 at opset >= 23
    max_opset: int | None = None
    max_ir_version: int | None = None
    quantized: str = "qdq"  # the default --quantized
    max_weight_bytes: int | None = None
    missing_ops: frozenset = frozenset()  # ONNX ops the runtime has no importer for
    int32_constants: bool = False


TENSORRT_MISSING = frozenset({
    # marked unsupported in onnx-tensorrt's docs/operators.md (the TensorRT 8.5 table; a newer
    # parser may take a few): ir2onnx's lowerings emit some (ConvInteger for i32 convolutions,
    # BitShift for integer Power, Compress for DetectionOutput, Unique ...)
    "BitShift", "Compress", "ConcatFromSequence", "ConvInteger", "Det", "DynamicQuantizeLinear",
    "MatMulInteger", "MaxRoiPool", "MaxUnpool", "MelWeightMatrix", "Multinomial",
    "NegativeLogLikelihoodLoss", "Optional", "OptionalGetElement", "OptionalHasElement",
    "QLinearConv", "QLinearMatMul", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
    "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap", "SoftmaxCrossEntropyLoss",
    "SplitToSequence", "StringNormalizer", "TfIdfVectorizer", "Unique", "Bernoulli", "STFT",
    "BlackmanWindow", "HammingWindow", "HannWindow",
})

TARGETS = {
    "onnxruntime": Target("onnxruntime", "onnxruntime", onnxruntime_forms=True, lowest_opset=False,
                          quantized="exact"),
    "onnx": Target("onnx", "an ONNX runtime", opset23_forms=True, matmul_blocks=False),
    "web": Target("web", "onnxruntime-web", max_opset=21, max_ir_version=10, quantized="exact",
                  max_weight_bytes=WEB_ARRAY_BUFFER),
    "tensorrt": Target("tensorrt", "TensorRT's ONNX parser", quantized="qdq-symmetric",
                       missing_ops=TENSORRT_MISSING, int32_constants=True, matmul_blocks=False),
}
DEFAULT = "onnxruntime"


def get(name: "str | Target") -> Target:
    """The Target called ``name``; Ir2OnnxError for an unknown one."""
    if isinstance(name, Target):
        return name
    if name not in TARGETS:
        raise Ir2OnnxError(f"target '{name}': choose one of {', '.join(TARGETS)}")
    return TARGETS[name]


def opset_range(target: Target, floor: int, newest: int) -> tuple[int, int]:
    """The first opset the converter tries and the newest it may choose for ``target``."""
    return floor, newest if target.max_opset is None else min(newest, target.max_opset)


def check_opset(target: Target, opset: int) -> None:
    """A given ``--opset`` beyond what the target loads is refused."""
    if target.max_opset is not None and opset > target.max_opset:
        raise Ir2OnnxError(f"--opset {opset}: target {target.name} ({target.runtime}) loads opsets up to "
                           f"{target.max_opset}")


def ir_version(target: Target, opset: int, pinned: int | None) -> int:
    """The ONNX IR version of a model at ``opset``: the lowest that holds the opset, or ``pinned``
    (``--ir-version``) when that is at least as high and within what onnx and the target know."""
    lowest = helper.find_min_ir_version_for([helper.make_opsetid("", opset)])
    if pinned is None:
        return lowest
    if pinned < lowest:
        raise Ir2OnnxError(f"--ir-version {pinned}: ONNX opset {opset} needs IR version >= {lowest} "
                           f"(--opset pins a lower opset where the model's layers allow one)")
    newest = onnx.IR_VERSION if target.max_ir_version is None else min(onnx.IR_VERSION, target.max_ir_version)
    if pinned > newest:
        raise Ir2OnnxError(f"--ir-version {pinned}: choose {lowest}..{newest}"
                           + (f" (target {target.name} loads up to {target.max_ir_version})"
                              if target.max_ir_version is not None else ""))
    return pinned


def nonstandard_nodes(model) -> list[str]:
    """``domain::op`` of every node outside the standard domain, sub-graphs included, and of
    every opset import outside it (the count the ``onnx`` target keeps at zero)."""
    found = [f"opset_import {o.domain}" for o in model.opset_import if o.domain not in STANDARD_DOMAINS]

    def walk(graph) -> None:
        for node in graph.node:
            if node.domain not in STANDARD_DOMAINS:
                found.append(f"{node.domain}::{node.op_type}")
            for a in node.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    walk(g)

    walk(model.graph)
    return found


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _all_nodes(g)


# the non-standard ops a lowering may write for onnxruntime alone (ops/_attention_gqa.py)
ONNXRUNTIME_OPS = frozenset({"opset_import com.microsoft", "com.microsoft::GroupQueryAttention"})


def finish(conv, target: Target) -> None:
    """The checks and rewrites of ``target`` on a lowered model (:class:`~.convert.Converted`):
    refusals name the layer and the target, all of them at once."""
    model = conv.model
    odd = nonstandard_nodes(model)
    if target.onnxruntime_forms:  # --genai's attention (attention="gqa") is onnxruntime's own op
        odd = [o for o in odd if o not in ONNXRUNTIME_OPS]
    if odd:  # no other lowering emits one: a converter defect, not a property of the model
        raise AssertionError(f"internal: non-standard nodes in the converted model: {', '.join(odd[:5])}")
    problems: list = []
    nodes = list(_all_nodes(model.graph))
    for node in nodes:
        if node.op_type in target.missing_ops:
            layer = conv.node_layers.get(node.name)
            if layer is not None:
                problems.append((layer, f"target {target.name}: {target.runtime} has no {node.op_type}, "
                                        f"which this layer's lowering needs"))
    if target.int32_constants:
        problems += _narrow_int64(conv, nodes, target)
    if target.max_weight_bytes is not None and conv.weight_bytes > target.max_weight_bytes:
        raise Ir2OnnxError(
            f"target {target.name}: the weights take {conv.weight_bytes / 2**30:.2f} GiB; {target.runtime} "
            f"loads a file into one ArrayBuffer (at most {target.max_weight_bytes / 2**30:.2f} GiB in "
            f"Chrome) and runs in 4 GiB of wasm32 memory: compress the weights (NNCF int8/int4) first")
    seen, unique = set(), []
    for layer, reason in problems:
        if (layer.id, reason) not in seen:
            seen.add((layer.id, reason))
            unique.append((layer, reason))
    if len(unique) == 1:
        raise UnsupportedLayer(*unique[0])
    if unique:
        raise UnsupportedLayers(unique)


# inputs where an int64 past int32 may be clamped: a Slice's starts and ends (a bound past the dim
# is clamped by Slice itself, so the result is the same) and a Loop's trip count (INT64_MAX: "no
# limit"; TensorRT counts iterations in int32)
_BOUNDS = {"Slice": (1, 2), "Loop": (0,)}
# ops that pass such a value on unchanged (None: every input), towards a bound
_PASS = {"Where": (1, 2), "Concat": None, "Min": None, "Max": None, "Unsqueeze": (0,), "Squeeze": (0,),
         "Reshape": (0,), "Identity": (0,)}


def _only_bounds(name: str, consumers: dict, depth: int = 0) -> bool:
    """Whether every reader of ``name`` is a bound of :data:`_BOUNDS`, directly or through ops
    that pass the value on (a graph output, or any other reader, is not)."""
    uses = consumers.get(name, [])
    if not uses or depth > 4:
        return False
    for node, i in uses:
        if i in _BOUNDS.get(node.op_type, ()):
            continue
        passes = _PASS.get(node.op_type, ())
        if node.op_type in _PASS and (passes is None or i in passes) \
                and all(_only_bounds(o, consumers, depth + 1) for o in node.output):
            continue
        return False
    return True


def _narrow_int64(conv, nodes, target: Target) -> list:
    """int64 initializers whose values fit int32 (TensorRT narrows them); a constant that only
    reaches Slice bounds or a Loop's trip count (:data:`_BOUNDS`) is clamped to int32, exactly;
    any other value past int32 is a refusal of the layer that reads it."""
    entries = {t.name: t for t in conv.tensors if t.etype.name == "i64"}
    if not entries:
        return []
    consumers: dict[str, list] = {}
    for node in nodes:
        for i, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, i))
    outputs = {o.name for o in conv.model.graph.output}
    problems = []
    for name, t in entries.items():
        values = _values(t) if name in consumers else None
        if values is None or values.size == 0:
            continue
        lo, hi = int(values.min()), int(values.max())
        if -INT32_MAX - 1 <= lo and hi <= INT32_MAX:
            continue
        if t.alias is None and name not in outputs and _only_bounds(name, consumers):
            t.data = np.clip(values, -INT32_MAX - 1, INT32_MAX).astype(np.int64)
            continue
        for node, _ in consumers[name]:
            layer = conv.node_layers.get(node.name)
            if layer is not None:
                problems.append((layer, f"target {target.name}: the int64 constant '{name}' holds "
                                        f"{hi if hi > INT32_MAX else lo}, beyond int32, which "
                                        f"{target.runtime} narrows int64 to"))
    return problems


def _values(entry) -> np.ndarray | None:
    data = entry.data
    if isinstance(data, np.ndarray):
        return data.astype(np.int64, copy=False)
    array = getattr(data, "array", None)
    return None if array is None else np.asarray(array(), np.int64)
