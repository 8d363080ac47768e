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
    shown: str = ""  # the name in the table: the path under a directory argument, else as given


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


def model_files(models: list[str]) -> list[tuple[Path, Path, str]]:
    """The IRs the arguments stand for, each once: (xml, its output relative to an output folder,
    the name to show: its path under a directory argument or under a glob's folder, else as
    given); an error for an argument that names none."""
    found: list[tuple[Path, Path, str]] = []
    for arg in models:
        path = Path(arg)
        if path.is_dir():
            xmls = ir_files(path)
            if not xmls:
                raise Ir2OnnxError(f"'{arg}' is a directory with no IR .xml file in it")
            found += [(x, x.relative_to(path).with_suffix(".onnx"), x.relative_to(path).as_posix()) for x in xmls]
        elif _GLOB_CHARS & set(arg) and not path.exists():
            matches = sorted(Path(m) for m in glob.glob(arg, recursive=True))
            xmls = [m for m in matches if m.is_file() and m.suffix.lower() == ".xml"]
            if not xmls:
                raise Ir2OnnxError(f"'{arg}' matches no IR .xml file")
            base = Path(*_fixed_prefix(Path(arg).parts) or ["."])
            found += [(x, Path(x.stem + ".onnx"), _under(x, base)) for x in xmls]
        else:
            xml = model_xml(arg)
            if not xml.is_file():
                raise Ir2OnnxError(f"model file '{arg}' not found")
            found.append((xml, Path(xml.stem + ".onnx"), xml.as_posix()))
    once, seen = [], set()
    for item in found:
        if item[0].resolve() not in seen:  # the same model named twice (a folder and a glob): once
            seen.add(item[0].resolve())
            once.append(item)
    return once


def _fixed_prefix(parts: tuple) -> list:
    """The leading parts of a glob without wildcards (the folder its matches are shown under)."""
    fixed = []
    for part in parts[:-1]:
        if _GLOB_CHARS & set(part):
            break
        fixed.append(part)
    return fixed


def _under(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def jobs_for(models: list[str], outdir: str | None) -> list[Job]:
    """The (xml, output) pairs the arguments stand for; errors for nothing found or a clash."""
    if outdir is not None and Path(outdir).exists() and not Path(outdir).is_dir():
        raise Ir2OnnxError(f"-o '{outdir}' is a file: several models need an output directory")
    found = model_files(models)
    pairs = [(xml, rel) for xml, rel, _ in found]
    jobs, seen = [], {}
    shown = {xml: name for xml, _, name in found}
    for xml, rel in pairs:
        out = Path(outdir) / rel if outdir is not None else xml.with_suffix(".onnx")
        key = os.path.normpath(os.path.abspath(out))
        if key in seen:
            raise Ir2OnnxError(f"'{seen[key]}' and '{xml}' would both be written to '{out}': "
                               f"convert them into different -o directories")
        seen[key] = xml.resolve()
        jobs.append(Job(xml, writable(out), shown[xml]))
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
        return Outcome(job.shown or str(job.xml), "ok", time.perf_counter() - start, file_bytes(job.output))
    except Ir2OnnxError as e:
        reason = " ".join(str(e).split())
    except Exception as e:  # a bug in ir2onnx: this model's row says so, the others go on
        reason = f"internal error ({type(e).__name__}: {' '.join(str(e).split())})"
    return Outcome(job.shown or str(job.xml), "failed", time.perf_counter() - start, 0, reason)


def run_batch(jobs: list[Job], options: dict, workers: int = 1, progress=sys.stderr) -> list[Outcome]:
    """Convert every job, ``workers`` processes at once (1: in this process), in job order; after
    Ctrl-C, the jobs done so far and an ``interrupted`` row for each of the others."""
    results, interrupted = run_parallel(convert_one, [(job, options) for job in jobs], workers,
                                        lambda i, o, n: _progress(o, n, len(jobs), progress))
    why = "interrupted (Ctrl-C)" if interrupted else "the worker process ended (out of memory?)"
    return [o or Outcome(job.shown or str(job.xml), "failed", 0.0, 0, why) for job, o in zip(jobs, results)]


def run_parallel(fn, args: list[tuple], workers: int = 1, done=None) -> tuple[list, bool]:
    """``[fn(*a) for a in args]``, ``workers`` processes at once (1: in this process), and
    whether Ctrl-C stopped it: then the results not computed are None. ``done(i, result, count)``
    is called as each one ends. Ctrl-C reaches every process of the terminal's group: each worker
    leaves the job it is in (its temporary files removed as the job unwinds) and ends; a worker
    still running two seconds later is sent Ctrl-C itself, ten seconds later ended."""
    results: list = [None] * len(args)
    count = 0
    if workers <= 1 or len(args) <= 1:
        try:
            for i, a in enumerate(args):
                results[i] = fn(*a)
                count += 1
                if done:
                    done(i, results[i], count)
        except KeyboardInterrupt:
            return results, True
        return results, False
    import multiprocessing as mp
    import queue as queue_mod

    ctx = mp.get_context("spawn")  # no fork of a process that runs onnxruntime's threads
    todo, out = ctx.Queue(), ctx.Queue()
    for i, a in enumerate(args):
        todo.put((i, a))
    procs = [ctx.Process(target=_worker, args=(fn, todo, out), daemon=True)
             for _ in range(min(workers, len(args)))]
    for _ in procs:
        todo.put(None)
    try:
        for p in procs:
            p.start()
        while count < len(args):
            try:
                i, result = out.get(timeout=0.5)
            except queue_mod.Empty:
                if not any(p.is_alive() for p in procs) and out.empty():
                    break  # every worker died (killed: out of memory); the rest stay None
                continue
            results[i] = result
            count += 1
            if done:
                done(i, result, count)
        return results, False
    except KeyboardInterrupt:
        _stop(procs)
        return results, True
    finally:
        for p in procs:
            p.join(timeout=0.1)
            if p.is_alive():
                p.terminate()


def _worker(fn, todo, out) -> None:
    """A worker process: jobs from ``todo`` until None; Ctrl-C ends it quietly."""
    try:
        while True:
            item = todo.get()
            if item is None:
                return
            i, a = item
            out.put((i, fn(*a)))
    except KeyboardInterrupt:
        return


def _stop(procs) -> None:
    import os
    import signal

    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(p.is_alive() for p in procs):
        time.sleep(0.05)
    for p in procs:
        if p.is_alive():  # Ctrl-C reached this process only (kill -INT): pass it on
            os.kill(p.pid, signal.SIGINT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(p.is_alive() for p in procs):
        time.sleep(0.05)
    for p in procs:
        if p.is_alive():
            p.terminate()


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
