"""Paths on the command line (issue 23): -o DIR and DIR/, what a wrong file is called, OS errors
as one line and exit 2 (never 3, never a partial file), and several models in one command."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from ir2onnx.cli.main import main
from ir2onnx.testing import IRWriter
from util import convert_model


@pytest.fixture
def xml(tmp_path):
    return convert_model(tmp_path / "m.xml")


def _refused(capsys, argv, pattern, *, absent=()):
    """Exit 2, one line on stderr matching ``pattern``, no traceback, none of ``absent`` written."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ir2onnx: error: "), err
    assert re.search(pattern, err), err
    for path in absent:
        assert not Path(path).exists(), path
    return err


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# -- -o DIR and -o DIR/ --------------------------------------------------------------------------
def test_output_into_an_existing_directory(capsys, tmp_path, xml):
    (tmp_path / "out").mkdir()
    assert main(["convert", str(xml), "-o", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    assert onnx.load(tmp_path / "out" / "m.onnx").graph.output[0].name == "y"


def test_output_with_a_trailing_slash_makes_the_directory(capsys, tmp_path, xml):
    assert main(["convert", str(xml), "-o", str(tmp_path / "new" / "sub") + "/"]) == 0, capsys.readouterr().err
    assert (tmp_path / "new" / "sub" / "m.onnx").is_file()
    assert not (tmp_path / "new" / "sub").is_file()


# -- OS errors on output paths: exit 2, one line, nothing written ----------------------------------
def test_output_under_a_file_is_refused(capsys, tmp_path, xml):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    _refused(capsys, ["convert", xml, "-o", blocker / "m.onnx"], r"'.*file.txt' is not a directory")
    assert blocker.read_text() == "x"


def test_output_into_a_folder_nobody_can_write(capsys, tmp_path, xml):
    """/proc takes no new files, even from root (file permissions say nothing to root)."""
    if not Path("/proc/self").exists():
        pytest.skip("no /proc on this system")
    _refused(capsys, ["convert", xml, "-o", "/proc/m.onnx"], r"'/proc' is not writable")


def test_output_that_is_the_input_is_refused(capsys, tmp_path, xml):
    before = xml.read_bytes()
    _refused(capsys, ["convert", xml, "-o", xml], "is the input")
    assert xml.read_bytes() == before


# -- what a wrong input is called ------------------------------------------------------------------
def test_an_onnx_file_is_named(capsys, tmp_path, xml):
    onnx_file = tmp_path / "m.onnx"
    assert main(["convert", str(xml), "-q"]) == 0
    _refused(capsys, ["convert", onnx_file, "-o", tmp_path / "o.onnx"], "is an ONNX model, not an OpenVINO IR",
             absent=[tmp_path / "o.onnx"])


def test_a_bin_file_is_named(capsys, tmp_path, xml):
    _refused(capsys, ["convert", xml.with_suffix(".bin"), "-o", tmp_path / "o.onnx"],
             r"is the weights file of an IR: give its .xml \(.*m.xml\)", absent=[tmp_path / "o.onnx"])


def test_convert_dot_with_one_ir_converts_it(capsys, tmp_path, xml):
    """`convert .` used to end in "PosixPath('.') has an empty name" (exit 3)."""
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["convert", "."]) == 0, capsys.readouterr().err
    finally:
        os.chdir(old)
    assert (tmp_path / "m.onnx").is_file()


def test_a_directory_without_an_ir_is_named(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    _refused(capsys, ["convert", tmp_path / "empty"], "is a directory with no IR .xml file in it")


def test_a_missing_model_is_named(capsys, tmp_path):
    _refused(capsys, ["convert", tmp_path / "nope.xml", "-o", tmp_path / "o.onnx"], "not found",
             absent=[tmp_path / "o.onnx"])


def test_an_unreadable_model_is_one_line(capsys, tmp_path):
    """A FIFO is neither file nor folder: named, not read (reading it would block)."""
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    _refused(capsys, ["convert", fifo, "-o", tmp_path / "o.onnx"], "is not a regular file")


# -- run: --save is checked before running; onnxruntime's message kept whole -------------------------
def test_run_save_into_a_missing_folder_is_made(capsys, tmp_path, xml):
    out = tmp_path / "new" / "out.npz"
    assert main(["run", str(xml), "--save", str(out)]) == 0
    assert set(np.load(out)) == {"y", "w"}


@pytest.mark.parametrize("where", ["under_file", "proc", "directory"])
def test_run_save_that_cannot_be_written_fails_before_running(capsys, tmp_path, xml, monkeypatch, where):
    import ir2onnx.inference

    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    target = {"under_file": blocker / "out.npz", "proc": Path("/proc/missing/out.npz"),
              "directory": tmp_path}[where]
    if where == "proc" and not Path("/proc/self").exists():
        pytest.skip("no /proc on this system")

    def never(*a, **k):
        raise AssertionError("the model ran before --save was checked")

    monkeypatch.setattr(ir2onnx.inference, "run_model", never)
    _refused(capsys, ["run", xml, "--save", target], "is not a directory|is not writable|is a directory")


def test_run_with_a_wrong_shape_keeps_the_useful_part(capsys, tmp_path, xml):
    np.save(tmp_path / "bad.npy", np.zeros((5, 7), np.float16))
    err = _refused(capsys, ["run", xml, "--input", f"x={tmp_path / 'bad.npy'}"], "shape")
    assert "[5, 7]" in err and "[?,3]" in err, err


def test_onnxruntime_messages_keep_what_comes_after_the_first_line():
    from ir2onnx.runtime.sessions import ort_message

    e = RuntimeError("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: x "
                     "for the following indices\n index: 1 Got: 7 Expected: 3\n Please fix")
    assert ort_message(e) == ("Got invalid dimensions for input: x for the following indices index: 1 "
                              "Got: 7 Expected: 3 Please fix")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_failing_inference_is_one_line_without_onnxruntimes_log(capfd, tmp_path, command):
    """onnxruntime's own error log (a coloured '[E:onnxruntime:...]' line) is not printed beside
    ours (fuzz case 2448)."""
    w = IRWriter("reshape")
    x = w.parameter([None, 3], "f32", "x")
    target = w.const(np.array([3], np.int64))
    y = w.layer("Reshape", "opset1", [x, target], {"special_zero": False}, [("f32", [3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "r.xml")
    extra = ["--no-openvino", "--no-oracle", "--quiet"] if command == "check" else []
    _refused(capfd, [command, xml, "--shape", "x=2,3", *extra], "onnxruntime failed")  # (capfd: the
    # log is written by onnxruntime's C++ to the file descriptor)


# -- several models -------------------------------------------------------------------------------
def _tree(tmp_path) -> Path:
    models = tmp_path / "models"
    for sub, stem in (("a", "model"), ("b", "model"), ("b", "other")):
        (models / sub).mkdir(parents=True, exist_ok=True)
        convert_model(models / sub / f"{stem}.xml")
    return models


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_convert_a_directory_of_irs(capsys, tmp_path, jobs):
    models = _tree(tmp_path)
    code = main(["convert", str(models), "-o", str(tmp_path / "out"), "--jobs", jobs])
    out = capsys.readouterr().out
    assert code == 0, out
    assert _files(tmp_path / "out") == {"a", "b", "a/model.onnx", "b/model.onnx", "b/other.onnx"}
    lines = out.splitlines()
    assert lines[0].split() == ["model", "status", "seconds", "size", "reason"]
    assert [line.split()[1] for line in lines[1:4]] == ["ok"] * 3
    assert [line.split()[0] for line in lines[1:4]] == ["a/model.xml", "b/model.xml", "b/other.xml"]  # relative
    assert lines[-1] == "3 of 3 model(s) converted"


def test_a_failed_model_is_a_row_and_exit_2(capsys, tmp_path):
    models = _tree(tmp_path)
    (models / "b" / "broken.xml").write_text("<net")
    code = main(["convert", str(models / "b" / "*.xml"), "-o", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 2, out
    row = next(line for line in out.splitlines() if "broken.xml" in line)
    assert "failed" in row and "not well-formed XML" in row
    assert out.splitlines()[-1] == "2 of 3 model(s) converted, 1 failed"
    assert _files(tmp_path / "out") == {"model.onnx", "other.onnx"}


def test_two_models_for_one_file_are_refused_before_converting(capsys, tmp_path):
    models = _tree(tmp_path)
    _refused(capsys, ["convert", models / "a" / "model.xml", models / "b" / "model.xml", "-o", tmp_path / "out"],
             "would both be written to", absent=[tmp_path / "out"])


def test_several_models_need_a_directory(capsys, tmp_path):
    models = _tree(tmp_path)
    (tmp_path / "f.onnx").write_text("x")
    _refused(capsys, ["convert", models, "-o", tmp_path / "f.onnx"], "is a file")


def test_a_glob_matching_nothing(capsys, tmp_path):
    _refused(capsys, ["convert", str(tmp_path / "*.xml"), "-o", tmp_path / "out"], "matches no IR .xml file")


def test_a_folder_of_several_irs_without_o_writes_beside_each(capsys, tmp_path):
    models = _tree(tmp_path)
    assert main(["convert", str(models), "-q"]) == 0
    assert (models / "b" / "other.onnx").is_file() and (models / "a" / "model.onnx").is_file()
    shutil.rmtree(models)


def _optimum_zoo(tmp_path) -> Path:
    """Two optimum-intel-style exports (openvino_model.xml, and the tokenizer IRs optimum-cli
    writes beside it, here not even XML) and a plain IR, in one folder."""
    zoo = tmp_path / "zoo"
    for name in ("bert", "llama"):
        (zoo / name).mkdir(parents=True)
        convert_model(zoo / name / "openvino_model.xml")
        for tok in ("openvino_tokenizer.xml", "openvino_detokenizer.xml"):
            (zoo / name / tok).write_text("<net")
    (zoo / "tokenizer").mkdir()
    convert_model(zoo / "tokenizer" / "openvino_tokenizer.xml")  # no model beside it: an IR like any
    return zoo


def test_a_folder_of_optimum_exports_leaves_their_tokenizer_irs_out(capsys, tmp_path):
    """A zoo of optimum-intel exports converts and checks its models, not the tokenizer IRs
    beside them (string ops ONNX has none of): one line names what was left out."""
    zoo = _optimum_zoo(tmp_path)
    assert main(["convert", str(zoo), "-o", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert _files(tmp_path / "out") == {"bert", "llama", "tokenizer", "bert/openvino_model.onnx",
                                        "llama/openvino_model.onnx", "tokenizer/openvino_tokenizer.onnx"}
    assert captured.out.splitlines()[-1] == "3 of 3 model(s) converted"
    assert "left out 4 tokenizer IR(s) of optimum-intel exports" in captured.err
    assert main(["check", str(zoo), "--no-openvino"]) == 0
    captured = capsys.readouterr()
    assert "3 model(s)" in captured.out and "openvino_detokenizer" not in captured.out
    assert main(["convert", str(zoo / "bert"), "-o", str(tmp_path / "bert.onnx"), "-q"]) == 0  # one model
    assert (tmp_path / "bert.onnx").is_file()


def test_help_says_the_batch_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit 0 when all converted, 2 when any failed" in text


# -- check: the model argument and --report ---------------------------------------------------------
def test_check_report_that_cannot_be_written_fails_before_checking(capsys, tmp_path, xml, monkeypatch):
    import ir2onnx.harness.check

    def never(*a, **k):
        raise AssertionError("the check ran before --report was checked")

    monkeypatch.setattr(ir2onnx.harness.check, "check", never)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    _refused(capsys, ["check", xml, "--report", blocker / "r.json"], "is not a directory")


def test_check_report_into_a_new_folder(capsys, tmp_path, xml):
    assert main(["check", str(xml), "--no-openvino", "--report", str(tmp_path / "new" / "r.md")]) == 0
    assert (tmp_path / "new" / "r.md").read_text().startswith("### ir2onnx check")


def test_check_names_an_onnx_file(capsys, tmp_path, xml):
    assert main(["convert", str(xml), "-q"]) == 0
    _refused(capsys, ["check", tmp_path / "m.onnx"], "is an ONNX model, not an OpenVINO IR")


def _float_model(path: Path) -> Path:
    w = IRWriter("scale")
    x = w.parameter([None, 512], "f32", "x")
    c = w.const(np.full((1, 512), 0.5, np.float32))  # 2 KiB: external data takes it
    y = w.layer("Multiply", "opset1", [x, c], {"auto_broadcast": "numpy"}, [("f32", [None, 512])], out_names=["y"])[0]
    w.result(y)
    return w.save(path)


@pytest.mark.parametrize("option", [["--precision", "f16"], ["--opset", "18"], ["--rename", "y=scaled"],
                                    ["--shape", "x=4,512"], ["--external-data"]])
def test_every_option_applies_in_batch_mode(capsys, tmp_path, option):
    """A batch writes each model as a single conversion with the same options does (batch mode
    ignored --precision: issue 30)."""
    models = tmp_path / "models"
    models.mkdir()
    for stem in ("a", "b"):
        _float_model(models / f"{stem}.xml")
    assert main(["convert", str(models), "-o", str(tmp_path / "batch"), "--jobs", "2", "-q", *option]) == 0, \
        capsys.readouterr()
    assert main(["convert", str(models / "a.xml"), "-o", str(tmp_path / "one.onnx"), "-q", *option]) == 0
    assert main(["convert", str(models / "a.xml"), "-o", str(tmp_path / "plain.onnx"), "-q"]) == 0
    batch, one = onnx.load(tmp_path / "batch" / "a.onnx"), onnx.load(tmp_path / "one.onnx")
    plain = onnx.load(tmp_path / "plain.onnx")
    assert batch.graph == one.graph and batch.opset_import == one.opset_import
    assert (batch.graph, batch.opset_import) != (plain.graph, plain.opset_import)  # the option did something
    capsys.readouterr()


@pytest.mark.parametrize("option", [["--genai", "g"], ["--accuracy-level", "0"]])
def test_one_model_options_are_refused_in_batch_mode(capsys, tmp_path, option):
    models = _tree(tmp_path)
    _refused(capsys, ["convert", models, "-o", tmp_path / "out", *option], "one model",
             absent=[tmp_path / "out"])


def _square_or_die(n: int) -> int:
    if n == 3:
        os._exit(9)  # as the system kills a worker (out of memory, a crash in a native library)
    return n * n


def test_a_worker_that_dies_leaves_its_job_and_the_others_go_on():
    """run_parallel: a dead worker's result is None, a new worker takes the rest."""
    from ir2onnx.cli.batch import run_parallel

    swept = []
    results, stopped = run_parallel(_square_or_die, [(n,) for n in range(6)], 2, cleanup=swept.append)
    assert stopped is None
    assert results == [0, 1, 4, None, 16, 25] and swept == [3]
