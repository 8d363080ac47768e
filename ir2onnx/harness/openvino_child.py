"""``python -m ir2onnx.harness.openvino_child XML BIN FEEDS.pkl OUT.pkl STEPS PRECISION``: the child process of
:func:`ir2onnx.harness.backends.run_openvino_isolated` (runs OpenVINO where its crashes cannot end the
parent). Exit 0 with OUT.pkl written, 3 when OpenVINO refuses the IR, 4 on any other error; the
message is the last line on stderr."""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

from .backends import REFUSED_EXIT, Refused, run_openvino
from ..ir.reader import load_ir
from ..lowering.convert import computed_graph


def main(argv: list[str]) -> int:
    xml, weights, inp, out, steps, precision = argv
    graph = computed_graph(load_ir(xml, weights or None), precision)  # the parent's graph.precision
    try:
        outputs = run_openvino(graph, pickle.loads(Path(inp).read_bytes()), int(steps))
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
