"""``python -m ir2onnx.harness.openvino_child MODE ARGS... IN.pkl OUT.pkl``: OpenVINO in the child
process of :func:`ir2onnx.harness.backends.run_in_child`, where its crashes cannot end the parent.

- ``ir XML BIN STEPS PRECISION``: :func:`~ir2onnx.harness.backends.run_openvino` on the IR computed
  at PRECISION (the parent's ``graph.precision``), IN.pkl the feeds;
- ``layers XML BIN STEPS PRECISION``: :func:`ir2onnx.harness.layers.run_openvino_layers`, IN.pkl
  ``{"feeds", "wanted"}``;
- ``onnx MODEL.onnx STEPS``: :func:`ir2onnx.harness.round_trip.run_openvino_onnx`, IN.pkl
  ``{"feeds", "state"}``.

Exit 0 with OUT.pkl written, 3 when OpenVINO refuses the model, 4 on any other error; the message
is the last line on stderr."""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

from ..ir.reader import load_ir
from ..lowering.convert import computed_graph
from .backends import REFUSED_EXIT, Refused, run_openvino
from .layers import run_openvino_layers
from .round_trip import run_openvino_onnx


def _run(mode: str, args: list[str], given):
    if mode == "onnx":
        model, steps = args
        return run_openvino_onnx(model, given["feeds"], given["state"], int(steps))
    xml, weights, steps, precision = args
    graph = computed_graph(load_ir(xml, weights or None), precision)
    if mode == "layers":
        return run_openvino_layers(graph, given["feeds"], given["wanted"])
    return run_openvino(graph, given, int(steps))


def main(argv: list[str]) -> int:
    mode, *args, inp, out = argv
    try:
        outputs = _run(mode, args, pickle.loads(Path(inp).read_bytes()))
    except Refused as e:
        print(e, file=sys.stderr)
        return REFUSED_EXIT
    except Exception as e:  # reported by the parent as this backend's error
        print(f"{type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
        return 4
    Path(out).write_bytes(pickle.dumps(outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
