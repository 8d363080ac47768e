"""No output destroys a file (issue 30): an output is never the weights or the .xml being read
(compared by identity: another name, a hard link, a symlink, the external-data file), never a
FIFO, a device or a directory; legal long names work; ``run --save``, ``check --report`` (one
model or a folder) and ``selftest --report`` are written atomically like ``convert``'s output,
and a write that fails half-way leaves nothing."""
from __future__ import annotations

import os
import re
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from ir2onnx.cli.main import main, save_npz
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.writer import atomic_file, sweep_stale_temps, temp_prefix
from util import convert_model

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def xml(tmp_path):
    return convert_model(tmp_path / "m.xml")


def _refused(capsys, argv, pattern):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ir2onnx: error: "), err
    assert re.search(pattern, err), err


def _digest(path: Path) -> bytes:
    return path.read_bytes()


# -- the weights and the .xml read are never replaced -------------------------------------------
@pytest.mark.parametrize("how", ["same name", "hard link", "symlink", "another folder's name"])
def test_output_onto_the_weights_given_with_w_is_refused(capsys, tmp_path, xml, how):
    weights = tmp_path / "w.bin"
    shutil.copy(xml.with_suffix(".bin"), weights)
    before = _digest(weights)
    target = {"same name": weights, "hard link": tmp_path / "hard.onnx",
              "symlink": tmp_path / "link.onnx", "another folder's name": tmp_path / "." / "w.bin"}[how]
    if how == "hard link":
        os.link(weights, target)
    elif how == "symlink":
        os.symlink(weights, target)
    _refused(capsys, ["convert", xml, "-w", weights, "-o", target], r"is the input '.*w.bin'")
    assert _digest(weights) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_the_external_data_file_may_not_be_the_weights(capsys, tmp_path, xml):
    weights = tmp_path / "x.onnx.data"
    shutil.copy(xml.with_suffix(".bin"), weights)
    before = _digest(weights)
    _refused(capsys, ["convert", xml, "-w", weights, "-o", tmp_path / "x.onnx", "--external-data"],
             r"data file .*is the input")
    assert _digest(weights) == before and not (tmp_path / "x.onnx").exists()


def test_the_library_refuses_too(tmp_path, xml):
    """ir2onnx.convert_file compares the output with the files the graph was read from."""
    from ir2onnx import convert_file

    before = _digest(xml.with_suffix(".bin"))
    with pytest.raises(Ir2OnnxError, match="is the input"):
        convert_file(xml, xml.with_suffix(".bin"))
    assert _digest(xml.with_suffix(".bin")) == before


# -- never a FIFO, a device or a directory ------------------------------------------------------
def test_output_onto_a_fifo_is_refused_and_the_fifo_stays(capsys, tmp_path, xml):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    _refused(capsys, ["convert", xml, "-o", fifo], "is a FIFO")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_onto_a_device_is_refused(capsys, tmp_path, xml):
    before = os.stat("/dev/null")
    _refused(capsys, ["convert", xml, "-o", "/dev/null"], "'/dev/null' is a device")
    link = tmp_path / "null.onnx"
    os.symlink("/dev/null", link)
    _refused(capsys, ["convert", xml, "-o", link], "is a device")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@pytest.mark.parametrize("option", ["--save", "--report"])
def test_save_and_report_onto_a_fifo_or_device_are_refused(capsys, tmp_path, xml, option):
    fifo = tmp_path / ("pipe.npz" if option == "--save" else "pipe.json")
    os.mkfifo(fifo)
    command = "run" if option == "--save" else "check"
    extra = [] if command == "run" else ["--no-openvino"]
    _refused(capsys, [command, xml, option, fifo, *extra], "is a FIFO")
    device = tmp_path / ("null.npz" if option == "--save" else "null.json")
    os.symlink("/dev/null", device)
    _refused(capsys, [command, xml, option, device, *extra], "is a device")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


# -- names ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [243, 250, 255])
def test_a_legal_long_output_name_is_written(capsys, tmp_path, xml, length):
    out = tmp_path / ("a" * (length - 5) + ".onnx")
    assert main(["convert", str(xml), "-o", str(out)]) == 0, capsys.readouterr().err  # (the summary
    # looks for OUT.data too, a name over 255 bytes: fuzz case 2566)
    assert onnx.load(out).graph.output[0].name == "y"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_name_too_long_for_its_data_file_says_so(capsys, tmp_path, xml):
    out = tmp_path / ("b" * 250 + ".onnx")
    _refused(capsys, ["convert", xml, "-o", out, "--external-data"], "too long for its data file")
    assert list(tmp_path.glob("b*")) == []


def test_a_name_over_255_bytes_is_refused_by_name(capsys, tmp_path, xml):
    _refused(capsys, ["convert", xml, "-o", tmp_path / ("c" * 300 + ".onnx")], "at most 255")


def test_the_temporary_name_stays_short():
    assert len(temp_prefix("x" * 255)) + 8 <= 255


# -- run --save: any output name, atomic ----------------------------------------------------------
def _renamed_onnx(tmp_path, xml, new_name) -> Path:
    out = tmp_path / "r.onnx"
    assert main(["convert", str(xml), "-o", str(out), "-q"]) == 0
    model = onnx.load(out)
    for node in model.graph.node:
        node.output[:] = [new_name if o == "y" else o for o in node.output]
    for o in model.graph.output:
        if o.name == "y":
            o.name = new_name
    onnx.save(model, out)
    return out


