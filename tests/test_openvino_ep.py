"""onnxruntime's OpenVINO execution provider (``--provider openvino``), in a venv where
onnxruntime-openvino replaces onnxruntime (the ``openvino-ep`` extra; .ci/run makes that venv and
runs ``pytest -m openvino_ep``; the default and slow runs leave these tests out).

Every node runs on OpenVINO's CPU device or the session fails: no silent share of the graph on
onnxruntime's CPU provider."""
from __future__ import annotations

from pathlib import Path

import pytest

from ir2onnx.cli.main import main
from ir2onnx.harness.check import check

pytestmark = pytest.mark.openvino_ep

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("xml", ["decoder/decoder.xml", "web/detector.xml", "real/cnn/model.xml"])
def test_openvino_provider_agrees_with_the_oracle(xml):
    result = check(SAMPLES / xml, providers="openvino", openvino=False)
    assert result.backend("ort:openvino").status == "ok", result.backend("ort:openvino").message
    assert result.ok, result.failures()


def test_a_node_openvino_cannot_take_fails_the_session():
    """The bucketize sample holds a node OpenVINO's provider does not take; onnxruntime would give
    it to its CPU provider, which the session forbids: check reports the provider failed instead
    of a mixed run."""
    result = check(SAMPLES / "bucketize" / "bucketize_left.xml", providers="openvino", openvino=False)
    backend = result.backend("ort:openvino")
    assert backend.status == "error" and "fallback to CPU EP has been explicitly disabled" in backend.message
    assert not result.ok


def test_run_prints_outputs(capsys):
    assert main(["run", str(SAMPLES / "decoder" / "decoder.xml"), "--provider", "openvino"]) == 0
    assert "output y" in capsys.readouterr().out
