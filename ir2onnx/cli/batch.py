"""``ir2onnx convert DIR_OR_GLOB... -o OUTDIR``: many IRs at once, in parallel with ``--jobs N``
(processes), ending with a table: model, status, seconds, size, reason.

Which models: a directory stands for every IR .xml under it (recursively), written to
``OUTDIR/<path under the directory>.onnx``; a glob (``'models/*.xml'``) or a file for itself,
written to ``OUTDIR/<stem>.onnx``. Without ``-o`` each .onnx goes beside its .xml. Two models
that would be written to the same file are refused before anything is converted. One model's
failure (unsupported layer, bad file) is its row in the table; the others still convert. The
exit code is 0 when every model converted, 2 when any failed.
"""
from __future__ import annotations

import glob
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import Ir2OnnxError
from .paths import ir_files, model_xml, writable

_GLOB_CHARS = set("*?[")


@dataclass
class Job:
    xml: Path
    output: Path


@dataclass
class Outcome:
    model: str
    status: str  # ok | failed
    seconds: float
    size: int = 0
    reason: str = ""


def is_batch(models: list[str]) -> bool:
    """True when the arguments name more than one IR (several, a glob, a folder of several)."""
    if len(models) != 1:
        return True
    arg = models[0]
    if _GLOB_CHARS & set(arg) and not Path(arg).exists():
        return True
    return Path(arg).is_dir() and len(ir_files(Path(arg))) > 1


def jobs_for(models: list[str], outdir: str | None) -> list[Job]:
    """The (xml, output) pairs the arguments stand for; errors for nothing found or a clash."""
    if outdir is not None and Path(outdir).exists() and not Path(outdir).is_dir():
        raise Ir2OnnxError(f"-o '{outdir}' is a file: several models need an output directory")
    pairs: list[tuple[Path, Path]] = []  # (xml, output relative to OUTDIR)
    for arg in models:
        path = Path(arg)
        if path.is_dir():
            xmls = ir_files(path)
            if not xmls:
                raise Ir2OnnxError(f"'{arg}' is a directory with no IR .xml file in it")
            pairs += [(x, x.relative_to(path).with_suffix(".onnx")) for x in xmls]
        elif _GLOB_CHARS & set(arg) and not path.exists():
            matches = sorted(Path(m) for m in glob.glob(arg, recursive=True))
            xmls = [m for m in matches if m.is_file() and m.suffix.lower() == ".xml"]
            if not xmls:
                raise Ir2OnnxError(f"'{arg}' matches no IR .xml file")
            pairs += [(x, Path(x.stem + ".onnx")) for x in xmls]
        else:
            xml = model_xml(arg)
            if not xml.is_file():
                raise Ir2OnnxError(f"model file '{arg}' not found")
            pairs.append((xml, Path(xml.stem + ".onnx")))
    jobs, seen, done = [], {}, set()
    for xml, rel in pairs:
        if xml.resolve() in done:
            continue  # the same model named twice (a folder and a glob): converted once
        done.add(xml.resolve())
        out = Path(outdir) / rel if outdir is not None else xml.with_suffix(".onnx")
        key = os.path.normpath(os.path.abspath(out))
        if key in seen:
            raise Ir2OnnxError(f"'{seen[key]}' and '{xml}' would both be written to '{out}': "
                               f"convert them into different -o directories")
        seen[key] = xml.resolve()
        jobs.append(Job(xml, writable(out)))
    return jobs


def convert_one(job: Job, options: dict) -> Outcome:
    """Convert one model; every failure becomes the outcome's reason (run in a worker process)."""
    from ..api import load_ir, write
    from .summary import file_bytes
    from .paths import os_errors

    start = time.perf_counter()
    try:
        with os_errors("read"):
            graph = load_ir(job.xml)
        with os_errors(f"write '{job.output}'", name_file=False):
            write(graph, job.output, **options)
        return Outcome(str(job.xml), "ok", time.perf_counter() - start, file_bytes(job.output))
    except Ir2OnnxError as e:
        reason = " ".join(str(e).split())
    except Exception as e:  # a bug in ir2onnx: this model's row says so, the others go on
        reason = f"internal error ({type(e).__name__}: {' '.join(str(e).split())})"
    return Outcome(str(job.xml), "failed", time.perf_counter() - start, 0, reason)


def run_batch(jobs: list[Job], options: dict, workers: int = 1, progress=sys.stderr) -> list[Outcome]:
    """Convert every job, ``workers`` processes at once (1: in this process), in job order."""
    if workers <= 1 or len(jobs) <= 1:
        outcomes = []
        for job in jobs:
            outcomes.append(convert_one(job, options))
            _progress(outcomes[-1], len(outcomes), len(jobs), progress)
        return outcomes
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: dict[int, Outcome] = {}
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        futures = {pool.submit(convert_one, job, options): i for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                results[i] = future.result()
            except Exception as e:  # the worker process died (out of memory, a crash)
                results[i] = Outcome(str(jobs[i].xml), "failed", 0.0, 0,
                                     f"the worker process failed ({type(e).__name__}: {e})")
            _progress(results[i], len(results), len(jobs), progress)
    return [results[i] for i in range(len(jobs))]


def _progress(outcome: Outcome, done: int, total: int, stream) -> None:
    if stream is not None:
        print(f"ir2onnx: [{done}/{total}] {outcome.model}: {outcome.status}", file=stream, flush=True)


def table(outcomes: list[Outcome]) -> str:
    """The summary table: model, status, seconds, size, reason; a total line last."""
    from .summary import size_text

    rows = [("model", "status", "seconds", "size", "reason")]
    for o in outcomes:
        rows.append((o.model, o.status, f"{o.seconds:.2f}", size_text(o.size) if o.status == "ok" else "-",
                     o.reason))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) if i != 2 else r[i].rjust(widths[i]) for i in range(4))
             + ("  " + r[4] if r[4] else "") for r in rows]
    ok = sum(o.status == "ok" for o in outcomes)
    lines.append(f"{ok} of {len(outcomes)} model(s) converted" +
                 (f", {len(outcomes) - ok} failed" if ok < len(outcomes) else ""))
    return "\n".join(line.rstrip() for line in lines)
