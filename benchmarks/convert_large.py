"""Conversion time and peak memory on a synthetic IR with >= 1 GiB of f32 weights.

Prints, for single-file and external-data output:
  time ratio = conversion wall time / time to copy the .bin (shutil.copyfile, same run)
  RSS ratio  = peak resident memory of the converting process / weight bytes
Targets (issue 2): time <= 3x the copy; RSS <= 2.5x the weights single-file, <= 0.5x with
external data. Each conversion runs in a fresh process so its peak RSS is its own; the time
includes reading the IR, writing the file and onnx.checker's full check.

    python benchmarks/convert_large.py [--gib 1.0] [--dir /tmp]

``--int4-llm LAYERS``: instead, the NNCF int4 pattern of a 7B-shaped LLM (LAYERS of hidden 4096 /
intermediate 11008, u4 weights and zero points, f16 scales per group of 128; 32 layers: a 3.4 GB
.bin, ``benchmarks/llm_int4_ir.py``), converted with external data with and without
verification (an onnxruntime session). Targets (issue 25): --no-verify <= 30 s on 2 cores at a
peak RSS <= 2 GB.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHUNK_ELEMENTS = 64 * 2**20 // 4  # 64 MiB of f32 per Const

CHILD = r"""
import json, resource, sys, time
t = time.perf_counter()
import ir2onnx
start = time.perf_counter()
ir2onnx.convert_file(sys.argv[1], sys.argv[2], external_data=sys.argv[3] == "1",
                     verify=len(sys.argv) > 4 and sys.argv[4] == "1")
print(json.dumps({"seconds": time.perf_counter() - start, "import_seconds": start - t,
                  "max_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def build_ir(folder: Path, total_bytes: int) -> Path:
    """Consts of 64 MiB each, every one a model output, written chunk by chunk."""
    count = -(-total_bytes // (CHUNK_ELEMENTS * 4))
    layers, edges = [], []
    rng = np.random.default_rng(0)
    with open(folder / "large.bin", "wb") as f:
        for i in range(count):
            f.write(rng.standard_normal(CHUNK_ELEMENTS, dtype=np.float32).tobytes())
            size = CHUNK_ELEMENTS * 4
            layers.append(f'<layer id="{2 * i}" name="w{i}" type="Const" version="opset1">'
                          f'<data element_type="f32" shape="{CHUNK_ELEMENTS}" offset="{i * size}" size="{size}"/>'
                          f'<output><port id="0" precision="FP32" names="w{i}"><dim>{CHUNK_ELEMENTS}</dim></port>'
                          f"</output></layer>")
            layers.append(f'<layer id="{2 * i + 1}" name="r{i}" type="Result" version="opset1"><input>'
                          f'<port id="0" precision="FP32"><dim>{CHUNK_ELEMENTS}</dim></port></input></layer>')
            edges.append(f'<edge from-layer="{2 * i}" from-port="0" to-layer="{2 * i + 1}" to-port="0"/>')
    xml = folder / "large.xml"
    xml.write_text(f'<?xml version="1.0"?><net name="large" version="11"><layers>{"".join(layers)}'
                   f'</layers><edges>{"".join(edges)}</edges></net>')
    return xml


def convert_in_child(xml: Path, out: Path, external: bool, verify: bool = False) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, str(xml), str(out), "1" if external else "0",
                        "1" if verify else "0"], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"conversion failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, default=1.0, help="weight size in GiB (default 1.0)")
    ap.add_argument("--dir", default=None, help="scratch folder (needs ~4x the weights free)")
    ap.add_argument("--int4-llm", type=int, metavar="LAYERS", help="the 7B-shaped int4 IR with LAYERS layers")
    args = ap.parse_args()
    if args.int4_llm:
        return int4_llm(args.int4_llm, args.dir)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="ir2onnx-bench-") as tmp:
        folder = Path(tmp)
        xml = build_ir(folder, int(args.gib * 2**30))
        weights = (folder / "large.bin").stat().st_size
        start = time.perf_counter()
        shutil.copyfile(folder / "large.bin", folder / "copy.bin")
        copy_s = time.perf_counter() - start
        os.remove(folder / "copy.bin")
        print(f"weights: {weights / 2**30:.2f} GiB f32; copying the .bin took {copy_s:.2f} s")
        print(f"{'output':<15}{'time s':>8}{'x copy':>8}{'target':>8}{'peak RSS':>11}{'x weights':>11}{'target':>8}")
        for label, external, rss_target in [("single file", False, 2.5), ("external data", True, 0.5)]:
            out = folder / f"{label.replace(' ', '_')}.onnx"
            r = convert_in_child(xml, out, external)
            t_ratio, m_ratio = r["seconds"] / copy_s, r["max_rss"] / weights
            ok = "ok" if t_ratio <= 3 and m_ratio <= rss_target else "MISSED"
            print(f"{label:<15}{r['seconds']:>8.2f}{t_ratio:>8.2f}{'<= 3':>8}"
                  f"{r['max_rss'] / 2**20:>9.0f}Mi{m_ratio:>11.2f}{'<= ' + str(rss_target):>8}  {ok}")
            for p in folder.glob(out.name + "*"):
                p.unlink()


def int4_llm(layers: int, scratch: str | None) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import llm_int4_ir

    with tempfile.TemporaryDirectory(dir=scratch, prefix="ir2onnx-bench-") as tmp:
        folder = Path(tmp)
        xml = llm_int4_ir.write(folder / "ir", layers)
        weights = (folder / "ir" / "model.bin").stat().st_size
        start = time.perf_counter()
        shutil.copyfile(folder / "ir" / "model.bin", folder / "copy.bin")
        copy_s = time.perf_counter() - start
        os.remove(folder / "copy.bin")
        print(f"int4 LLM, {layers} layers: .bin {weights / 2**30:.2f} GiB; copying it took {copy_s:.2f} s")
        print(f"{'conversion':<22}{'time s':>8}{'x copy':>8}{'peak RSS':>11}{'.data / .bin':>14}")
        for label, verify in (("--no-verify", False), ("verified (ORT session)", True)):
            out = folder / "model.onnx"
            r = convert_in_child(xml, out, True, verify)
            size = Path(str(out) + ".data").stat().st_size
            print(f"{label:<22}{r['seconds']:>8.2f}{r['seconds'] / copy_s:>8.2f}"
                  f"{r['max_rss'] / 2**20:>9.0f}Mi{size / weights:>14.3f}")
            for p in folder.glob(out.name + "*"):
                p.unlink()


if __name__ == "__main__":
    main()
