"""DepthToSpace on a 64 MiB f32 tensor: the converted model on onnxruntime vs numpy.copy and vs
OpenVINO's DepthToSpace on the same input and thread count.

    python benchmarks/bench_depth_to_space.py [--threads N] [--repeat R]

Cases: 4-D and 5-D NCHW in both modes (IR written by OpenVINO) and the TensorFlow NHWC layout
(blocks_first, TensorFlow's order; depth_first is ir2onnx's generalisation)
(IR written by ir2onnx.testing.IRWriter; OpenVINO does not know ``data_format``, so its column
is its DepthToSpace on the same 64 MiB input read as NCHW, the same amount of data moved).
Each case prints the lowering ir2onnx chose (its ONNX node types: R Reshape, T Transpose,
A Add, G Gather) and, for comparison, the time of the plain Reshape -> Transpose -> Reshape
chain of the spec (no ONNX operator, no Gather, one Transpose).

Timings are the best of ``--repeat`` runs after a warm-up; onnxruntime writes into a
preallocated output through IOBinding and OpenVINO shares its input and output buffers, so
neither side pays for an extra copy. numpy.copy allocates its output each time, like a fresh
run. Threads: onnxruntime intra_op_num_threads and OpenVINO INFERENCE_NUM_THREADS.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ir2onnx.runtime import sessions as runtime  # noqa: E402
from ir2onnx.api import convert  # noqa: E402
from ir2onnx.ops import _depth_to_space_move as depth_to_space_move
from ir2onnx.ops import _depth_to_space_rows as depth_to_space_rows  # noqa: E402
from ir2onnx.testing import IRWriter  # noqa: E402

ELEMENTS = 64 * 2**20 // 4
CASES = [  # name, input shape, mode, data_format
    ("4-D NCHW", (1, 64, 512, 512), "blocks_first", None),
    ("4-D NCHW", (1, 64, 512, 512), "depth_first", None),
    ("5-D NCHW", (1, 64, 64, 64, 64), "blocks_first", None),
    ("5-D NCHW", (1, 64, 64, 64, 64), "depth_first", None),
    ("4-D NHWC", (1, 512, 512, 64), "blocks_first", "NHWC"),
    ("4-D NHWC", (1, 512, 512, 64), "depth_first", "NHWC"),
]
BS = 2


def best(fns: dict, repeat: int) -> dict:
    """The best time of each function; the functions take turns, so that a busy moment of the
    machine does not favour one of them."""
    times = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: min(ts) for name, ts in times.items()}


def write_ir(folder: Path, shape, mode, data_format) -> Path:
    path = folder / f"d2s_{len(shape)}d_{mode}_{data_format or 'NCHW'}.xml"
    if data_format is None:
        import openvino as ov
        import openvino.opset15 as ops

        p = ops.parameter(list(shape), ov.Type.f32, name="x")
        model = ov.Model([ops.depth_to_space(p, mode, BS)], [p], "d2s")
        ov.save_model(model, str(path), compress_to_fp16=False)
        return path
    w = IRWriter("d2s")
    x = w.parameter(list(shape), "f32", "x")
    out = list(shape[:1]) + [d * BS for d in shape[1:-1]] + [shape[-1] // BS**2]
    (y,) = w.layer("DepthToSpace", "opset1", [x], {"block_size": BS, "mode": mode, "data_format": data_format},
                   [("f32", out)], out_names=["y"])
    w.result(y, "y")
    return w.save(path)


def onnx_runner(model, x: np.ndarray, threads: int):
    sess = runtime.session(model.SerializeToString(), "cpu", threads=threads)
    out_info = sess.get_outputs()[0]
    ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    out = np.empty_like(ref)
    io = sess.io_binding()
    io.bind_cpu_input(sess.get_inputs()[0].name, x)
    io.bind_output(out_info.name, "cpu", element_type=out.dtype, shape=out.shape, buffer_ptr=out.ctypes.data)
    return (lambda: sess.run_with_iobinding(io) or out), ref  # keeps `out` alive with the binding


def openvino_runner(xml: Path, x: np.ndarray, threads: int):
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                  {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"})
    req = compiled.create_infer_request()
    run = lambda: req.infer([x], share_inputs=True, share_outputs=True)  # noqa: E731
    return run, np.array(run()[0])


def lowering(model) -> str:
    """'ONNX DepthToSpace', or the nodes as 'R,T,R,A,G,C' (Reshape, Transpose, Add, Gather, Concat
    of data; Concats that build shapes are left out)."""
    shapes = {n.input[1] for n in model.graph.node if n.op_type == "Reshape"}
    ops = [n.op_type for n in model.graph.node if n.op_type not in ("Identity", "Shape")
           and not (n.op_type == "Concat" and n.output[0] in shapes)]
    if ops == ["DepthToSpace"]:
        return "ONNX DepthToSpace"
    return ",".join(op[0] for op in ops)


def plain_chain(xml: Path):
    """The spec's Reshape -> Transpose -> Reshape, without the ONNX operator, Gather or a split
    Transpose (what the converter would emit without its per-layer choices)."""
    from ir2onnx.ops import depth_to_space

    with mock.patch.object(depth_to_space, "use_onnx_op", lambda p, x: False), \
            mock.patch.object(depth_to_space_rows, "gather_rows", lambda *a: None), \
            mock.patch.object(depth_to_space_move, "transposes", lambda perm, sizes, *a: [(perm, None)]):
        return convert(xml)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="threads for both runtimes (default 1)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    import onnxruntime
    import openvino

    print(f"onnxruntime {onnxruntime.__version__}, openvino {openvino.__version__}, "
          f"{os.cpu_count()} CPUs, threads={args.threads}, block_size={BS}, 64 MiB f32 input")
    head = f"{'case':9} {'mode':12} {'lowering':18} {'ort ms':>7} {'copy ms':>7} {'ov ms':>7} " \
           f"{'/copy':>6} {'/ov':>6} {'plain R,T,R ms':>15}"
    print(head)
    rng = np.random.default_rng(0)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape, mode, fmt in CASES:
            assert np.prod(shape) == ELEMENTS
            x = rng.standard_normal(shape).astype(np.float32)
            xml = write_ir(Path(tmp), shape, mode, fmt)
            model = convert(xml)
            run_ort, y = onnx_runner(model, x, args.threads)
            run_ov, y_ov = openvino_runner(xml, x, args.threads)
            if fmt is None and y.tobytes() != y_ov.tobytes():
                raise SystemExit(f"{name} {mode}: onnxruntime and OpenVINO disagree")
            run_plain, y_plain = onnx_runner(plain_chain(xml), x, args.threads)
            assert y_plain.tobytes() == y.tobytes()
            t = best({"ort": run_ort, "copy": lambda: np.copy(x), "ov": run_ov, "plain": run_plain}, args.repeat)
            t_ort, t_copy, t_ov = t["ort"], t["copy"], t["ov"]
            plain = f"{t['plain'] * 1e3:.1f}"
            worst = max(worst, t_ort / t_ov)
            print(f"{name:9} {mode:12} {lowering(model):18} {t_ort * 1e3:7.1f} {t_copy * 1e3:7.1f} "
                  f"{t_ov * 1e3:7.1f} {t_ort / t_copy:5.2f}x {t_ort / t_ov:5.2f}x {plain:>15}")
    print(f"worst onnxruntime / OpenVINO ratio: {worst:.2f}x (target <= 1.00x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
