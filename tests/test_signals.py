"""Signals (issue 30): SIGTERM and SIGINT during convert, run and check remove their temporary files
and exit 128 + the signal with one line; after SIGKILL the target is the old file or absent and
the next run into the folder removes the stale temporary; Ctrl-C in a batch stops within 2 s,
kills the workers and prints the table so far. Real processes, real signals."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ir2onnx.testing import IRWriter
from util import convert_model

ROOT = Path(__file__).resolve().parent.parent
TEMP = ".*.ir2onnx-tmp-*"


def _big_model(path: Path, n: int = 4 * 2**20) -> Path:
    """x + w with 16 MiB of weights: writing, checking and verifying it takes long enough to be
    interrupted while its temporaries exist."""
    w = IRWriter("big")
    x = w.parameter([1, n], "f32", "x")
    c = w.const(np.random.default_rng(0).standard_normal((1, n)).astype(np.float32))
    y = w.layer("Add", "opset1", [x, c], {"auto_broadcast": "numpy"}, [("f32", [1, n])], out_names=["y"])[0]
    w.result(y)
    return w.save(path)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return _big_model(tmp_path_factory.mktemp("big") / "big.xml")


def _start(argv, tmp: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp))
    return subprocess.Popen([sys.executable, "-m", "ir2onnx", *map(str, argv)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(p: subprocess.Popen, folder: Path, pattern: str, timeout: float = 120) -> Path:
    """The first entry of ``folder`` matching ``pattern`` while ``p`` runs."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.002)
    p.kill()
    raise AssertionError(f"no {pattern} in {folder} while it ran: {p.communicate()}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_a_signal_during_convert_removes_the_temporary_and_keeps_the_old_file(tmp_path, big, sig):
    out = tmp_path / "out"
    out.mkdir()
    (out / "big.onnx").write_bytes(b"the old file")
    p = _start(["convert", big, "-o", out / "big.onnx"], tmp_path)
    temp = _wait_for(p, out, TEMP)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err
    assert err.strip().splitlines() == [f"ir2onnx: interrupted ({'Ctrl-C' if sig == signal.SIGINT else 'SIGTERM'}); "
                                        f"temporary files removed"], err
    assert not temp.exists() and sorted(p.name for p in out.iterdir()) == ["big.onnx"]
    assert (out / "big.onnx").read_bytes() == b"the old file"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "check"])
def test_sigterm_during_run_and_check_removes_their_temporary_folder(tmp_path, big, command):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    argv = [command, big] + (["--no-openvino", "--no-oracle"] if command == "check" else [])
    p = _start(argv, tmp)
    _wait_for(p, tmp, ".ir2onnx*.ir2onnx-tmp-*/*.onnx")
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("ir2onnx: interrupted (SIGTERM)"), err
    assert "Traceback" not in err
    assert list(tmp.glob("*ir2onnx*")) == []  # (onnxruntime leaves a '.ses' file of its own)


@pytest.mark.slow
def test_after_sigkill_the_target_is_old_or_absent_and_the_next_run_sweeps(tmp_path, big):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.onnx").write_bytes(b"the old file")
    temps, stopped = [], []
    for name in ("big.onnx", "old.onnx"):  # one at a time (a convert takes a fraction of a
        r = _start(["convert", big, "-o", out / name], tmp_path)  # second), frozen while the
        temps.append(_wait_for(r, out, f".{name}.ir2onnx-tmp-*"))  # other starts: alive, its
        r.send_signal(signal.SIGSTOP)  # temporary is not swept
        stopped.append(r)
    for r in stopped:
        r.kill()
        r.communicate()
    assert all(t.exists() for t in temps)  # a killed process cannot clean up
    assert not (out / "big.onnx").exists() and (out / "old.onnx").read_bytes() == b"the old file"
    small_xml = convert_model(tmp_path / "small.xml")
    q = _start(["convert", small_xml, "-o", out / "small.onnx", "-q"], tmp_path)
    _, err = q.communicate(timeout=120)
    assert q.returncode == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["old.onnx", "small.onnx"]  # the stale temporaries are gone


def _processes_in_group(pgid: int) -> list[str]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(f"{entry.name} {fields[0]}")
    return found


