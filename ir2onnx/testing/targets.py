"""A target's conversion against the default's on one IR (issue 33's sweeps: tests/test_targets.py,
benchmarks/target_samples.py): the non-standard nodes it holds and the outputs it computes on
onnxruntime, fed the check's inputs (the same seed: example inputs, LLM decode steps, a stateful
model's steps), compared with the default target's by the check's rules."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..api import convert
from ..harness.check import check
from ..harness.compare import compare
from ..harness.int8_rule import has_fake_quantize, output_steps, step_rule
from ..harness.rules import _class, TOLERANT
from ..ir.reader import load_ir
from ..lowering.convert import convert_graph
from ..lowering.targets import get, nonstandard_nodes
from ..runtime import sessions as runtime


@dataclass
class TargetComparison:
    """``nonstandard``: the ``domain::op`` of every node outside the standard domain; ``failures``:
    one line per output that differs from the default target's (or the error)."""

    model: str
    opset: int = 0
    default_opset: int = 0
    nonstandard: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    compared: int = 0
    as_onnx: list[str] | None = None  # an INT8 IR that differs: the failures with onnxruntime's
    # graph optimizations off (Q/DQ as float ops, no int8 kernels), the file's own meaning


def compare_targets(xml, target: str = "onnx", opset: int | None = None) -> TargetComparison:
    """Convert ``xml`` for ``target`` (at ``opset``) and for the default target and compare."""
    out = TargetComparison(str(xml))
    graph = load_ir(xml)
    conv = convert_graph(graph, opset, target=target)
    out.opset, out.nonstandard = conv.opset, nonstandard_nodes(conv.model)
    runs = {}
    for name, t, o in (("default", "onnxruntime", None), (target, target, opset)):
        result = check(graph, opset=o, target=t, openvino=False, oracle=False)
        feeds = result.inputs
        run = result.backend("ort:cpu")
        if run.status != "ok":
            out.failures.append(f"{name}: {run.message}")
            return out
        runs[name] = run.outputs
        out.default_opset = result.opset if t == "onnxruntime" else out.default_opset
    grid = output_steps(graph) if has_fake_quantize(graph) else None
    qdq = get(target).quantized != "exact"  # onnxruntime's int8 kernels: OpenVINO's steps (int8_rule)
    out.failures, out.compared = _differences(runs["default"], runs[target], target, grid, qdq)
    if out.failures and grid is not None and qdq and not any("@" in n for n in runs["default"]):
        plain = [runtime.run(runtime.session(convert(graph, o, target=t, verify=False).SerializeToString(),
                                             optimize=False), feeds)
                 for t, o in (("onnxruntime", None), (target, opset))]
        out.as_onnx = _differences(plain[0], plain[1], target, grid, False)[0]
    return out


def _int8(name: str, a, target: str, b, step: float | None, integer: bool):
    """An INT8 IR's output as the check judges it (:mod:`ir2onnx.harness.rules`): in quantization
    steps where a FakeQuantize's grid reaches it, class scores ``[N, C]`` by argmax, else
    element-wise."""
    c = compare(name, "default", a, target, b)
    a, b = np.asarray(a), np.asarray(b)
    if c.reason or c.exact or a.size == 0 or a.dtype.kind != "f":
        return c
    if step is not None:
        return step_rule(c, a, b, step, integer)
    if a.ndim == 2 and a.shape[1] >= 2 and np.isfinite(a).all() and np.isfinite(b).all():
        return _class(c, a.astype(np.float64), b.astype(np.float64), False, TOLERANT)
    return c


def _differences(default: dict, other: dict, target: str, grid, integer: bool) -> tuple[list[str], int]:
    """One line per output of ``other`` that the check's rules find apart from ``default``'s."""
    failures, compared = [], 0
    for name, a in default.items():
        b = other.get(name)
        if b is None:
            failures.append(f"output '{name}': missing in the {target} target's run")
            continue
        c = _int8(name, a, target, b, grid.get(name.split("@")[0]), integer) \
            if grid is not None else compare(name, "default", a, target, b)
        compared += 1
        if not c.passed:
            why = c.reason or getattr(c, "detail", "") or f"{c.mismatches} element(s) apart, max abs {c.max_abs:.3g}"
            failures.append(f"output '{name}': {why}")
    return failures, compared
