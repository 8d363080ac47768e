"""A 7B-shaped NNCF int4 IR, written as it is generated (not committed; ~3.4 GB for 32 layers).

Each linear weight ``[N, K]`` is the NNCF group-wise asymmetric pattern (group size 128)::

    Const u4 [N, K/128, 128] -> Convert f16 -> Subtract(Const u4 zp [N, K/128, 1] -> Convert f16)
        -> Multiply(Const f16 scale [N, K/128, 1]) -> Reshape [N, K] -> Convert f32
        -> MatMul(x, ., transpose_b=true)

and a layer is q, k, v, o (4096 x 4096), then gate and up (11008 x 4096) multiplied, then down
(4096 x 11008), chained. The .bin is written tensor by tensor, so generating needs little memory.

    python benchmarks/llm_int4_ir.py OUT_DIR [--layers 32] [--hidden 4096] [--intermediate 11008]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

GROUP = 128


class _Writer:
    def __init__(self, bin_file):
        self.bin, self.layers, self.edges, self.next = bin_file, [], [], 0

    def _id(self) -> int:
        self.next += 1
        return self.next - 1

    @staticmethod
    def _port(pid, prec, shape, names=""):
        dims = "".join(f"<dim>{d}</dim>" for d in shape)
        n = f' names="{names}"' if names else ""
        return f'<port id="{pid}" precision="{prec}"{n}>{dims}</port>'

    def const(self, data: bytes, etype: str, prec: str, shape) -> tuple:
        lid, offset = self._id(), self.bin.tell()
        self.bin.write(data)
        self.layers.append(
            f'<layer id="{lid}" name="c{lid}" type="Const" version="opset1"><data element_type="{etype}" '
            f'shape="{",".join(map(str, shape))}" offset="{offset}" size="{len(data)}"/>'
            f"<output>{self._port(0, prec, shape)}</output></layer>")
        return lid, 0, prec, tuple(shape)

    def layer(self, op, inputs, out_prec, out_shape, attrs="", version="opset1", names="") -> tuple:
        lid = self._id()
        ins = "".join(self._port(i, p, s) for i, (_, _, p, s) in enumerate(inputs))
        data = f"<data {attrs}/>" if attrs else ""
        self.layers.append(
            f'<layer id="{lid}" name="{op}{lid}" type="{op}" version="{version}">{data}<input>{ins}</input>'
            f"<output>{self._port(len(inputs), out_prec, out_shape, names)}</output></layer>")
        for i, (src, port, _, _) in enumerate(inputs):
            self.edges.append(f'<edge from-layer="{src}" from-port="{port}" to-layer="{lid}" to-port="{i}"/>')
        return lid, len(inputs), out_prec, tuple(out_shape)


def _weight(w: _Writer, rng, n: int, k: int):
    g = k // GROUP
    q = w.const(rng.integers(0, 256, n * k // 2, dtype=np.uint8).tobytes(), "u4", "U4", (n, g, GROUP))
    zp = w.const(rng.integers(0, 256, (n * g + 1) // 2, dtype=np.uint8).tobytes(), "u4", "U4", (n, g, 1))
    scale = w.const((rng.random(n * g, dtype=np.float32) * 0.01).astype(np.float16).tobytes(), "f16", "FP16", (n, g, 1))
    fq = w.layer("Convert", [q], "FP16", (n, g, GROUP), 'destination_type="f16"', "opset1")
    fz = w.layer("Convert", [zp], "FP16", (n, g, 1), 'destination_type="f16"', "opset1")
    sub = w.layer("Subtract", [fq, fz], "FP16", (n, g, GROUP), 'auto_broadcast="numpy"')
    mul = w.layer("Multiply", [sub, scale], "FP16", (n, g, GROUP), 'auto_broadcast="numpy"')
    shape = w.const(np.array([n, k], np.int64).tobytes(), "i64", "I64", (2,))
    rs = w.layer("Reshape", [mul, shape], "FP16", (n, k), 'special_zero="false"')
    return w.layer("Convert", [rs], "FP32", (n, k), 'destination_type="f32"')


def write(folder: Path, layers: int = 32, hidden: int = 4096, intermediate: int = 11008, seed: int = 0) -> Path:
    """Write ``folder/model.xml`` and ``model.bin``; returns the .xml path."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    with open(folder / "model.bin", "wb") as f:
        w = _Writer(f)
        lid = w._id()
        w.layers.append(f'<layer id="{lid}" name="x" type="Parameter" version="opset1"><data shape="1,{hidden}" '
                        f'element_type="f32"/><output>{w._port(0, "FP32", (1, hidden), "x")}</output></layer>')
        x = (lid, 0, "FP32", (1, hidden))
        mm = lambda a, n, k: w.layer("MatMul", [a, _weight(w, rng, n, k)], "FP32", (1, n),  # noqa: E731
                                     'transpose_a="false" transpose_b="true"')
        for _ in range(layers):
            for _ in range(4):  # q, k, v, o
                x = mm(x, hidden, hidden)
            gate, up = mm(x, intermediate, hidden), mm(x, intermediate, hidden)
            prod = w.layer("Multiply", [gate, up], "FP32", (1, intermediate), 'auto_broadcast="numpy"')
            x = mm(prod, hidden, intermediate)
        rid = w._id()
        w.layers.append(f'<layer id="{rid}" name="y" type="Result" version="opset1"><input>'
                        f'{w._port(0, "FP32", (1, hidden))}</input></layer>')
        w.edges.append(f'<edge from-layer="{x[0]}" from-port="{x[1]}" to-layer="{rid}" to-port="0"/>')
    xml = folder / "model.xml"
    xml.write_text(f'<?xml version="1.0"?>\n<net name="llm_int4" version="11"><layers>{"".join(w.layers)}'
                   f'</layers><edges>{"".join(w.edges)}</edges></net>\n')
    return xml


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--intermediate", type=int, default=11008)
    args = ap.parse_args()
    xml = write(args.out, args.layers, args.hidden, args.intermediate)
    print(xml, (args.out / "model.bin").stat().st_size, "bytes")


if __name__ == "__main__":
    main()
