"""Round-trip the ONNX backend node tests through OpenVINO and ir2onnx (not a unit test: it takes
tens of minutes on two cores).

For every node case the installed onnx package defines (``onnx.backend.test.case.node``; its
model and its inputs and expected outputs; cases of random ops and of string, sequence, map or
optional tensors are left out): ``openvino.convert_model`` -> ``openvino.save_model``
(``compress_to_fp16=False``, so that the weights are the case's) -> ``ir2onnx.convert_file``
(with its verification) -> onnxruntime on the case's inputs, against the expected outputs (the
case's rtol/atol) and against OpenVINO's CPU plugin on the IR (f32 inference precision).

Each case ends in one of:

* ``pass``: every output equals the expected one within the case's tolerance;
* ``pass-openvino``: OpenVINO's CPU plugin gives something else than the expected output on the
  IR too (its frontend wrote an IR that differs from the ONNX model, or its plugin deviates), and
  ir2onnx gives OpenVINO's result (ir2onnx follows the IR);
* ``pass-oracle``: OpenVINO's CPU plugin cannot run the IR (CastLike to f8), and ir2onnx gives
  the result of its NumPy oracle on the IR, which differs from the expected output;
* ``mismatch``: not the expected output, and OpenVINO gives it, or ir2onnx gives neither (an
  ir2onnx bug, or an onnxruntime kernel);
* ``openvino-refuses``: OpenVINO's frontend cannot convert the model (not counted);
* ``refused``: ir2onnx refuses the IR (the message says why);
* ``ort-python-api``: the model converts and onnxruntime loads it, but its Python API cannot pass
  the inputs or outputs (int4/uint4, packed two a byte);
* ``error``: anything else (onnxruntime cannot run it, a crash).

Usage: ``python samples/check_onnx_node_tests.py [REGEX] [--json OUT.jsonl] [--show CATEGORY]``.
The cases run in child processes, 100 at a time (``--jobs N`` of them at once), so that a crash
ends only its own case.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

BATCH = 100
_NO_PYTHON_TYPE = re.compile(r"No corresponding Numpy type for Tensor Type|can't be converted to MLDataType")
RANDOM = {"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Bernoulli", "Multinomial"}


def _arrays(values, infos):
    from onnx import TensorProto, numpy_helper

    out = []
    for v, info in zip(values, infos):
        if isinstance(v, TensorProto):
            v = numpy_helper.to_array(v)
        if not isinstance(v, np.ndarray) or not info.type.HasField("tensor_type") or v.dtype.kind in "OSU":
            return None  # sequences, maps, optionals, strings: not IR types
        out.append(v)
    return out


def export(root: Path, pattern: str) -> list[str]:
    """Write each tensor-only node case as ROOT/NAME/{model.onnx, case.npz, tol.json}."""
    from onnx.backend.test.case.node import collect_testcases

    names = []
    for case in collect_testcases(None):
        if not re.search(pattern, case.name) or not case.data_sets:
            continue
        graph = case.model.graph
        inits = {t.name for t in graph.initializer}
        inputs = [i for i in graph.input if i.name not in inits]
        if any(n.op_type in RANDOM for n in graph.node) or any(
                n.op_type in RANDOM for f in case.model.functions for n in f.node):
            continue  # random values: nothing to compare
        feeds, expected = case.data_sets[0]
        feeds, expected = _arrays(feeds, inputs), _arrays(expected, graph.output)
        if feeds is None or expected is None:
            continue
        d = root / case.name
        d.mkdir(parents=True, exist_ok=True)
        (d / "model.onnx").write_bytes(case.model.SerializeToString())
        raw = lambda a: np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)  # noqa: E731  (f8, int4: no npy descr)
        np.savez(d / "case.npz", **{f"in{i}": raw(a) for i, a in enumerate(feeds)},
                 **{f"out{i}": raw(a) for i, a in enumerate(expected)})
        (d / "tol.json").write_text(json.dumps({
            "rtol": case.rtol, "atol": case.atol,
            "inputs": [(str(a.dtype), list(a.shape)) for a in feeds], "names": [i.name for i in inputs],
            "outputs": [(str(a.dtype), list(a.shape)) for a in expected]}))
        names.append(case.name)
    return names


def _dtype(name: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def _load_arrays(d: Path):
    tol = json.loads((d / "tol.json").read_text())
    z = np.load(d / "case.npz", allow_pickle=False)
    def typed(key, dtype, shape):
        return np.frombuffer(z[key].tobytes(), _dtype(dtype)).reshape(shape).copy()
    feeds = [typed(f"in{i}", *t) for i, t in enumerate(tol["inputs"])]
    expected = [typed(f"out{i}", *t) for i, t in enumerate(tol["outputs"])]
    return feeds, expected, tol


SCALE_TOL = {2: 1e-3, 4: 2e-7, 8: 1e-12}  # float itemsize -> atol as a share of max |expected|


def _close(a, b, rtol, atol, loose=1.0) -> bool:
    """Within the case's rtol, and an atol of at least SCALE_TOL (times ``loose``) of the output's
    largest value: a float result is a sum whose rounding error scales with its terms, not with
    each element (``test_dft_inverse`` expects 1.9e-7 where the exact value is 7e-16: its f32
    rounding). Against OpenVINO ``loose`` is 5: its f32 kernels round too."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if b.dtype.kind == "f" and b.size:
        with np.errstate(all="ignore"):
            finite = np.abs(b[np.isfinite(b)].astype(np.float64))
        top = float(finite.max()) if finite.size else 0.0
        atol = max(atol, loose * SCALE_TOL.get(b.dtype.itemsize, 0) * top)
        if b.dtype.itemsize == 2:
            rtol = max(rtol, 1e-3)
    if a.dtype.kind not in "fciub" or b.dtype.kind not in "fciub":  # ml_dtypes: compare as f64
        a, b = a.astype(np.float64), b.astype(np.float64)
    if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
        return bool(np.array_equal(a, b))
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))