def _batch(tmp_path, n: int = 50) -> tuple[Path, Path, subprocess.Popen]:
    """A batch of ``n`` copies of a small CNN, started with --jobs 2, two models done."""
    models = tmp_path / "models"
    source = ROOT / "samples" / "real" / "cnn" / "model"
    for i in range(n):
        (models / f"m{i:02d}").mkdir(parents=True)
        for suffix in (".xml", ".bin"):
            shutil.copy(source.with_suffix(suffix), models / f"m{i:02d}" / f"m{suffix}")
    out = tmp_path / "out"
    p = _start(["convert", models, "-o", out, "--jobs", "2"], tmp_path)
    started = 0
    while started < 2:  # two models done: the workers are busy with the next ones
        line = p.stderr.readline()
        assert line, p.communicate()
        started += line.startswith("ir2onnx: [")
    assert len(_processes_in_group(p.pid)) >= 3  # the parent and its two workers
    return models, out, p


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG")
def test_workers_end_when_the_batch_is_killed(tmp_path):
    """SIGKILL of the parent cannot be handled: each worker gets SIGTERM from the kernel
    (PR_SET_PDEATHSIG), removes its temporaries and ends; no orphan converts on."""
    _, out, p = _batch(tmp_path, 20)
    p.kill()
    p.communicate()
    end = time.monotonic() + 5
    while _processes_in_group(p.pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert _processes_in_group(p.pid) == []
    assert sorted(str(q.relative_to(out)) for q in out.rglob(".*")) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_in_a_50_model_batch_stops_within_2_s_without_orphans(tmp_path):
    models, out, p = _batch(tmp_path)
    sent = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    out_text, err = p.communicate(timeout=30)
    took = time.monotonic() - sent
    assert p.returncode == 130, err
    assert took < 2.0, f"{took:.2f} s"
    print(f"stopped {took:.2f} s after Ctrl-C")
    assert err.strip().splitlines()[-1].startswith("ir2onnx: interrupted (Ctrl-C)"), err
    assert "Traceback" not in err
    rows = [line for line in out_text.splitlines() if " ok " in line]
    stopped = [line for line in out_text.splitlines() if line.endswith("interrupted (Ctrl-C)")]
    assert len(rows) >= 2 and len(rows) + len(stopped) == 50, out_text  # the table: done and not
    assert out_text.splitlines()[-1].startswith(f"{len(rows)} of 50 model(s) converted"), out_text
    time.sleep(0.2)
    assert _processes_in_group(p.pid) == []
    assert sorted(str(q.relative_to(out)) for q in out.rglob(".*")) == []  # no temporary left
    assert len(rows) <= len(list(out.rglob("*.onnx"))) <= len(rows) + 2  # (finished as it stopped)


def test_a_signal_while_a_temporary_is_made_waits_until_it_is_recorded(tmp_path, monkeypatch):
    """SIGTERM between mkdtemp and its recording (a thread of numpy's BLAS pool can take it while
    the main thread runs on, so masking it would not do) is raised once the temporary is recorded:
    the way out then removes it."""
    import tempfile

    from ir2onnx import writer
    from ir2onnx.cli.main import Terminated, stop_on_signals

    made = tempfile.mkdtemp

    def mkdtemp_then_signal(*args, **kwargs):
        path = made(*args, **kwargs)
        signal.raise_signal(signal.SIGTERM)  # its handler runs before mkdtemp returns
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_signal)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(Terminated):
        with stop_on_signals():
            with writer.temporary_folder("ir2onnx-"):
                raise AssertionError("the signal was not raised on entry")
    assert list(tmp_path.iterdir()) == []  # the folder's own cleanup ran
    with pytest.raises(Terminated):
        with stop_on_signals():
            with writer._signals_held():
                path = writer._made(made(dir=tmp_path))
                signal.raise_signal(signal.SIGTERM)
                assert path in writer._OWN_TEMPS  # not raised yet: recorded first
    writer.remove_own_temps()  # what main() does on the way out
    assert list(tmp_path.iterdir()) == [] and not writer._OWN_TEMPS


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status (Linux)")
def test_a_batch_worker_ignores_ctrl_c_from_its_first_instruction():
    """A worker imports ir2onnx before its own code runs; a Ctrl-C to the group in that time must
    not print the import's KeyboardInterrupt traceback (CI saw one). The worker is spawned with
    SIGINT ignored, which the kernel shows before any of its Python runs."""
    import multiprocessing as mp

    from ir2onnx.cli import batch

    w = batch._Worker(mp.get_context("spawn"))
    try:
        status = Path(f"/proc/{w.process.pid}/status").read_text()
        ignored = int(status.split("SigIgn:")[1].split()[0], 16)
        assert ignored & (1 << (signal.SIGINT - 1)), status
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the parent's is back
    finally:
        w.conn.send(None)
        w.process.join(30)
    assert w.process.exitcode == 0
