"""One decode step's embedding lookup on a compressed table: ir2onnx's gathered-first form against
the whole-table form (the table dequantized on every run, as before) and OpenVINO, same run.

The IR is NNCF's chain on a [32000, 768] table (u8 per row with zero points, or u4 in groups
of 128), read by Gather(ids [1, 1]) as a decoder reads one token per step. Prints the median
time per run and its ratio to OpenVINO (onnxruntime thread spinning off, runs in blocks:
benchmarks/timing.py).

    python benchmarks/bench_gather_tables.py [--threads 2] [--budget 20]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from timing import measure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", type=float, default=20.0)
    args = ap.parse_args()
    import onnxruntime as ort
    import openvino as ov
    import openvino.opset15 as ops

    from ir2onnx.api import convert
    from ir2onnx.lowering import compressed_gather
    from ir2onnx.testing import ov_compressed_weight, ov_parameter, ov_save

    def session(model):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])

    ids = np.array([[1234]], np.int64)
    with tempfile.TemporaryDirectory() as tmp:
        for etype, group in (("u8", None), ("u4", 128)):
            x = ov_parameter([1, None], np.int64, "ids")
            table = ov_compressed_weight((32000, 768), etype, group)
            xml = ov_save(Path(tmp) / f"{etype}.xml", ops.gather(table, x, ops.constant(np.int64(0))), [x])
            new = session(convert(xml))
            saved = compressed_gather.attach
            compressed_gather.attach = lambda *a: None
            try:
                old = session(convert(xml))
            finally:
                compressed_gather.attach = saved
            assert np.array_equal(new.run(None, {"ids": ids})[0], old.run(None, {"ids": ids})[0])
            core = ov.Core()
            compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_NUM_THREADS": args.threads})
            request = compiled.create_infer_request()
            runners = {"openvino": lambda: request.infer({0: ids}),
                       "gathered first": lambda: new.run(None, {"ids": ids}),
                       "whole table": lambda: old.run(None, {"ids": ids})}
            result, rounds = measure(runners, 50, args.budget)
            print(f"{etype} table [32000, 768]{f', groups of {group}' if group else ''} ({rounds} rounds)")
            for name, (t, ratio, _) in result.items():
                print(f"  {name:<16}{t * 1e3:9.3f} ms  {ratio:6.2f}x OpenVINO")


if __name__ == "__main__":
    main()
