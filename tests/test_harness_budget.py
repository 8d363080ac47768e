"""``ir2onnx check`` on models too big for the oracle: the work estimate, the skip line with its
reason (``--oracle-budget``), and the progress lines on stderr."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import openvino.opset15 as ops

from ir2onnx.harness.check import check
from ir2onnx.ir.reader import load_ir
from ir2onnx.harness.oracle_budget import estimate, graph_cost
from ir2onnx.testing import ov_parameter, ov_save


def _linear(tmp_path, shape=(None, None, 64), n=32):
    """x[B, S, 64] -> MatMul(W[n, 64], transpose_b) -> Softmax: 64 multiply-adds per output."""
    x = ov_parameter(list(shape), np.float32, "x")
    w = ops.constant(np.random.default_rng(0).standard_normal((n, 64)).astype(np.float32))
    y = ops.softmax(ops.matmul(x, w, False, True), -1)
    y.output(0).get_tensor().set_names({"y"})
    return ov_save(tmp_path / "linear.xml", y, [x])


def test_estimate_counts_multiply_adds_and_scales_with_the_inputs(tmp_path):
    graph = load_ir(_linear(tmp_path))
    static, dynamic = graph_cost(graph)
    assert static == 32 * 64  # the weight Const
    # at B = S = 1: Parameter 64, MatMul 32 * 64, Softmax 32, Result 1 (it has no output)
    assert dynamic == 64 + 32 * 64 + 32 + 1
    x = np.zeros((2, 10, 64), np.float32)
    assert estimate(graph, {"x": x}) == static + dynamic * 20
    (tmp_path / "static").mkdir()
    static_xml = _linear(tmp_path / "static", shape=(2, 10, 64))
    assert estimate(load_ir(static_xml), {"x": x}) == 32 * 64 + 2 * 10 * (64 + 32 * 64 + 32) + 1


def test_over_budget_the_oracle_is_skipped_saying_why(tmp_path):
    xml = _linear(tmp_path)
    x = np.random.default_rng(1).standard_normal((2, 10, 64)).astype(np.float32)
    result = check(xml, inputs={"x": x}, oracle_budget=1000)
    oracle = result.backend("oracle")
    assert oracle.status == "skipped" and not oracle.outputs
    assert oracle.message.startswith("the model needs ~4.5e+04 multiply-adds and elements, over the "
                                     "oracle budget of 1e+03 (--oracle-budget N raises it")
    assert result.ok and [c.pair for c in result.outputs[0].comparisons] == ["ort:cpu vs openvino"]
    assert check(xml, inputs={"x": x}, oracle_budget=None).backend("oracle").status == "ok"


def test_cli_prints_progress_and_the_skip_line(tmp_path):
    xml = _linear(tmp_path)
    run = subprocess.run([sys.executable, "-m", "ir2onnx", "check", str(xml), "--shape", "x=2,10,64",
                          "--oracle-budget", "1e3"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert [l.split()[1] for l in lines] == ["converted", "ort:cpu", "oracle", "openvino"]
    assert lines[0].startswith("check: converted to ONNX opset 17 ") and lines[0].endswith(" s")
    assert lines[1].startswith("check: ort:cpu ok ") and lines[3].startswith("check: openvino ok ")
    assert lines[2].startswith("check: oracle skipped: the model needs ~4.5e+04 multiply-adds")
    assert "oracle     skipped      the model needs" in run.stdout
    assert "not compared: oracle (skipped)" in run.stdout

    run = subprocess.run([sys.executable, "-m", "ir2onnx", "check", str(xml), "--no-openvino"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "check: oracle running (~" in run.stderr
    assert "check: oracle ok " in run.stderr and "openvino" not in run.stderr
    quiet = subprocess.run([sys.executable, "-m", "ir2onnx", "check", str(xml), "--quiet"],
                           capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == ""
