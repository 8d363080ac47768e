"""What each onnxruntime provider is given (runtime/sessions.py): CUDA computes f32 without TF32,
OpenVINO's provider runs every node or none, ``all`` is cpu and cuda, and an absent provider is
one line and exit 2. The OpenVINO provider itself runs in tests/test_openvino_ep.py (its own
venv: onnxruntime-openvino replaces onnxruntime)."""
from __future__ import annotations

from pathlib import Path

import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ir2onnx.cli.main import main
from ir2onnx.harness.backends import provider_status, resolve_providers
from ir2onnx.runtime import sessions


DECODER = Path(__file__).resolve().parent.parent / "samples" / "decoder" / "decoder.xml"


def _identity() -> bytes:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7).SerializeToString()


@pytest.fixture
def recorded(monkeypatch):
    """onnxruntime as if it had every provider, recording what each session is created with."""
    calls = []

    class Session:
        def __init__(self, model, options, providers):
            calls.append((options, providers))
            self.name = providers[0][0]

        def get_providers(self):
            return [self.name, "CPUExecutionProvider"]

    monkeypatch.setattr(ort, "InferenceSession", Session)
    monkeypatch.setattr(ort, "get_available_providers", lambda: list(sessions.PROVIDERS.values()))
    return calls


def test_cuda_computes_f32_without_tf32(recorded):
    sessions.session(_identity(), "cuda")
    (_, providers), = recorded
    assert providers == [("CUDAExecutionProvider", {"use_tf32": "0"})]


def test_openvino_takes_every_node_on_its_cpu_device(recorded):
    sessions.session(_identity(), "openvino")
    (options, providers), = recorded
    assert providers == [("OpenVINOExecutionProvider", {"device_type": "CPU", "precision": "ACCURACY"})]
    assert options.get_session_config_entry("session.disable_cpu_ep_fallback") == "1"


def test_cpu_is_given_no_options(recorded):
    sessions.session(_identity(), "cpu")
    (_, providers), = recorded
    assert providers == [("CPUExecutionProvider", {})]


def test_all_is_cpu_and_cuda():
    run, missing = resolve_providers("all")
    names = run + [b.name.removeprefix("ort:") for b in missing]
    assert set(names) == {"cpu", "cuda"}


@pytest.mark.parametrize("command", ["run", "check"])
def test_absent_openvino_provider_is_one_line(capsys, monkeypatch, command):
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    provider_status.cache_clear()
    try:
        assert main([command, str(DECODER), "--provider", "openvino"]) == 2
    finally:
        provider_status.cache_clear()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "provider 'openvino'" in err and "onnxruntime-openvino" in err
