"""``ir2onnx check DIR|GLOB ...``: every IR found checked (``--jobs N`` processes at once), then
one summary table: model (its path under the directory), the backends compared, the worst
error, the rules that judged the outputs, the verdict and the seconds; one ``--report`` for all.
Exit 0 when every model passes, 1 when any disagrees or fails, 2 when none could be read.
Ctrl-C stops it within seconds and prints the table of the models done so far."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Ir2OnnxError
from ..harness.check import check
from ..harness.report import _finite, to_dict, to_markdown
from ..ir.names import input_name, parameters
from ..ir.reader import load_ir
from ..writer import atomic_file
from .batch import model_files, note_left_out, run_parallel
from .paths import os_errors


@dataclass
class Row:
    """One model's line of the table (what a worker sends back: no arrays)."""

    model: str
    verdict: str  # PASS | FAIL | ERROR (could not be checked) | STOPPED (Ctrl-C)
    seconds: float = 0.0
    compared: list[str] = field(default_factory=list)  # the backends whose outputs were compared
    worst: str = ""
    rules: str = ""
    why: str = ""  # the first failure, or the error
    report: dict | None = None
    markdown: str = ""


def check_one(xml: Path, shown: str, options: dict, report: str) -> Row:
    """Check one model (in a worker process); every failure becomes the row's ``why``."""
    start = time.perf_counter()
    try:
        with os_errors("read"):
            graph = load_ir(xml)
            names = {input_name(p) for p in parameters(graph)}
            opts = dict(options)  # --input/--shape apply to the models with that input
            opts["inputs"] = {k: v for k, v in (opts.get("inputs") or {}).items() if k in names}
            opts["shapes"] = {k: v for k, v in (opts.get("shapes") or {}).items() if k in names}
            result = check(graph, **opts)
    except Ir2OnnxError as e:
        return Row(shown, "ERROR", time.perf_counter() - start, why=" ".join(str(e).split()))
    except Exception as e:  # a bug in ir2onnx: this model's row says so, the others go on
        return Row(shown, "ERROR", time.perf_counter() - start,
                   why=f"internal error ({type(e).__name__}: {' '.join(str(e).split())})")
    comparisons = [c for o in result.outputs for c in o.comparisons]
    worst = worst_comparison(comparisons)
    failures = result.failures()
    row = Row(shown, "PASS" if result.ok else "FAIL", time.perf_counter() - start,
              [b.name for b in result.backends if b.status == "ok"],
              "" if worst is None else headline(worst),
              "+".join(sorted({c.rule or "elementwise" for c in comparisons})),
              failures[0] if failures else "")
    skipped = [f"{b.name} {b.status}" for b in result.backends if b.status in ("refused", "skipped", "unavailable")]
    if skipped and not row.why:
        row.why = "; ".join(skipped)
    if report.endswith(".json"):
        row.report = to_dict(result)
    elif report:
        row.markdown = to_markdown(result)
    return row


def run(models: list[str], options: dict, workers: int, quiet: bool, report: str | None) -> int:
    if workers < 1:
        raise Ir2OnnxError(f"--jobs must be at least 1, got {workers}")
    found = model_files(models)
    total = len(found)
    if not quiet:
        note_left_out(models)

    def done(i, row, count):
        if not quiet:
            print(f"ir2onnx: [{count}/{total}] {row.model}: {row.verdict} {row.seconds:.1f} s", file=sys.stderr,
                  flush=True)

    rows, interrupted = run_parallel(check_one, [(xml, shown, options, report or "") for xml, _, shown in found],
                                     workers, done)
    rows = [r or Row(shown, "STOPPED") for r, (_, _, shown) in zip(rows, found)]
    print(table(rows, interrupted))
    if report:
        with os_errors("write the --report file"):
            Path(report).parent.mkdir(parents=True, exist_ok=True)
            write(rows, report, interrupted)
    if interrupted:
        return 130
    if any(r.verdict == "FAIL" for r in rows):
        return 1
    return 0 if all(r.verdict == "PASS" for r in rows) else (2 if all(r.verdict == "ERROR" for r in rows) else 1)


def table(rows: list[Row], interrupted: bool = False) -> str:
    """The summary table, then a count line and the reason of each model that did not pass."""
    head = ("model", "backends compared", "worst error", "rule", "verdict", "seconds")
    body = [(r.model, ", ".join(r.compared) or "-", r.worst or "-", r.rules or "-", r.verdict,
             f"{r.seconds:.1f}" if r.verdict != "STOPPED" else "-") for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    fmt = lambda line: "  ".join(v.rjust(widths[i]) if i == 5 else v.ljust(widths[i])
                                 for i, v in enumerate(line)).rstrip()
    lines = [fmt(head)] + [fmt(line) for line in body]
    passed = sum(r.verdict == "PASS" for r in rows)
    lines.append(f"{passed} of {len(rows)} model(s) pass" + "".join(
        f", {n} {v.lower()}" for v in ("FAIL", "ERROR", "STOPPED")
        if (n := sum(r.verdict == v for r in rows))) + (" (stopped by Ctrl-C)" if interrupted else ""))
    lines += [f"  {r.model}: {r.why}" for r in rows if r.why and r.verdict != "PASS"]
    return "\n".join(lines)


def write(rows: list[Row], path: str, interrupted: bool) -> None:
    """One report for all the models: JSON (``{"ok", "interrupted", "models": [...]}``, each
    model's summary and its check report) or Markdown (the table, then each model's report)."""
    if path.endswith(".json"):
        models = [{"model": r.model, "verdict": r.verdict, "seconds": round(r.seconds, 3),
                   "backends_compared": r.compared, "worst_error": r.worst, "rules": r.rules,
                   "why": r.why, "check": r.report} for r in rows]

        text = json.dumps(_finite({"ok": all(r.verdict == "PASS" for r in rows), "interrupted": interrupted,
                                   "models": models}), indent=1)
    else:
        text = "# ir2onnx check of " + str(len(rows)) + " model(s)\n\n```\n" + table(rows, interrupted) + "\n```\n"
        text += "".join(f"\n---\n\n{r.markdown}" for r in rows if r.markdown)
    with atomic_file(path, "w", what="--report file") as f:
        f.write(text + "\n")


def headline(c) -> str:
    """A comparison's main number, short (the summary table of ``check DIR``)."""
    m = c.metrics
    if c.reason and not c.rule:
        return c.reason
    if c.rule == "detections":
        return f"{m['unmatched']} unmatched, box {m['box_error']:.2g}, score {m['score_error']:.2g}"
    if c.rule == "class":
        return f"argmax {m['argmax_agreement']:.0%}, max abs {m['max_abs']:.2g}"
    if c.rule == "embedding":
        return f"cosine {m['cosine']:.4f}"
    if c.rule == "image":
        return f"PSNR {m['psnr']:.1f} dB"
    if c.rule == "labels":
        return f"labels {m['agreement']:.1%}"
    if c.rule == "int8 step":
        return f"{m['within_one_step']:.1%} within 1 step"
    return "-" if c.max_abs is None else f"max abs {c.max_abs:.2g}"


def worst_comparison(comparisons: list):
    """The comparison to show for a model: a failing one first, else the largest max abs."""
    if not comparisons:
        return None
    failing = [c for c in comparisons if not c.passed]
    pool = failing or comparisons
    return max(pool, key=lambda c: -1.0 if c.max_abs is None else c.max_abs)
