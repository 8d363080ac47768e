"""``ir2onnx selftest``: every built-in case on every provider against the oracles.

Each case (see :mod:`.cases`; the list: :mod:`.catalog`) is written as IR, converted, run on each
onnxruntime provider and on OpenVINO, and compared with the oracle interpreter (bit for bit for
data-movement cases); the oracle itself is compared with what the spec says (the ``spec`` column).
The result is the conformance matrix, op x backend (see :mod:`.matrix`): ``pass n/n``, ``FAIL
k/n``, ``unavailable`` (a provider without its hardware: never ``pass``), ``n/a``, with counts of
``unsupported`` (the converter refuses), ``deviates`` (a known OpenVINO deviation), ``refused``
(OpenVINO cannot load the IR), ``no lowering`` / ``no oracle`` (cannot run yet); registered ops
without a case say ``no case``.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import ops  # noqa: F401  (the op modules fill the lowering table)
from ..errors import Ir2OnnxError
from ..harness.check import check, make_feeds, resolve_providers
from ..harness.compare import compare
from ..ir.reader import load_ir
from ..lowering.convert import convert_graph, DEFAULT_OPSET
from ..lowering.registry import lowering_for
from ..oracles import evaluate, missing_oracles
from ..runtime.sessions import PROVIDERS
from ..testing import openvino_available
from .cases import Case
from .catalog import all_cases
from .matrix import BAD

COLUMNS = ("spec", "ort:cpu", "ort:cuda", "openvino")


@dataclass
class CaseResult:
    case: Case
    cells: dict[str, str]  # column -> pass | fail | error | unsupported | unavailable | n/a | no ...
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    opset: int | None = None  # the ONNX opset the case converted at (chosen per model unless forced)

    @property
    def failed(self) -> bool:
        return any(v in BAD for v in self.cells.values())


def _fill(cells: dict, value: str, columns=COLUMNS) -> dict:
    """Set the given columns of this run (not the unavailable ones) to ``value``."""
    for c in columns:
        if c in cells and cells[c] != "unavailable":
            cells[c] = value
    return cells


def _check_expect(case: Case, outputs: dict, feeds: dict) -> tuple[str, list[str]]:
    """Does the oracle produce what the spec says (shape or values)?"""
    if not case.expect:
        return "n/a", []
    notes = []
    for name, want in case.expect.items():
        got = outputs.get(name)
        if got is None:
            notes.append(f"spec: no output '{name}'")
            continue
        if isinstance(want, tuple):
            if tuple(got.shape) != want:
                notes.append(f"spec: '{name}' has shape {list(got.shape)}, the spec says {list(want)}")
            continue
        want = np.asarray(want(feeds) if callable(want) else want)
        c = compare(name, "oracle", got, "spec", want.astype(got.dtype) if want.dtype != got.dtype else want,
                    bitexact=case.exact and got.dtype.kind != "f")
        if not c.passed:
            notes.append(f"spec: '{name}' differs from the spec ({c.reason or f'max abs {c.max_abs:.3g}'})")
    return ("fail" if notes else "pass"), notes


def _missing(graph) -> tuple[list[str], list[str]]:
    no_low = sorted({f"{l.type}-{l.version}" for l in graph.order if lowering_for(l.type, l.version) is None})
    return no_low, sorted({f"{l.type}-{l.version}" for l in missing_oracles(graph)})


def _run_invalid(case: Case, graph, cells: dict, notes: list, opset: int | None) -> None:
    """The spec calls this model an error: the converter and the oracle must both refuse it."""
    try:
        convert_graph(graph, *([] if opset is None else [opset]))
        verdict = "fail"
        notes.append("the converter accepted a model the spec calls invalid")
    except Ir2OnnxError as e:
        verdict = "pass"
        notes.append(f"refused: {' '.join(str(e).split())[:160]}")
    _fill(cells, verdict, ("ort:cpu", "ort:cuda"))
    try:
        evaluate(graph, make_feeds(graph, case.feeds(np.random.default_rng(0)), case.shapes)[0])
        cells["spec"] = "fail"
        notes.append("the oracle accepted a model the spec calls invalid")
    except Ir2OnnxError:
        cells["spec"] = "pass"


def run_case(case: Case, columns: list[str], providers: list[str], unavailable: dict[str, str],
             openvino: bool, folder: Path, opset: int | None = None) -> CaseResult:
    """Build, convert, run and compare one case; never raises for a failing case."""
    start = time.perf_counter()
    if case.min_opset is not None:
        opset = max(DEFAULT_OPSET if opset is None else opset, case.min_opset)
    cells = {c: "unavailable" if c in unavailable else "n/a" for c in columns}
    notes: list[str] = []
    result = CaseResult(case, cells, notes)
    try:
        graph = load_ir(case.build(folder))
    except ImportError as e:  # OpenVINO writes most cases: without it they cannot be built
        _fill(cells, "unavailable")
        notes.append(f"cannot build the case without {e.name or 'openvino'}")
        return result
    except Exception as e:  # noqa: BLE001  (a case that cannot be built is reported)
        if case.invalid and isinstance(e, Ir2OnnxError):
            _fill(cells, "pass", ("spec", "ort:cpu", "ort:cuda"))
            notes.append(f"refused by the reader: {' '.join(str(e).split())[:160]}")
        else:
            _fill(cells, "error")
            notes.append(f"cannot build the case: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
        return result
    if case.op not in {l.key for l in graph.order}:
        _fill(cells, "error")
        notes.append(f"the built IR has no {case.row} layer")
        return result
    no_low, no_oracle = _missing(graph)
    if no_low or no_oracle:
        _fill(cells, "no oracle" if no_oracle else "n/a", ("spec",))
        _fill(cells, "no lowering" if no_low else "no oracle", ("ort:cpu", "ort:cuda", "openvino"))
        notes.append("missing: " + ", ".join([f"lowering of {k}" for k in no_low] +
                                             [f"oracle of {k}" for k in no_oracle]))
        return result
    if case.invalid:
        _run_invalid(case, graph, cells, notes, opset)
        result.seconds = time.perf_counter() - start
        return result
    use_ov = openvino and case.openvino and "openvino" in cells
    try:
        feeds, _ = make_feeds(graph, case.feeds(np.random.default_rng(0)), case.shapes)
        res = check(graph, inputs=feeds, providers=providers, openvino=use_ov, bitexact=case.exact,
                    opset=opset)
    except Ir2OnnxError as e:
        _fill(cells, "unsupported", ("ort:cpu", "ort:cuda"))
        notes.append(f"conversion refused: {' '.join(str(e).split())[:200]}")
        result.seconds = time.perf_counter() - start
        return result
    result.opset = res.opset
    oracle = res.backend("oracle")
    if oracle.status != "ok":
        _fill(cells, "fail")
        notes.append(f"oracle failed: {oracle.message}")
    else:
        spec, spec_notes = _check_expect(case, oracle.outputs, feeds)
        _fill(cells, spec, ("spec",))
        notes += spec_notes
        for b in res.backends:
            if b.name not in cells or b.status == "unavailable":
                continue
            if b.status == "refused":
                cells[b.name] = "refused"
                notes.append(f"{b.name} refused: {b.message}")
                continue
            pairs = [c for o in res.outputs for c in o.comparisons if {c.a, c.b} == {b.name, "oracle"}]
            bad = [c for c in pairs if not c.passed]
            cells[b.name] = "fail" if b.status == "error" or bad or not pairs else "pass"
            if b.name == "openvino" and cells[b.name] == "fail" and case.openvino_deviates:
                cells[b.name] = "deviates"
                notes.append(f"known: {case.openvino_deviates}")
            if b.status == "error":
                notes.append(f"{b.name}: {b.message}")
            notes += [f"{b.name}: output '{c.output}' differs from the oracle "
                      f"({c.reason or f'{c.mismatches} element(s), max abs {c.max_abs:.3g}'})" for c in bad]
    result.seconds = time.perf_counter() - start
    return result


def run(providers="all", select: list[str] | None = None, openvino: bool = True,
        opset: int | None = None) -> tuple[list[str], list[CaseResult]]:
    """Run the selected cases (``select``: substrings of case names; default all).

    Returns the matrix columns (spec, each requested provider, openvino) and one result per case.
    """
    run_p, missing = resolve_providers(providers)
    unavailable = {b.name: b.message for b in missing}
    if not openvino_available():
        unavailable["openvino"] = "openvino is not installed"
    asked = [p for p in PROVIDERS if p in run_p or f"ort:{p}" in unavailable]
    columns = ["spec"] + [f"ort:{p}" for p in asked] + (["openvino"] if openvino else [])
    cases = [c for c in all_cases() if not select or any(s in c.name for s in select)]
    out = []
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="ir2onnx-selftest-") as tmp:
            out.append(run_case(case, columns, run_p, unavailable, "openvino" not in unavailable,
                                Path(tmp), opset))
    return columns, out
