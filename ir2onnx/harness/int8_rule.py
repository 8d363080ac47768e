"""The quantization-step rule of ``ir2onnx check`` (one row of :mod:`ir2onnx.harness.rules`): the float outputs of an INT8 IR (one with FakeQuantize layers).

An element-wise tolerance is the wrong yardstick there: a value that lies on a near-tie of a
FakeQuantize rounds to one level in one backend and to the next in another, and the flip moves
everything it feeds by whole quantization steps; OpenVINO's CPU plugin also runs INT8 IRs through
its low-precision transformations, which move or skip FakeQuantize layers (one before a residual
Add), so it computes a slightly different network. The rule, per output and pair of backends:

- **quantized output** (a FakeQuantize feeds the output, possibly through layers that keep its
  values on the grid: ReLU, MaxPool, reshapes, transposes, slices, Concat): the share of
  elements that agree within one quantization step ``(output_high - output_low) / (levels - 1)``
  of that FakeQuantize (its largest, for per-channel ranges) is reported; the pair passes when
  at least :data:`WITHIN_ONE_STEP` of them do and at least :data:`EQUAL` are equal within the
  element-wise tolerance (flips are rare where both compute the IR as written: a systematic
  off-by-one-level error, rounding down instead of to nearest, is not); for a pair with
  OpenVINO, at least :data:`WITHIN_OPENVINO_STEPS` within :data:`OPENVINO_STEPS` steps instead
  (and so for onnxruntime on a file whose FakeQuantize layers became QuantizeLinear ->
  DequantizeLinear: ``--target onnx``/``tensorrt``, whose int8 kernels requantize alike);
- any other output: the task rules of :mod:`ir2onnx.harness.rules` (detections, class vectors,
  attributes, embeddings, images), which also judge ``--precision f16`` comparisons, else the
  element-wise rule of :mod:`ir2onnx.harness.compare`.

Measured (2026-11, ``samples/real/nncf_resnet3``: three quantized residual blocks, seeds 0-2):
onnxruntime vs the oracle agree on 99.7-100% of the feature map's elements exactly and on
99.88-100% within one step; OpenVINO vs either agrees on 53% exactly, 86% within one step, 97%
within two, 99.58% within three and 99.93-99.97% within four; the logits differ by at most 0.07%
of their range and their argmax always agrees. ``nncf_resnet1`` (one block): 100% within one
step everywhere.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Layer
from ..ir.names import output_names
from .compare import Comparison, default_tolerance

WITHIN_ONE_STEP = 0.99
EQUAL = 0.95
OPENVINO_STEPS = 4
WITHIN_OPENVINO_STEPS = 0.99
# layers whose outputs are values of their (first) input, or several inputs' values (Concat)
ON_GRID = frozenset({"ReLU", "MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Concat",
                     "StridedSlice", "Slice", "Split", "VariadicSplit", "Gather", "Identity",
                     "DepthToSpace", "SpaceToDepth", "ShuffleChannels", "Broadcast", "Tile"})


def _const(graph: Graph, layer: Layer, port: int) -> np.ndarray | None:
    """The value of ``layer``'s input ``port`` when it is a Const, or a Convert of one."""
    src = graph.producer(layer, port)[0]
    if src.type == "Convert":
        src = graph.producer(src, 0)[0]
    if src.type != "Const" or src.const is None:
        return None
    try:
        return np.asarray(src.const.array(), dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _step(graph: Graph, fq: Layer) -> float | None:
    lo, hi = _const(graph, fq, 3), _const(graph, fq, 4)
    levels = int(fq.attrs.get("levels", 0))
    if lo is None or hi is None or levels < 2:
        return None
    step = float(np.max(np.abs(hi - lo))) / (levels - 1)
    return step if np.isfinite(step) and step > 0 else None


def _grid_step(graph: Graph, layer: Layer, seen: set) -> float | None:
    """The step of the FakeQuantize whose grid ``layer``'s output lies on, or None."""
    if layer.id in seen:
        return None
    seen.add(layer.id)
    if layer.type == "FakeQuantize":
        return _step(graph, layer)
    if layer.type not in ON_GRID or not layer.sources:
        return None
    ports = range(len(layer.sources)) if layer.type == "Concat" else [0]
    steps = [_grid_step(graph, graph.producer(layer, i)[0], seen) for i in ports]
    return None if any(s is None for s in steps) else max(steps)


def output_steps(graph: Graph) -> dict[str, float | None]:
    """Output name -> the quantization step of its grid (None: not a quantized output)."""
    names = output_names(graph)
    return {names[r.id]: _grid_step(graph, graph.producer(r, 0)[0], set()) for r in graph.results}


def has_fake_quantize(graph: Graph) -> int:
    return sum(layer.type == "FakeQuantize" for layer in graph.order)


def step_rule(c: Comparison, a: np.ndarray, b: np.ndarray, step: float, integer: bool = False) -> Comparison:
    """Judge ``c`` (the element-wise comparison of ``a`` and ``b``, a quantized float output) in
    quantization steps, by the rule above. A pair with OpenVINO (on the IR or, ``openvino:onnx``,
    on the ONNX file) takes OpenVINO's steps; so does one with ``integer`` set: a backend that ran
    QuantizeLinear -> DequantizeLinear through integer kernels (onnxruntime fuses them into
    QLinearConv / QLinearMatMul, which requantize between layers as OpenVINO's plugin does)."""
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where((fa == fb) | (np.isnan(fa) & np.isnan(fb)), 0.0, np.abs(fa - fb))
    diff = np.where(np.isnan(diff), np.inf, diff)
    openvino = integer or any(n.split(":")[0] == "openvino" for n in (c.a, c.b))
    steps = OPENVINO_STEPS if openvino else 1
    within_one = float(np.mean(diff <= step * 1.001))
    within = float(np.mean(diff <= steps * step * 1.001))
    need = WITHIN_OPENVINO_STEPS if openvino else WITHIN_ONE_STEP
    rtol, atol = default_tolerance(a.dtype)
    with np.errstate(invalid="ignore"):
        equal = float(np.mean(diff <= atol + rtol * np.maximum(np.abs(fa), np.abs(fb))))
    c.rule = "int8 step"
    c.detail = (f"{within_one:.2%} within 1 step ({step:.3g})"
                + (f", {within:.2%} within {steps}" if steps > 1 else f", {equal:.2%} equal")
                + f"; need {need:.0%} within {steps}" + ("" if openvino else f", {EQUAL:.0%} equal"))
    c.passed = within >= need and (openvino or equal >= EQUAL)
    c.mismatches = int(np.count_nonzero(diff > steps * step * 1.001))
    c.metrics = {"step": step, "within_one_step": within_one, f"within_{steps}_steps": within, "equal": equal}
    return c
