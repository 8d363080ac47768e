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

import contextlib
import ctypes
import glob
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path

from ..api import load_ir, write
from ..errors import Ir2OnnxError
from ..writer import hold_signal, remove_own_temps, sweep_stale_temps
from .paths import folder_irs, model_xml, os_errors, tokenizers_left_out, writable
from .summary import file_bytes, size_text

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
    return Path(arg).is_dir() and len(folder_irs(Path(arg))) > 1


def note_left_out(models: list[str]) -> None:
    """One stderr line naming the optimum-intel tokenizer IRs that the folder arguments leave out."""
    left = tokenizers_left_out(models)
    if left:
        shown = ", ".join(p.as_posix() for p in left[:3]) + (" ..." if len(left) > 3 else "")
        print(f"ir2onnx: left out {len(left)} tokenizer IR(s) of optimum-intel exports "
              f"(openvino-tokenizers' string operations, which ONNX has none of): {shown}",
              file=sys.stderr, flush=True)


def model_files(models: list[str]) -> list[tuple[Path, Path, str]]:
    """The IRs the arguments stand for, each once: (xml, its output relative to an output folder,
    the name to show: its path under a directory argument or under a glob's folder, else as
    given); an error for an argument that names none."""
    found: list[tuple[Path, Path, str]] = []
    for arg in models:
        path = Path(arg)
        if path.is_dir():
            xmls = folder_irs(path)
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


def run_batch(jobs: list[Job], options: dict, workers: int = 1,
              progress=sys.stderr) -> tuple[list[Outcome], KeyboardInterrupt | None]:
    """Convert every job, ``workers`` processes at once (1: in this process), in job order, and
    None; after Ctrl-C or SIGTERM, the jobs done so far, an ``interrupted`` row for each of the
    others, and that signal's exception (the workers stopped, their temporaries removed)."""
    results, stopped = run_parallel(convert_one, [(job, options) for job in jobs], workers,
                                    lambda i, o, n: _progress(o, n, len(jobs), progress),
                                    cleanup=lambda i: _sweep(jobs[i]))
    name = signal.Signals(stopped.signum).name if getattr(stopped, "signum", None) else "Ctrl-C"
    why = f"interrupted ({name})" if stopped else "the worker process ended (out of memory?)"
    return [o or Outcome(job.shown or str(job.xml), "failed", 0.0, 0, why) for job, o in zip(jobs, results)], stopped


def run_parallel(fn, args: list[tuple], workers: int = 1, done=None,
                 cleanup=None) -> tuple[list, KeyboardInterrupt | None]:
    """``[fn(*a) for a in args]``, ``workers`` processes at once (1: in this process), and None,
    or the exception of the Ctrl-C or SIGTERM that stopped it (the results not computed are then
    None). ``done(i, result, count)`` is called as each one ends. Workers ignore Ctrl-C (the
    terminal sends it to the whole group): the parent stops them with SIGTERM, which unwinds the
    job and removes its temporaries, and SIGKILL after :data:`STOP_GRACE` s; ``cleanup(i)`` then
    runs for each job a killed or dead worker held (sweeping its stale temporaries). A worker that
    dies leaves its result None and a new one takes the next job; workers also end when the
    parent dies (Linux: PR_SET_PDEATHSIG)."""
    results: list = [None] * len(args)
    count = 0
    if workers <= 1 or len(args) <= 1:
        try:
            for i, a in enumerate(args):
                results[i] = fn(*a)
                count += 1
                if done:
                    done(i, results[i], count)
        except KeyboardInterrupt as e:
            return results, e
        return results, None
    try:
        _run_pool(fn, args, min(workers, len(args)), results, done, cleanup)
    except KeyboardInterrupt as e:
        return results, e
    return results, None


_STOPS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}
_MASK = getattr(signal, "pthread_sigmask", lambda how, mask: set())  # (POSIX only)
STOP_GRACE = 0.5  # seconds a stopped worker has to remove its temporaries before SIGKILL