def run_case(d: Path) -> dict:
    import openvino as ov

    import ir2onnx
    from ir2onnx.runtime import sessions as runtime
    from ir2onnx.errors import Ir2OnnxError
    from ir2onnx.oracles.interpreter import evaluate

    feeds, expected, tol = _load_arrays(d)
    try:
        ov_model = ov.convert_model(str(d / "model.onnx"))
        ov.save_model(ov_model, str(d / "model.xml"), compress_to_fp16=False)
    except Exception as e:
        return {"status": "openvino-refuses", "why": " ".join(str(e).split())[:200]}
    try:  # verified below only when onnxruntime fails on it (the same verdict, half the sessions)
        onnx_path = ir2onnx.convert_file(d / "model.xml", d / "ir2onnx.onnx", verify=False)
    except Ir2OnnxError as e:
        return {"status": "refused", "why": str(e)[:300]}
    try:
        sess = runtime.session(onnx_path, "cpu")
        names = [i.name for i in sess.get_inputs()]
        if set(names) <= set(tol["names"]):  # OpenVINO keeps the names, not always the order or all
            feeds = [dict(zip(tol["names"], feeds))[n] for n in names]
        got = list(runtime.run(sess, dict(zip(names, feeds))).values())
    except Exception as e:
        try:
            ir2onnx.convert_file(d / "model.xml", d / "ir2onnx.onnx")
        except Ir2OnnxError as refusal:
            return {"status": "refused", "why": str(refusal)[:300]}
        why = " ".join(str(e).split())[:300]
        if _NO_PYTHON_TYPE.search(why):  # int4/uint4 tensors: packed two a byte, no numpy form
            return {"status": "ort-python-api", "why": why}
        return {"status": "error", "why": why}
    rtol, atol = tol["rtol"], tol["atol"]
    if len(got) == len(expected) and all(_close(g, e, rtol, atol) for g, e in zip(got, expected)):
        return {"status": "pass"}  # (OpenVINO is run only where the expected output is not given)
    try:
        core = ov.Core()
        compiled = core.compile_model(str(d / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        res = compiled(feeds)
        ovo = [np.asarray(res[o]) for o in compiled.outputs]
        ovo = [o.view(e.dtype) if o.dtype == np.uint8 and e.dtype not in (np.uint8, np.int8, np.bool_) and e.dtype.itemsize == 1 else o
               for o, e in zip(ovo, expected)]  # OpenVINO's Python API gives f8 outputs as u8 bits
    except Exception as e:
        ovo = None
        ov_error = " ".join(str(e).split())[:200]
    ov_ok = ovo is not None and all(_close(o, e, rtol, atol) for o, e in zip(ovo, expected))
    if not ov_ok and ovo is not None and len(ovo) == len(got) and all(
            _close(g, o, rtol, atol, 5) for g, o in zip(got, ovo)):
        return {"status": "pass-openvino",
                "why": "OpenVINO's result on the IR; the expected output differs"}
    if ovo is None:  # OpenVINO cannot run its own IR: the IR's meaning by ir2onnx's oracle
        try:
            ref = list(evaluate(ir2onnx.load_ir(d / "model.xml"), dict(zip(names, feeds))).values())
        except Exception:
            ref = None
        if ref is not None and len(ref) == len(got) and all(_close(g, r, rtol, atol) for g, r in zip(got, ref)):
            return {"status": "pass-oracle", "why": f"OpenVINO cannot run the IR ({ov_error}); the "
                                                    f"oracle's result on it, the expected output differs"}
    diffs = []
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            diffs.append(f"output {i}: shape {g.shape} != {e.shape}")
        elif not _close(g, e, rtol, atol):
            g64, e64 = g.astype(np.float64), e.astype(np.float64)
            nan = int(np.sum(np.isnan(g64) != np.isnan(e64)))
            with np.errstate(all="ignore"):
                err = np.abs(g64 - e64)
                err = float(np.max(np.where(np.isnan(err), 0, err)))
            diffs.append(f"output {i} {g.dtype}: max |got - expected| {err:.3g} (|expected| <= "
                         f"{float(np.nanmax(np.abs(e64), initial=0)):.3g})" + (f", {nan} NaN(s) differ" if nan else ""))
    note = "OpenVINO matches the expected output" if ov_ok else (
        "OpenVINO differs too" if ovo is not None else f"OpenVINO cannot run it: {ov_error}")
    return {"status": "mismatch", "why": "; ".join(diffs) + f" ({note})"}


def worker(root: Path, names: list[str], out: Path) -> None:
    with open(out, "a") as f:
        for name in names:
            f.write(json.dumps({"name": name, "status": "started"}) + "\n")
            f.flush()
            try:
                result = run_case(root / name)
            except Exception:
                result = {"status": "error", "why": traceback.format_exc().splitlines()[-1][:300]}
            f.write(json.dumps({"name": name, **result}) + "\n")
            f.flush()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pattern", nargs="?", default=".", help="a regex the case names must match")
    p.add_argument("--json", type=Path, help="write one JSON line per case here")
    p.add_argument("--show", action="append", default=[], help="print the cases of this status")
    p.add_argument("--jobs", type=int, default=1, help="child processes at a time (default 1)")
    p.add_argument("--keep", type=Path, metavar="DIR", help="export the cases into DIR and keep them")
    p.add_argument("--worker", nargs=2, metavar=("ROOT", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(Path(args.worker[0]), [n.strip() for n in sys.stdin if n.strip()], Path(args.worker[1]))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        names = export(root, args.pattern)
        results: dict[str, dict] = {}
        batches = [names[i:i + BATCH] for i in range(0, len(names), BATCH)]
        running: list = []
        done = 0
        while batches or running:
            while batches and len(running) < args.jobs:
                batch = batches.pop(0)
                log = root / f"results{len(batches)}.jsonl"
                log.unlink(missing_ok=True)
                child = subprocess.Popen([sys.executable, __file__, "--worker", str(root), str(log)],
                                         stdin=subprocess.PIPE, text=True, env=os.environ)
                child.stdin.write("\n".join(batch))
                child.stdin.close()
                running.append((child, batch, log))
            child, batch, log = running.pop(0)
            child.wait()
            found = {}
            for line in (log.read_text().splitlines() if log.exists() else []):
                r = json.loads(line)
                found[r["name"]] = r
            results.update(found)
            started = [n for n in batch if found.get(n, {}).get("status") in (None, "started")]
            if started:  # the child died in started[0]: record it, redo the rest
                results[started[0]] = {"name": started[0], "status": "error", "why": "the child process crashed"}
                if started[1:]:
                    batches.append(started[1:])
            done += len(batch) - len(started[1:])
            print(f"{done} of {len(names)} cases", file=sys.stderr)
    counts = Counter(r["status"] for r in results.values())
    if args.json:
        with open(args.json, "w") as f:
            for name in names:
                f.write(json.dumps(results[name]) + "\n")
    for r in sorted(results.values(), key=lambda r: r["name"]):
        if r["status"] in args.show:
            print(f"{r['status']:16s} {r['name']}: {r.get('why', '')}")
    converted = sum(v for k, v in counts.items() if k != "openvino-refuses")
    print(f"{len(names)} node cases; OpenVINO converts {converted}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts.get("mismatch") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
