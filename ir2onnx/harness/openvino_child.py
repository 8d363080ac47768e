"""``python -m ir2onnx.harness.openvino_child XML BIN FEEDS.pkl OUT.pkl STEPS PRECISION [layers]``: the child process of
:func:`ir2onnx.harness.backends.run_openvino_isolated` (runs OpenVINO where its crashes cannot end the
parent; ``layers``: :func:`ir2onnx.harness.layers.run_openvino_layers`). Exit 0 with OUT.pkl written, 3 when OpenVINO refuses the IR, 4 on any other error; the
message is the last line on stderr."""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

from ..ir.reader import load_ir
from ..lowering.convert import computed_graph
from .backends import REFUSED_EXIT, Refused, run_openvino
from .layers import run_openvino_layers


def main(argv: list[str]) -> int:
    xml, weights, inp, out, steps, precision, *mode = argv
    graph = computed_graph(load_ir(xml, weights or None), precision)  # the parent's graph.precision
    given = pickle.loads(Path(inp).read_bytes())
    try:
        if mode == ["layers"]:
            outputs = run_openvino_layers(graph, given["feeds"], given["wanted"])
        else:
            outputs = run_openvino(graph, given, int(steps))
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
