"""The interop harness: :func:`check` and the ``ir2onnx check`` command (``ir2onnx selftest``
runs its cases through :func:`check`, see :mod:`ir2onnx.selftest`).

:func:`check` converts an IR model, feeds the same inputs to onnxruntime (each requested
provider), to the NumPy oracle interpreter and to OpenVINO (CPU, f32 inference precision, when
``openvino`` is importable), and compares every output of every pair of backends by output name
(tolerances: :mod:`ir2onnx.harness.compare`). Backends: ``ort:cpu``, ``ort:cuda``, ``oracle``, ``openvino``.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import onnx

from ..api import read_model
from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..ir.names import input_name, output_names, parameters
from ..llm.decode import step_feeds
from ..llm.interface import is_llm
from ..lowering.convert import computed_graph
from ..runtime import example_inputs
from ..runtime.input_values import nonfinite
from ..runtime.stateful import STEPS, initial_state, oracle_steps, step_output_names, variables
from ..writer import temporary_folder
from . import round_trip
from .backends import (BackendRun, convert_to, make_feeds, resolve_providers, run_openvino, run_openvino_isolated,
                       run_oracle, run_ort, timed)
from .backends import _graph_types
from .compare import DEFAULT_TOLERANCES, Comparison, compare
from .int8_rule import has_fake_quantize, output_steps
from .layers import LayerDrift, can_compare_layers, layer_drift
from .oracle_budget import DEFAULT_BUDGET, over_budget
from .rules import SCORE_THRESHOLD, Task, judge, tasks

REFERENCE = "oracle"
INT8_NOTE = ("the IR has {n} FakeQuantize layer(s): a quantization level that flips on a near-tie "
             "moves the levels it feeds, and OpenVINO's CPU plugin runs INT8 IRs through its "
             "low-precision transformations (it skips a FakeQuantize before a residual Add), so "
             "float outputs are judged at task level: quantized outputs in quantization steps, "
             "detections box to box, class vectors by argmax, embeddings by cosine similarity, "
             "images by PSNR, others element-wise; --rtol/--atol judge every output element-wise "
             "instead (docs/check.md)")


@dataclass
class OutputCheck:
    """One output: its shape and dtype (from the first backend that made it) and every pair."""

    name: str
    shape: tuple | None
    dtype: str
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``pass`` (compared, every pair agrees), ``fail``, or ``not compared`` (fewer than two
        backends made it: nothing says it is right)."""
        if not self.comparisons:
            return "not compared"
        return "pass" if all(c.passed for c in self.comparisons) else "fail"

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass
class CheckResult:
    """What :func:`check` found. ``ok`` is True when every pair of backends agreed."""

    model: str
    opset: int
    inputs: dict[str, np.ndarray] = field(repr=False)
    input_origin: dict[str, str]
    backends: list[BackendRun]
    outputs: list[OutputCheck]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # found outside the comparisons (NaN outputs)
    layers: LayerDrift | None = None  # check(layers=True): every layer of ort:cpu vs openvino

    @property
    def compared(self) -> int:
        return sum(len(o.comparisons) for o in self.outputs)

    @property
    def ok(self) -> bool:
        return self.compared > 0 and not self.failures()

    def backend(self, name: str) -> BackendRun | None:
        return next((b for b in self.backends if b.name == name), None)

    def failures(self) -> list[str]:
        """One line per problem: a backend that failed, or an output a pair disagrees on."""
        out = [f"backend {b.name} failed: {b.message}" for b in self.backends if b.status == "error"]
        out += self.problems
        for o in self.outputs:
            for c in o.comparisons:
                if not c.passed:
                    tol = "differ" if c.exact else f"outside rtol={c.rtol:g} atol={c.atol:g}"
                    why = c.reason or (f"{c.rule} rule: {c.detail}" if c.rule else
                                       f"{c.mismatches} element(s) {tol}, max abs {c.max_abs:.3g}")
                    out.append(f"output '{o.name}': {c.a} and {c.b} disagree ({why})")
        if not out and self.compared == 0:
            out.append("nothing was compared: fewer than two backends produced outputs")
        return out


