"""``ir2onnx.run``: run a model on onnxruntime and return its outputs (``ir2onnx run`` prints them).

The model may be an .onnx file, an IR .xml (converted into a temporary folder first), a loaded
Graph, an in-memory ``openvino.Model`` or an ``onnx.ModelProto``. Inputs not given come from the
model's example inputs (``<stem>.inputs.npz`` beside it, :mod:`ir2onnx.runtime.example_inputs`) or are
generated (:mod:`ir2onnx.runtime.input_values`); a stateful IR (ReadValue/Assign) runs ``steps`` steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .api import convert_file, read_model
from .errors import Ir2OnnxError
from .lowering.convert import computed_graph
from .runtime import example_inputs, sessions as runtime
from .runtime.input_values import ir_hints, onnx_file_hints
from .runtime.stateful import initial_state, ort_steps, variables
from .writer import temporary_folder


@dataclass
class RunResult:
    """The inputs fed (given, example and generated) and the outputs, both by name; the inputs
    taken from the example inputs file, and its name."""

    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    example_file: str = ""


def _load_session(model: Path, provider: str):
    try:
        return runtime.session(model, provider, quiet=True)  # its errors are ours, in one line
    except Ir2OnnxError:
        raise
    except Exception as e:  # onnxruntime's own load errors (not an ONNX file, ...)
        raise Ir2OnnxError(f"onnxruntime cannot load '{model}': {runtime.ort_message(e)}") from None


def run_model(model, inputs: dict[str, np.ndarray] | None = None, *, weights=None,
              shapes: dict[str, tuple] | None = None, seed: int = 0, provider: str = "cpu",
              steps: int = 4, precision: str = "f32", target: str = "onnxruntime") -> RunResult:
    """Run ``model`` once (a stateful IR: ``steps`` steps) and return what was fed and computed
    (an IR is converted at ``precision``: :mod:`ir2onnx.lowering.precision`)."""
    state_vars, source = [], None
    graph = read_model(model, weights, onnx_too=True)
    with temporary_folder("ir2onnx-") as tmp:
        if graph is not None:  # an IR: computed at ``precision`` once, converted, run
            source = graph.xml_path
            hints = ir_hints(graph)
            graph = computed_graph(graph, precision)
            state_vars = variables(graph)
            path = convert_file(graph, Path(tmp) / "model.onnx", precision=precision, target=target)
        elif hasattr(model, "SerializeToString"):  # an onnx.ModelProto
            path = Path(tmp) / "model.onnx"
            path.write_bytes(model.SerializeToString())
            hints = onnx_file_hints(path)
        else:
            path = Path(model)
            if not path.is_file():
                raise Ir2OnnxError(f"model file '{path}' not found" if not path.exists()
                                   else f"model '{path}' is not a file")
            hints = onnx_file_hints(path)
            source = path
        sess = _load_session(path, provider)
        inputs, taken, file = example_inputs.fill(source, [i.name for i in sess.get_inputs()], inputs, shapes)
        feeds = runtime.make_inputs(sess, inputs, shapes, seed=seed, hints=hints)
        if state_vars:
            if steps < 1:
                raise Ir2OnnxError(f"steps must be at least 1, got {steps}")
            feeds = {k: v for k, v in feeds.items() if k not in state_vars}
            outputs = ort_steps(sess, feeds, initial_state(graph, feeds), steps)
        else:
            outputs = runtime.run(sess, feeds)
    return RunResult(feeds, outputs, taken, file)


def run(model, inputs: dict[str, np.ndarray] | None = None, *, weights=None,
        shapes: dict[str, tuple] | None = None, seed: int = 0, provider: str = "cpu",
        steps: int = 4, precision: str = "f32", target: str = "onnxruntime") -> dict[str, np.ndarray]:
    """Run ``model`` on onnxruntime and return ``{output name: array}``.

    ``model``: an .onnx path, an IR .xml path (``weights``: its .bin when not beside it), a loaded
    Graph, an ``openvino.Model`` or an ``onnx.ModelProto``. ``inputs`` are fed as they are;
    the others are generated (dynamic dims from ``shapes``, else 1; seeded by ``seed``): indices
    within the table they index, ones for masks, random otherwise (:mod:`ir2onnx.runtime.input_values`).
    ``provider``: ``"cpu"``, ``"cuda"`` or ``"openvino"``; ``precision`` and ``target`` (an IR is
    converted for it) as in :func:`ir2onnx.convert`. Raises :class:`~ir2onnx.errors.Ir2OnnxError` for a
    bad model or bad inputs.
    """
    return run_model(model, inputs, weights=weights, shapes=shapes, seed=seed, provider=provider,
                     steps=steps, precision=precision, target=target).outputs
