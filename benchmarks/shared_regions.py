"""File size when many Consts share few .bin regions (issue 23: 280 Consts over 24 regions of a
60 MB .bin became a 216 MB .onnx).

``openvino.save_model`` stores equal constants once: a chain of 280 MatMuls whose weights cycle
through 24 distinct [800, 800] f32 arrays is saved as 280 Const layers reading 24 regions of a
61 MB .bin. The script converts it (single file, then external data) and prints the output size
against the .bin (target: <= 1.05x).

    python benchmarks/shared_regions.py [--consts 280] [--regions 24] [--dir /tmp]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def build(folder: Path, consts: int, regions: int, n: int = 800) -> Path:
    import openvino as ov
    import openvino.opset15 as ops

    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32) for _ in range(regions)]
    x = ops.parameter([1, n], np.float32, name="x")
    y = x
    for i in range(consts):
        y = ops.matmul(y, ops.constant(weights[i % regions]), False, False)
    xml = folder / "shared.xml"
    ov.save_model(ov.Model([y], [x], "shared"), xml, compress_to_fp16=False)
    return xml


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--consts", type=int, default=280)
    ap.add_argument("--regions", type=int, default=24)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    import ir2onnx

    with tempfile.TemporaryDirectory(dir=args.dir, prefix="ir2onnx-shared-") as tmp:
        folder = Path(tmp)
        xml = build(folder, args.consts, args.regions)
        graph = ir2onnx.load_ir(xml)
        found = {(l.const.offset, l.const.size) for l in graph.order if l.type == "Const" and l.const.size > 64}
        bin_size = xml.with_suffix(".bin").stat().st_size
        print(f"{sum(l.type == 'Const' and l.const.size > 64 for l in graph.order)} weight Consts over "
              f"{len(found)} regions of a {bin_size / 1e6:.1f} MB .bin")
        for label, external in (("single file", False), ("external data", True)):
            out = folder / f"{label.replace(' ', '_')}.onnx"
            start = time.perf_counter()
            ir2onnx.convert_file(xml, out, external_data=external, verify=False)
            size = sum(p.stat().st_size for p in folder.glob(out.name + "*"))
            ratio = size / bin_size
            print(f"{label:<14} {size / 1e6:8.1f} MB  {ratio:5.2f}x the .bin  {time.perf_counter() - start:6.2f} s  "
                  f"{'ok' if ratio <= 1.05 else 'MISSED'} (<= 1.05x)")


if __name__ == "__main__":
    main()