# -- the check ------------------------------------------------------------------------------
def check(model: str | os.PathLike | Graph, weights: str | os.PathLike | None = None, *,
          inputs: dict[str, np.ndarray] | None = None, shapes: dict[str, tuple] | None = None,
          providers="cpu", rtol: float | None = None, atol: float | None = None, seed: int = 0,
          opset: int | None = None, openvino: bool = True, oracle: bool = True,
          bitexact: bool = False, isolate_openvino: bool = False, steps: int | None = None,
          precision: str = "f32", oracle_budget: float | None = DEFAULT_BUDGET, progress=None,
          layers: bool = False, score_threshold: float = SCORE_THRESHOLD, target: str = "onnxruntime",
          round_trip: bool = False) -> CheckResult:
    """Convert ``model`` and compare onnxruntime, the oracle interpreter and OpenVINO on it.

    Raises :class:`~ir2onnx.errors.Ir2OnnxError` for bad input (unreadable or unsupported model,
    wrong feeds, unavailable provider asked for by name, every backend failing). Disagreements
    and single backend failures are in the result (``result.ok``, ``result.failures()``).
    ``rtol``/``atol`` replace the per-type float defaults; integers and booleans stay exact;
    ``bitexact`` demands identical bytes of every output (data-movement models).
    ``isolate_openvino`` runs OpenVINO in a child process, so that a crash inside it is reported
    as that backend's error (the CLI does this; tests and selftest run it in-process, faster).
    A stateful model (ReadValue/Assign) runs ``steps`` steps (default 4) on the same inputs, each
    backend carrying its state (:mod:`ir2onnx.runtime.stateful`); step k's outputs are compared as
    ``<output>@k`` and the variables as ``<variable_id>.new@k``.
    ``precision`` (``"f32"``, ``"f16"``, ``"ir"``) is the conversion's compute precision
    (:mod:`ir2onnx.lowering.precision`): the oracles run on the same precision-transformed graph,
    OpenVINO on the IR at f32 inference precision; ``"f16"`` compares floats at the f16 tolerance.
    ``oracle_budget``: the oracle is skipped (status ``skipped``, with the reason) when
    :func:`ir2onnx.harness.oracle_budget.estimate` of its work exceeds it; None: no limit.
    ``progress``: called with one line as each step starts or ends (the CLI prints them to stderr).
    Each output is judged by the rule :mod:`ir2onnx.harness.rules` finds for it: detections box to
    box (rows above ``score_threshold``) in every comparison; class vectors, attributes,
    embeddings, images and quantized outputs at task level in an INT8 IR or at ``precision="f16"``;
    everything else, and everything when ``rtol``, ``atol`` or ``bitexact`` is given, element-wise.
    ``target``: the conversion's deployment target (:mod:`ir2onnx.lowering.targets`; a file whose
    FakeQuantize layers became QuantizeLinear -> DequantizeLinear is judged against the oracle by
    OpenVINO's INT8 steps: onnxruntime runs it through its int8 kernels).
    ``round_trip``: OpenVINO's ONNX frontend also reads the converted file and runs it
    (``openvino:onnx``, :mod:`ir2onnx.harness.round_trip`), compared with every other backend,
    OpenVINO on the IR among them; a file it cannot read is reported as ``refused``.
    An LLM IR (``input_ids`` and a KV cache, :func:`ir2onnx.llm.interface.is_llm`) is fed decode steps
    instead (:mod:`ir2onnx.llm.decode`): the prompt, then one token a step, the mask and positions
    growing, ``beam_idx`` arange(batch). Inputs neither given nor shaped come from the model's
    example inputs when it has them (``<stem>.inputs.npz`` beside the .xml:
    :mod:`ir2onnx.runtime.example_inputs`).
    ``layers``: also compare every layer's output of the converted model (onnxruntime, CPU) with
    OpenVINO's on the same inputs (:func:`ir2onnx.harness.layers.layer_drift`, in ``result.layers``:
    the first layer beyond tolerance and the growth after it; it does not change ``result.ok``).
    """
    for what, tol in (("rtol", rtol), ("atol", atol)):
        if tol is not None and not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
            raise Ir2OnnxError(f"{what} must be a finite number >= 0, got {tol!r}")
    graph = computed_graph(read_model(model, weights), precision)  # precision decided here, read from the graph after
    task_rules = rtol is None and atol is None and not bitexact
    if precision == "f16" and rtol is None and atol is None:
        rtol, atol = DEFAULT_TOLERANCES["float16"]
    run_providers, unavailable = resolve_providers(providers)
    inputs, taken, file = example_inputs.fill(graph.xml_path, [input_name(p) for p in parameters(graph)],
                                              inputs, shapes)
    feeds, origin = make_feeds(graph, inputs, shapes, seed)
    origin.update({name: f"example inputs ({file})" for name in taken})
    stateful = bool(variables(graph))
    if layers:
        can_compare_layers(graph)  # before the backends run
    steps = (steps or STEPS) if stateful else 0
    step1 = feeds
    if is_llm(graph):  # decode steps: tokens, mask, positions and beam_idx as a generator feeds them

        feeds = step_feeds(graph, feeds, inputs or {}, shapes or {}, seed, steps)
        step1 = feeds[0]
        origin = {n: origin[n] if (inputs and n in inputs) else f"LLM decode step 1 (seed {seed})"
                  for n in step1}
        feeds = feeds if steps else step1
    backends: list[BackendRun] = []
    say = progress or (lambda line: None)

    def step(name: str, fn) -> BackendRun:
        run = timed(name, fn)
        say(f"check: {name} {run.status} {run.seconds:.1f} s" + (f" ({run.message[:200]})" if run.message else ""))
        return run

    with temporary_folder("ir2onnx-check-") as tmp:
        start = time.perf_counter()
        onnx_path, problem, opset = convert_to(graph, opset, tmp, target)
        qdq = not problem and _has_qdq(onnx_path)
        say(f"check: converted to ONNX opset {opset} {time.perf_counter() - start:.1f} s"
            + (f" (conversion failed: {problem})" if problem else ""))
        state = initial_state(graph, feeds) if stateful and not problem else None
        for p in run_providers:
            backends.append(step(f"ort:{p}", lambda p=p: run_ort(onnx_path, p, feeds, problem, state, steps)))
        if round_trip:
            backends.append(_round_trip(step, graph, onnx_path, problem, feeds, state, steps, isolate_openvino))
    backends += unavailable
    if oracle:
        cost, skip = over_budget(graph, step1, oracle_budget)  # (an LLM: the prompt step, the largest)
        if skip:
            backends.append(BackendRun(REFERENCE, "skipped", skip))
            say(f"check: {REFERENCE} skipped: {skip}")
        else:
            say(f"check: {REFERENCE} running (~{cost:.2g} multiply-adds and elements)")
            backends.append(step(REFERENCE, lambda: oracle_steps(graph, feeds, steps) if steps
                                 else run_oracle(graph, feeds)))
    if openvino:
        try:
            import openvino as _ov  # noqa: F401
        except ImportError:
            backends.append(BackendRun("openvino", "unavailable", "openvino is not installed"))
        else:
            run = run_openvino_isolated if isolate_openvino else run_openvino
            backends.append(step("openvino", lambda: run(graph, feeds, steps)))
    ran = [b for b in backends if b.status in ("ok", "error")]
    if ran and all(b.status == "error" for b in ran):
        raise Ir2OnnxError("every backend failed: " + "; ".join(f"{b.name}: {b.message}" for b in ran))
    done = [b for b in backends if b.status == "ok"]
    checks = []
    names = step_output_names(graph, steps) if steps else list(output_names(graph).values())
    fake_quantize = has_fake_quantize(graph)
    tolerant = task_rules and (bool(fake_quantize) or precision == "f16")
    judged: dict[str, Task] = {}
    if task_rules and done:
        sample = {n: v for b in reversed(done) for n, v in b.outputs.items()}  # each output's shape, once
        judged = tasks(graph, output_names(graph), sample, tolerant,
                       output_steps(graph) if fake_quantize else None)
    for name in names:
        first = next((b.outputs[name] for b in done if name in b.outputs), None)
        oc = OutputCheck(name, None if first is None else tuple(first.shape),
                         "" if first is None else str(first.dtype))
        for i, a in enumerate(done):
            for b in done[i + 1:]:
                if name not in a.outputs or name not in b.outputs:
                    lacking = a.name if name not in a.outputs else b.name
                    oc.comparisons.append(Comparison(name, a.name, b.name, False,
                                                     reason=f"{lacking} has no output '{name}'"))
                    continue
                task = judged.get(name)
                if task is not None:
                    oc.comparisons.append(judge(name, task, a.name, a.outputs, b.name, b.outputs,
                                                tolerant=tolerant, score_threshold=score_threshold,
                                                integer=qdq and "ort:" in a.name + b.name))
                else:
                    oc.comparisons.append(compare(name, a.name, a.outputs[name], b.name,
                                                  b.outputs[name], rtol, atol, bitexact))
        checks.append(oc)
    notes = [INT8_NOTE.format(n=fake_quantize)] if fake_quantize else []
    problems = _nonfinite_problems(done, origin, notes)
    drift = None
    if layers:
        start = time.perf_counter()
        drift = layer_drift(graph, step1, opset=opset, rtol=rtol, atol=atol, isolate=isolate_openvino)
        say(f"check: layers {len(drift.layers)} compared {time.perf_counter() - start:.1f} s")
    return CheckResult(str(graph.xml_path or graph.name), opset, step1, origin, backends, checks, notes,
                       problems, drift)