def test_an_output_named_file_is_saved(capsys, tmp_path, xml):
    model = _renamed_onnx(tmp_path, xml, "file")
    assert main(["run", str(model), "--shape", "x=2,3", "--save", str(tmp_path / "o.npz")]) == 0, \
        capsys.readouterr().err
    saved = np.load(tmp_path / "o.npz")
    assert sorted(saved.files) == ["file", "w"] and saved["file"].shape == (2, 3)


def test_a_200000_character_output_name_is_refused_cleanly(capsys, tmp_path, xml):
    model = _renamed_onnx(tmp_path, xml, "z" * 200_000)
    _refused(capsys, ["run", model, "--shape", "x=2,3", "--save", tmp_path / "o.npz"], "at most 65531 bytes")
    assert not (tmp_path / "o.npz").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_save_npz_round_trips_odd_names(tmp_path):
    arrays = {"a/b": np.arange(3), "file": np.ones((2, 2), np.float16), "\u00fcber": np.array(True)}
    save_npz(tmp_path / "o.npz", arrays)
    loaded = np.load(tmp_path / "o.npz")
    assert {k: loaded[k].tolist() for k in loaded.files} == {k: v.tolist() for k, v in arrays.items()}


# -- a write that fails half-way (a full disk) leaves nothing ---------------------------------------
def _file_size_limit(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # python ignores SIGXFSZ: EFBIG
    return apply


@pytest.mark.parametrize("command, limit", [("convert", 100),
                                            pytest.param("run --save", 1000, marks=pytest.mark.slow),
                                            pytest.param("check --report", 1000, marks=pytest.mark.slow),
                                            ("check FOLDER --report", 400), ("selftest --report", 100)])
def test_a_failed_write_exits_2_and_leaves_nothing(tmp_path, xml, command, limit):
    """RLIMIT_FSIZE makes a write fail half-way (EFBIG) as a full disk does (ENOSPC): the temporary
    model of run and check fits under the limit, the output does not."""
    out = tmp_path / "out"
    argv = {"convert": ["convert", str(xml), "-o", str(out / "m.onnx")],
            "run --save": ["run", str(xml), "--shape", "x=1000,3", "--save", str(out / "o.npz")],
            "check --report": ["check", str(xml), "--no-openvino", "--quiet", "--report", str(out / "r.json")],
            "check FOLDER --report": ["check", str(xml.parent / "models"), "--no-openvino", "--quiet",
                                      "--report", str(out / "r.md")],
            "selftest --report": ["selftest", "-k", "abs/", "--no-openvino", "--report", str(out / "r.md")]}[command]
    (xml.parent / "models").mkdir()
    for f in (xml, xml.with_suffix(".bin")):
        shutil.copy(f, xml.parent / "models" / f.name)
    out.mkdir()
    p = subprocess.run([sys.executable, "-m", "ir2onnx", *argv], capture_output=True, text=True,
                       preexec_fn=_file_size_limit(limit), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert lines[-1].startswith("ir2onnx: error: cannot write") and "File too large" in lines[-1], p.stderr
    assert "Traceback" not in p.stderr
    assert list(out.iterdir()) == []


def test_atomic_file_keeps_the_old_file_on_error(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    with pytest.raises(OSError):
        with atomic_file(target, "w") as f:
            f.write("new, half")
            raise OSError(28, "No space left on device")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# -- stale temporaries -----------------------------------------------------------------------------
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_the_temporary_folder_of_a_killed_run_is_swept_by_the_next(tmp_path, monkeypatch):
    """run and check work in a folder of the system's temp dir, named like the temporaries beside
    an output: a SIGKILL leaves it, and the next command's temporary folder removes it."""
    from ir2onnx.writer import temporary_folder

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with temporary_folder("ir2onnx-check-") as mine:
        assert Path(mine).parent == tmp_path and Path(mine).name.startswith(temp_prefix("ir2onnx-check"))
        stale = Path(mine.replace(f"-{os.getpid()}-", f"-{_dead_pid()}-"))
    stale.mkdir()
    (stale / "model.onnx").write_bytes(b"left by a killed run")
    with temporary_folder("ir2onnx-") as again:
        assert not stale.exists() and Path(again).exists()
    assert list(tmp_path.iterdir()) == []


def test_a_stale_temporary_of_a_dead_process_is_swept_and_a_live_one_kept(tmp_path):
    live = tmp_path / (temp_prefix("m.onnx") + "abcdefgh")  # this process's: alive
    prefix = temp_prefix("m.onnx")
    dead = tmp_path / (prefix.replace(f"-{os.getpid()}-", f"-{_dead_pid()}-") + "ijklmnop")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        other = tmp_path / (prefix.replace(f"-{os.getpid()}-", f"-{sleeper.pid}-") + "qrstuvwx")
        foreign = tmp_path / (prefix.replace(prefix.split("-tmp-")[1][:8], "00000000").replace(
            f"-{os.getpid()}-", f"-{_dead_pid()}-") + "yzabcdef")
        for d in (live, dead, other, foreign):
            d.mkdir()
            (d / "m.onnx").write_bytes(b"partial")
        (tmp_path / ".m.onnx.tmp12345678").mkdir()  # not ours by name: never touched
        assert sweep_stale_temps(tmp_path) == [dead.name]
        assert live.exists() and other.exists() and foreign.exists() and not dead.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
