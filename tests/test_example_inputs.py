"""Example inputs beside a model (``<stem>.inputs.npz``, ir2onnx.runtime.example_inputs): check and run
feed them to the inputs no option gives, name them as the origin, and refuse a file that does not
fit the model; every bundled sample passes its own check with default options."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.cli import main as cli
from ir2onnx.harness.check import check
from ir2onnx.testing import ov_parameter, ov_save

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _model(tmp_path) -> Path:
    """y = x[:, :k] summed, where k = x's last dim - 4: a generated [1, 1] input cannot run it."""
    x = ov_parameter([None, None], np.float32, "x")
    n = ops.gather(ops.shape_of(x), ops.constant(np.array([1], np.int64)), ops.constant(np.int64(0)))
    k = ops.subtract(n, ops.constant(np.array([4], np.int64)))
    part = ops.slice(x, ops.constant(np.array([0], np.int64)), k, ops.constant(np.array([1], np.int64)),
                     ops.constant(np.array([1], np.int64)))
    y = ops.reduce_sum(part, ops.constant(np.array([1], np.int64)), False)
    return ov_save(tmp_path / "m.xml", [y], [x])


def test_check_takes_the_example_inputs(tmp_path):
    xml = _model(tmp_path)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.savez(tmp_path / "m.inputs.npz", x=x)
    result = check(xml)
    assert result.ok, result.failures()
    assert result.input_origin == {"x": "example inputs (m.inputs.npz)"}
    np.testing.assert_array_equal(result.inputs["x"], x)
    given = np.ones((1, 5), np.float32)  # --input wins, and so does --shape
    assert np.array_equal(check(xml, inputs={"x": given}).inputs["x"], given)
    assert check(xml, shapes={"x": (3, 7)}).inputs["x"].shape == (3, 7)


def test_run_names_the_file(tmp_path, capsys):
    xml = _model(tmp_path)
    np.savez(tmp_path / "m.inputs.npz", x=np.ones((2, 6), np.float32))
    assert cli.main(["run", str(xml)]) == 0
    out = capsys.readouterr()
    assert "input(s) x from the example inputs m.inputs.npz" in out.err
    assert "input x: shape [2, 6]" in out.out and "shape [2] float32  min 2 max 2" in out.out  # two ones a row


def test_a_file_that_does_not_fit_is_refused(tmp_path, capsys):
    xml = _model(tmp_path)
    np.savez(tmp_path / "m.inputs.npz", z=np.ones((2, 6), np.float32))
    assert cli.main(["check", str(xml), "--quiet"]) == 2
    assert "'z', which is not an input of the model" in capsys.readouterr().err
    (tmp_path / "m.inputs.npz").write_bytes(b"not an npz")
    assert cli.main(["run", str(xml)]) == 2
    assert "is a text file, not an .npz archive" in capsys.readouterr().err


@pytest.mark.parametrize("xml", sorted(str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*.xml")
                                       if "tokenizer" not in p.name))
def test_every_bundled_sample_passes_its_own_check(xml):
    result = check(SAMPLES / xml)
    assert result.ok, result.failures()