class _Worker:
    """One worker process and the pipe that carries its jobs and outcomes."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_work, args=(child,), daemon=True)
        # The worker starts with SIGINT ignored: a spawned interpreter keeps an ignored signal but
        # not the parent's mask, and Python installs its KeyboardInterrupt handler only where
        # SIGINT was not ignored, so a Ctrl-C while the worker imports prints no traceback. The
        # parent blocks SIGINT meanwhile: a blocked signal is kept pending, not dropped, and
        # reaches the parent's own handler when it is restored.
        old = _MASK(getattr(signal, "SIG_BLOCK", 0), _STOPS)
        main = threading.current_thread() is threading.main_thread()  # (signal.signal's rule)
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            self.process.start()
        finally:
            if main:
                signal.signal(signal.SIGINT, handler)
            _MASK(getattr(signal, "SIG_SETMASK", 2), old)
        child.close()
        self.job: int | None = None


def _work(conn) -> None:
    """A worker's loop: jobs in, outcomes out. Ctrl-C is the parent's to handle (the terminal sends
    it to the whole group); SIGTERM from the parent unwinds the conversion, removing its
    temporaries; the worker also gets SIGTERM when the parent dies."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if hasattr(signal, "SIGHUP"):
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _terminate)
        _die_with_parent()
        _MASK(getattr(signal, "SIG_UNBLOCK", 1), _STOPS)
    except BaseException:  # a stop signal before the worker had its handlers: the parent
        os._exit(130)      # handles it
    try:
        while True:
            try:
                item = conn.recv()
            except EOFError:
                return
            if item is None:
                return
            fn, a = item
            conn.send(fn(*a))
    except BaseException:  # SIGTERM (or a broken pipe to a parent that is gone): exit quietly
        remove_own_temps()
        os._exit(143)


class _Stop(BaseException):
    pass


def _terminate(signum, frame) -> None:
    if hold_signal(signum):
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stop


def _die_with_parent() -> None:
    """Linux: this process gets SIGTERM when its parent dies, so that killing the parent with
    SIGKILL leaves no orphan converting on."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _run_pool(fn, args: list[tuple], n: int, results: list, done, cleanup) -> None:
    ctx = mp.get_context("spawn")  # no fork of a process that may run onnxruntime's threads
    pending = list(range(len(args)))[::-1]
    pool: list[_Worker] = []
    count = 0
    try:
        def feed(worker: _Worker) -> None:
            worker.job = pending.pop()
            worker.conn.send((fn, args[worker.job]))

        for _ in range(n):
            pool.append(_Worker(ctx))
            feed(pool[-1])
        while any(w.job is not None for w in pool):
            busy = [w for w in pool if w.job is not None]
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for w in busy:
                outcome, i = None, w.job
                if w.conn.poll():
                    with contextlib.suppress(EOFError, OSError):
                        outcome = w.conn.recv()
                if outcome is None and w.process.is_alive():
                    continue
                if outcome is None:  # the worker died (out of memory, a crash): a new one goes on
                    w.process.join()
                    if cleanup:
                        cleanup(i)
                    w.conn.close()
                    pool[pool.index(w)] = w = _Worker(ctx)
                else:
                    results[i] = outcome
                count += 1
                if done and outcome is not None:
                    done(i, outcome, count)
                w.job = None
                if pending:
                    feed(w)
        for w in pool:
            with contextlib.suppress(OSError):
                w.conn.send(None)
        for w in pool:  # they end by themselves; _stop then finds them gone
            w.process.join(5)
    finally:
        _stop(pool, [w.job for w in pool if w.job is not None], cleanup)


def _stop(pool: list, running: list[int], cleanup) -> None:
    """End every worker: SIGTERM (it removes its temporaries), SIGKILL after STOP_GRACE seconds;
    then the temporaries of the killed ones are swept from their output folders."""
    for w in pool:
        if w.process.is_alive():
            with contextlib.suppress(OSError):
                w.process.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for w in pool:
        w.process.join(max(0.0, deadline - time.monotonic()))
        if w.process.is_alive():
            w.process.kill()
            w.process.join()
        w.conn.close()
    for i in running:
        if cleanup:
            cleanup(i)


def _sweep(job: Job) -> None:
    sweep_stale_temps(job.output.parent if str(job.output.parent) else ".")


def _progress(outcome: Outcome, done: int, total: int, stream) -> None:
    if stream is not None:
        print(f"ir2onnx: [{done}/{total}] {outcome.model}: {outcome.status}", file=stream, flush=True)


def table(outcomes: list[Outcome]) -> str:
    """The summary table: model, status, seconds, size, reason; a total line last."""
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