def _has_qdq(path) -> bool:
    """Whether the converted file holds QuantizeLinear (FakeQuantize as QDQ: the onnx and
    tensorrt targets), which onnxruntime runs through its int8 kernels."""
    return any(n.op_type == "QuantizeLinear" for n in onnx.load(str(path), load_external_data=False).graph.node)


def _round_trip(step, graph, onnx_path, problem, feeds, state, steps, isolate: bool) -> BackendRun:
    """The ``openvino:onnx`` backend: OpenVINO's ONNX frontend on the converted file."""
    try:
        import openvino as _ov  # noqa: F401
    except ImportError:
        return BackendRun(round_trip.NAME, "unavailable", "openvino is not installed")
    run = round_trip.run_isolated if isolate else round_trip.run_openvino_onnx

    def go():
        if problem:
            raise Ir2OnnxError(problem)
        return _graph_types(graph, run(onnx_path, feeds, state, steps))

    return step(round_trip.NAME, go)


def _nonfinite_problems(done: list[BackendRun], origin: dict[str, str], notes: list[str]) -> list[str]:
    """NaN or Inf in an output: a problem when some input was generated (the check then proved
    nothing: the inputs do not fit the model, give real ones), a note when all were given or
    came from the model's example inputs."""
    found: dict[str, list[str]] = {}
    for b in done:
        for name, what in nonfinite(b.outputs).items():
            found.setdefault(f"output '{name}' holds {what} elements", []).append(b.name)
    lines = [f"{text} ({', '.join(names)})" for text, names in found.items()]
    if all(o == "given" or o.startswith("example inputs") for o in origin.values()):
        notes += lines
        return []
    return [f"{line}: the generated inputs may not fit the model; give real ones with --input"
            for line in lines]
