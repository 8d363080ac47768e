"""Per-token decode latency of one LLM IR converted for several ``--target`` profiles, on
onnxruntime's CPU provider, in one run, same threads.

    python benchmarks/bench_targets.py IR_DIR [--targets onnxruntime onnx onnx:23] [--threads 2]
        [--prompt 16] [--tokens 32] [--rounds 6] [--block 2] [--accuracy-level 4|0]

``TARGET:OPSET`` pins the opset (``onnx:23``: Attention-23 and RMSNormalization-23). Each runner
is the ``ort`` runner of ``bench_llm.py`` (the cache kept in onnxruntime's tensors between steps,
``session.intra_op.allow_spinning=0``, MatMulNBits at ``--accuracy-level``); a round runs every
runner ``--block`` times back to back after one untimed run, a token's time is the median of its
decode steps (the prompt step apart), and the ratio against the first target is taken per round
and summarised by its median (which cancels most of a shared machine's drift). The first tokens
of every runner are printed: they must be equal. One IR per process (run it once per model).
"""
from __future__ import annotations

import argparse
import atexit
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_llm  # noqa: E402
from ir2onnx.api import convert_file  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ir_dir", type=Path)
    p.add_argument("--targets", nargs="+", default=["onnxruntime", "onnx", "onnx:23"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt", type=int, default=16)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--block", type=int, default=2)
    p.add_argument("--accuracy-level", choices=["0", "4"], default="4")
    args = p.parse_args()
    bench_llm.ACCURACY_LEVEL[0] = args.accuracy_level
    xml = args.ir_dir / "openvino_model.xml"
    tmp = Path(tempfile.mkdtemp(prefix="bench-targets-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the converted models: GBs per run
    runners = {}
    for spec in args.targets:
        target, _, opset = spec.partition(":")
        path = convert_file(xml, tmp / f"{target}{opset}.onnx", target=target, opset=int(opset) if opset else None)
        runners[spec] = bench_llm.ort_runner(path, args.threads)
    ids = np.random.default_rng(0).integers(3, 100, size=(1, args.prompt)).astype(np.int64)
    per_token, first = bench_llm.rounds(runners, ids, args.rounds, args.block, args.tokens, warm=8)
    base = np.array(per_token[args.targets[0]])
    print(f"{args.ir_dir.name}: threads {args.threads}, prompt {args.prompt}, {args.tokens} tokens, "
          f"{args.rounds} rounds of {args.block}, accuracy level {args.accuracy_level}")
    for name, ts in per_token.items():
        ratio = float(np.median(np.array(ts) / base))
        print(f"  {name:12} {1e3 * np.median(ts):8.3f} ms/token  {ratio:6.3f}x {args.targets[0]}  "
              f"first tokens {first[name]}")


if __name__ == "__main__":
    main()
