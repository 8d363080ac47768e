"""How ``ir2onnx check`` judges the float outputs of an INT8 IR (one with FakeQuantize layers).

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
- **class output** (no FakeQuantize feeds it directly, shape ``[N, C]`` with ``C >= 2``: logits or
  scores): the pair passes when the argmax of at least :data:`ARGMAX_AGREEMENT` of the rows
  agrees and no element differs by more than :data:`CLASS_RANGE_SHARE` of the output's range;
- any other output: the element-wise rule of :mod:`ir2onnx.harness.compare`.

Measured (2026-11, ``samples/real/nncf_resnet3``: three quantized residual blocks, seeds 0-2):
onnxruntime vs the oracle agree on 99.7-100% of the feature map's elements exactly and on
99.88-100% within one step; OpenVINO vs either agrees on 53% exactly, 86% within one step, 97%
within two, 99.58% within three and 99.93-99.97% within four; the logits differ by at most 0.07%
of their range and their argmax always agrees. ``nncf_resnet1`` (one block): 100% within one
step everywhere.
"""
from __future__ import annotations

import numpy as np

from .compare import Comparison, compare, default_tolerance
from ..ir.graph import Graph, Layer

WITHIN_ONE_STEP = 0.99
EQUAL = 0.95
OPENVINO_STEPS = 4
WITHIN_OPENVINO_STEPS = 0.99
ARGMAX_AGREEMENT = 0.99
CLASS_RANGE_SHARE = 0.01
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
    from ..ir.names import output_names

    names = output_names(graph)
    return {names[r.id]: _grid_step(graph, graph.producer(r, 0)[0], set()) for r in graph.results}


def has_fake_quantize(graph: Graph) -> int:
    return sum(layer.type == "FakeQuantize" for layer in graph.order)


def compare_int8(output: str, a_name: str, a: np.ndarray, b_name: str, b: np.ndarray,
                 step: float | None, integer: bool = False) -> Comparison:
    """One output of an INT8 IR compared by the rule above (the element-wise statistics, max abs
    and max rel, are reported as well). A pair with OpenVINO (on the IR or, ``openvino:onnx``, on
    the ONNX file) takes OpenVINO's steps; so does one with ``integer`` set: a backend that ran
    QuantizeLinear -> DequantizeLinear through integer kernels (onnxruntime fuses them into
    QLinearConv / QLinearMatMul, which requantize between layers as OpenVINO's plugin does)."""
    c = compare(output, a_name, a, b_name, b)
    a, b = np.asarray(a), np.asarray(b)
    if c.reason or c.exact or a.size == 0 or a.dtype.kind != "f":
        return c
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where((fa == fb) | (np.isnan(fa) & np.isnan(fb)), 0.0, np.abs(fa - fb))
    diff = np.where(np.isnan(diff), np.inf, diff)
    if step is not None:
        openvino = integer or any(n.split(":")[0] == "openvino" for n in (a_name, b_name))
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
        return c
    if a.ndim == 2 and a.shape[1] >= 2:
        agree = float(np.mean(np.argmax(np.nan_to_num(fa, nan=-np.inf), axis=1)
                              == np.argmax(np.nan_to_num(fb, nan=-np.inf), axis=1)))
        span = max(np.ptp(fa[np.isfinite(fa)]) if np.isfinite(fa).any() else 0.0,
                   np.ptp(fb[np.isfinite(fb)]) if np.isfinite(fb).any() else 0.0)
        share = float(diff.max() / span) if span > 0 else (0.0 if diff.max() == 0 else np.inf)
        c.rule = "int8 class"
        c.detail = (f"argmax agrees on {agree:.0%} of {a.shape[0]} row(s), max abs {share:.2%} of the "
                    f"range; need {ARGMAX_AGREEMENT:.0%} and <= {CLASS_RANGE_SHARE:.0%}")
        c.passed = agree >= ARGMAX_AGREEMENT and share <= CLASS_RANGE_SHARE
        c.mismatches = 0 if c.passed else int(np.count_nonzero(diff > CLASS_RANGE_SHARE * span))
        return c
    return c
