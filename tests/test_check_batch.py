"""``ir2onnx check DIR|GLOB ...``: every IR found, one summary table (relative paths, backends
compared, worst error, rule, verdict, seconds), exit 1 when any disagrees, one report for all,
Ctrl-C stops it with the table so far (issue 31)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.cli.main import main
from ir2onnx.lowering.registry import LOWERINGS
from ir2onnx.testing import ov_parameter, ov_save

ROOT = Path(__file__).resolve().parents[1]


def _zoo(tmp_path, count=2) -> Path:
    """zoo/<k>/FP32/m.xml: a small classifier head (SoftMax over 3 classes) and a Sigmoid model."""
    zoo = tmp_path / "zoo"
    for k in range(count):
        x = ov_parameter([1, 3, 4, 4], name="data")
        y = ops.softmax(ops.reduce_mean(x, ops.constant(np.array([2, 3])), True), 1) if k % 2 == 0 else ops.sigmoid(x)
        y.output(0).get_tensor().set_names({"prob"})
        folder = zoo / f"m{k}" / "FP32"
        folder.mkdir(parents=True)
        ov_save(folder / "m.xml", y, [x])
    return zoo


def test_a_folder_gives_one_table_and_one_report(tmp_path, capsys):
    zoo = _zoo(tmp_path)
    report = tmp_path / "zoo.json"
    assert main(["check", str(zoo), "--report", str(report), "-q"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split() == ["model", "backends", "compared", "worst", "error", "rule", "verdict", "seconds"]
    assert lines[1].startswith("m0/FP32/m.xml  ort:cpu, oracle, openvino  max abs")
    assert "elementwise" in lines[1] and "PASS" in lines[1] and str(tmp_path) not in captured.out
    assert lines[-1] == "2 of 2 model(s) pass" and captured.err == ""  # -q: no progress lines
    data = json.loads(report.read_text())
    assert data["ok"] and [m["model"] for m in data["models"]] == ["m0/FP32/m.xml", "m1/FP32/m.xml"]
    assert data["models"][0]["check"]["outputs"][0]["comparisons"][0]["rule"] == "elementwise"


def test_one_model_that_disagrees_fails_the_folder(tmp_path, capsys, monkeypatch):
    zoo = _zoo(tmp_path)
    right = LOWERINGS[("Sigmoid", "opset1")]

    def negated(ctx, layer, inputs):
        out = right(ctx, layer, inputs)[0]
        return [ctx.b.Neg(getattr(out, "name", out))]

    monkeypatch.setitem(LOWERINGS, ("Sigmoid", "opset1"), negated)
    assert main(["check", str(zoo / "*" / "FP32" / "*.xml"), "--no-openvino", "-q"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 model(s) pass, 1 fail" in out
    row = next(line for line in out.splitlines() if "m1/FP32/m.xml" in line and "FAIL" in line)
    assert "ort:cpu, oracle" in row
    assert "  m1/FP32/m.xml: output 'prob': ort:cpu and oracle disagree" in out  # under the glob's folder
    assert str(tmp_path) not in out


def test_bad_arguments_are_refused(tmp_path, capsys):
    assert main(["check", str(tmp_path / "none*.xml")]) == 2
    assert "matches no IR .xml file" in capsys.readouterr().err
    zoo = _zoo(tmp_path)
    assert main(["check", str(zoo), "--jobs", "0"]) == 2
    assert main(["check", str(zoo), "--score-threshold", "1.5"]) == 2


@pytest.mark.slow
def test_ctrl_c_stops_with_the_table_so_far(tmp_path):
    """Two workers; Ctrl-C (SIGINT to the command only, as `kill -INT` sends it) once the
    first model is done: the command ends within seconds, prints the table, exit 130."""
    zoo = _zoo(tmp_path, count=12)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "ir2onnx", "check", str(zoo), "--jobs", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err = ""
    while "[1/12]" not in err:
        line = p.stderr.readline()
        assert line, f"the check ended early: {p.wait()}"
        err += line
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert time.monotonic() - start < 20
    assert p.returncode == 130
    assert "STOPPED" in out and "(stopped by Ctrl-C)" in out and "PASS" in out
