"""The backends of the check: onnxruntime providers, the oracle interpreter and OpenVINO, plus
the inputs they all receive. Each runner returns ``{output name: array}`` named like the IR."""
from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, TensorProto

from ..errors import Ir2OnnxError
from ..ir.graph import Graph, shape_str
from ..ir.names import input_name, output_names, parameters, results
from ..lowering.convert import convert_graph
from ..oracles import evaluate
from ..runtime import sessions as runtime
from ..runtime.input_values import generate, ir_hints, shared_dims
from ..runtime.sessions import check_feed_request, check_generated_size, HARDWARE, PROVIDERS, random_array
from ..runtime.stateful import at_step, NEW, openvino_steps, ort_steps
from ..writer import save, temporary_folder
from .openvino_attributes import ignored_attributes


@dataclass
class BackendRun:
    """One backend's run. ``status``: ok; error (a failure: counts as a disagreement);
    unavailable (not installed, no hardware); refused (OpenVINO cannot run this IR as written,
    e.g. TensorFlow layout attributes it does not know: reported, not a failure); skipped (the
    oracle on a model over ``--oracle-budget``: reported with the estimate, not a failure)."""

    name: str
    status: str
    message: str = ""
    seconds: float = 0.0
    outputs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)


@lru_cache(maxsize=None)
def provider_status(provider: str) -> tuple[bool, str]:
    """``(usable, why not)`` for an onnxruntime provider, probed once with a one-node model."""
    if provider not in runtime.available_providers():
        return False, (f"onnxruntime has no {runtime.PROVIDERS.get(provider, provider)} "
                       f"({runtime.install_hint(provider)})")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=7)
    try:
        runtime.run(runtime.session(model.SerializeToString(), provider), {"x": np.ones(1, np.float32)})
    except Exception as e:  # no GPU, no driver, a broken install
        return False, " ".join(str(e).split())[:200]
    return True, ""


def resolve_providers(providers) -> tuple[list[str], list[BackendRun]]:
    """``"cpu" | "cuda" | "openvino" | "all"`` or a list of them -> (providers to run, unavailable
    ones). ``all`` is cpu and cuda (``openvino`` replaces the onnxruntime package: by name only).

    A provider asked for by name that cannot run is an error; ``all`` lists it as unavailable.
    """
    asked = [providers] if isinstance(providers, str) else list(providers)
    run, missing = [], []
    for p in asked:
        for name in (HARDWARE if p == "all" else [p]):
            if name not in PROVIDERS:
                raise Ir2OnnxError(f"unknown provider '{name}': choose {', '.join(PROVIDERS)} or all")
            usable, why = provider_status(name)
            if usable and name not in run:
                run.append(name)
            elif not usable and p != "all":
                raise Ir2OnnxError(f"provider '{name}' is not available: {why}")
            elif not usable:
                missing.append(BackendRun(f"ort:{name}", "unavailable", why))
    return run, missing


def make_feeds(graph: Graph, given: dict | None = None, shapes: dict | None = None,
               seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Inputs for every Parameter, in the converted model's input order: ``given`` arrays as they
    are, others generated like :func:`ir2onnx.runtime.sessions.make_inputs` (dynamic dims from ``shapes``,
    else 1; indices within their table, ones for masks ...: :mod:`ir2onnx.runtime.input_values`)."""
    given, shapes = dict(given or {}), dict(shapes or {})
    check_feed_request(given, shapes, seed)
    params = {input_name(p): p for p in parameters(graph)}
    for name in list(given) + list(shapes):
        if name not in params:
            raise Ir2OnnxError(f"the model has no input '{name}' (inputs: {', '.join(params)})")
    rng = np.random.default_rng(seed)
    hints = ir_hints(graph)
    known = {n: tuple(np.shape(v)) for n, v in given.items()}
    known.update({n: tuple(v) for n, v in shapes.items() if n not in known})
    tied = shared_dims({n: p.attrs["shape"] for n, p in params.items()}, known)
    feeds, origin = {}, {}
    for name, layer in params.items():
        etype, declared = layer.attrs["element_type"], layer.attrs["shape"]
        if etype.numpy is None:
            raise Ir2OnnxError(f"input '{name}' has element type {etype.name}, which cannot be fed")
        if name in given:
            arr = np.asarray(given[name])
            if arr.dtype != etype.numpy:
                raise Ir2OnnxError(f"input '{name}' must be {etype.numpy}, the file holds {arr.dtype}")
            shape, feeds[name], origin[name] = arr.shape, arr, "given"
        else:
            if name in shapes:
                shape = tuple(shapes[name])
            elif name in tied:
                shape = tied[name]
            elif declared is None:
                raise Ir2OnnxError(f"input '{name}' has a dynamic rank: give its shape with --shape")
            else:
                shape = tuple(1 if d is None else d for d in declared)
            check_generated_size(name, shape, etype.numpy)
            value, how = generate(name, shape, etype.numpy, rng, hints.get(name))
            feeds[name] = np.asarray(random_array(shape, etype.numpy, rng) if value is None else value)
            origin[name] = f"{how} (seed {seed})" if how.startswith("random") else how
        if declared is not None and (len(shape) != len(declared) or any(
                d is not None and d != s for d, s in zip(declared, shape))):
            raise Ir2OnnxError(f"input '{name}': shape {list(shape)} does not fit the declared "
                               f"shape {shape_str(declared)}")
    return feeds, origin


class Refused(Exception):
    """A backend cannot run this model as written (not a finding about the conversion)."""


def timed(name: str, fn) -> BackendRun:
    """Run one backend: ``ok``, ``error`` (a failure to report) or ``refused`` (see Refused)."""
    start = time.perf_counter()
    try:
        outputs = fn()
    except Refused as e:
        return BackendRun(name, "refused", str(e)[:600], time.perf_counter() - start)
    except Exception as e:  # a backend's failure is a finding to report, not a crash
        msg = " ".join(str(e).split()) or type(e).__name__
        return BackendRun(name, "error", f"{type(e).__name__}: {msg}"[:600], time.perf_counter() - start)
    return BackendRun(name, "ok", "", time.perf_counter() - start, outputs)


def run_oracle(graph: Graph, feeds: dict) -> dict[str, np.ndarray]:
    return evaluate(graph, feeds)


OPENVINO_EXACT = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0",
                  "KV_CACHE_PRECISION": "f32"}


def run_openvino(graph: Graph, feeds: dict, steps: int = 0) -> dict[str, np.ndarray]:
    """OpenVINO's CPU plugin at f32 inference precision, without the dynamic quantization of
    activations it applies by default to MatMuls with compressed weights (which makes them differ
    from the model by ~5e-3 relative), and with its KV cache kept in f32 (``KV_CACHE_PRECISION``:
    its default is f16, u8 on some CPUs); outputs renamed to the IR's names. ``steps`` > 0: a
    stateful model's steps (:func:`ir2onnx.runtime.stateful.openvino_steps`), ``feeds`` the same dict
    every step or one per step.

    ``graph`` is the precision-transformed graph the converted model was made from (its
    ``xml_path`` is the IR OpenVINO reads; ``graph.precision`` says how it was transformed: the child
    process re-reads the IR and computes it at that precision again). Float feeds are given to OpenVINO in the
    types its inputs take (an IR v10 presents f16 as f32), and float outputs and states are
    returned in the graph's types, so that every backend's arrays compare."""
    import openvino as ov

    core = ov.Core()
    try:
        model = core.read_model(graph.xml_path, graph.bin_path) if graph.bin_path and Path(
            graph.bin_path).is_file() else core.read_model(graph.xml_path)
        compiled = core.compile_model(model, "CPU", OPENVINO_EXACT)
    except Exception as e:  # OpenVINO's own validation: it does not support this IR
        raise Refused(f"OpenVINO cannot load this IR: {' '.join(str(e).split())[-300:]}") from None
    ignored = ignored_attributes(graph.xml_path, model)
    if ignored:
        raise Refused(ignored)
    by_param = {p.name: input_name(p) for p in parameters(graph)}
    names = output_names(graph)
    by_result = {r.name: names[r.id] for r in results(graph)}
    request = compiled.create_infer_request()

    def set_inputs(k: int) -> None:
        for i, port in enumerate(compiled.inputs):
            name = by_param[port.get_node().friendly_name]
            request.set_input_tensor(i, _ov_tensor(ov, _as_float(at_step(feeds, k)[name], port.get_element_type())))

    def collect():
        return _collect(compiled, request, by_result)

    set_inputs(1)
    if steps:
        return _graph_types(graph, openvino_steps(request, collect, steps, set_inputs))
    request.infer()
    return _graph_types(graph, collect())


def _as_float(array: np.ndarray, ov_type) -> np.ndarray:
    """A float feed in the float type OpenVINO's input takes (f16 -> f32 is exact)."""
    array = np.asarray(array)
    try:
        want = np.dtype(ov_type.to_dtype())
    except Exception:  # bf16, dynamic: fed as they are
        return array
    return array.astype(want) if array.dtype != want and array.dtype.kind == want.kind == "f" else array


def _graph_types(graph: Graph, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float outputs (and ``<variable>.new@k`` states) cast to the types ``graph`` declares."""
    names = output_names(graph)
    want = {names[r.id]: r.inputs[0].etype for r in results(graph)}
    want.update({l.attrs["variable_id"] + NEW: l.outputs[0].etype for l in graph.order if l.type == "ReadValue"})
    out = {}
    for name, value in outputs.items():
        etype = want.get(name.rpartition("@")[0] if "@" in name and name not in want else name)
        if etype is not None and etype.numpy is not None and value.dtype != etype.numpy \
                and value.dtype.kind == etype.numpy.kind == "f":
            value = value.astype(etype.numpy)
        out[name] = value
    return out


def _collect(compiled, request, by_result: dict) -> dict[str, np.ndarray]:
    out = {}
    for i, port in enumerate(compiled.outputs):
        name = by_result.get(port.get_node().friendly_name)
        if name is None:  # a renamed Result: fall back to the tensor names
            name = next(n for n in by_result.values() if n in port.get_names())
        out[name] = np.array(request.get_output_tensor(i).data)
    return {n: out[n] for n in by_result.values() if n in out}


def _ov_tensor(ov, array: np.ndarray):
    """An ov.Tensor for numpy (and ml_dtypes bfloat16) arrays."""
    array = np.asarray(array, order="C")  # (ascontiguousarray would make a scalar 1-D)
    if array.dtype.name == "bfloat16":
        t = ov.Tensor(ov.Type.bf16, ov.Shape(list(array.shape)))
        t.data.view(np.uint16)[...] = array.view(np.uint16)
        return t
    return ov.Tensor(array)


def run_ort(model_path: Path, provider: str, feeds: dict | list, problem: str | None,
            state: dict | None = None, steps: int = 0) -> dict:
    if problem:
        raise Ir2OnnxError(problem)
    sess = runtime.session(model_path, provider, quiet=True)  # its errors are ours, in one line
    if steps:
        return ort_steps(sess, feeds, state or {}, steps)
    return runtime.run(sess, feeds)


def convert_to(graph: Graph, opset: int | None, folder: str,
               target: str = "onnxruntime") -> tuple[Path, str | None, int]:
    """Write the converted model (for ``target``, at the graph's precision) into ``folder``; a
    failed onnx.checker is returned as a problem; the opset used comes last (``opset=None``: the
    converter chooses it)."""
    converted = convert_graph(graph, opset, target=target)
    path = save(converted, Path(folder) / "model.onnx", check=False)
    try:
        onnx.checker.check_model(str(path), full_check=True)
    except Exception as e:  # ValidationError, InferenceError: a converter defect
        return path, f"the converted model fails onnx.checker: {' '.join(str(e).split())[:300]}", converted.opset
    return path, None, converted.opset


# -- OpenVINO in a child process -----------------------------------------------------------------
REFUSED_EXIT = 3


def run_in_child(args: list[str], payload) -> object:
    """``python -m ir2onnx.harness.openvino_child ARGS... IN.pkl OUT.pkl`` with ``payload`` in
    IN.pkl: OpenVINO in a child process. Its compile_model aborts the whole process on a few edge
    models (SIGFPE/SIGSEGV, seen while fuzzing), which must be reported as that backend's failure,
    not end ``ir2onnx check``. Costs one interpreter start (~1 s). Returns what the child wrote;
    raises :class:`Refused` (exit 3: OpenVINO refuses the model) or RuntimeError (a crash, or
    any other error: its last stderr line)."""
    with temporary_folder("ir2onnx-ov-") as tmp:
        inp, out = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        inp.write_bytes(pickle.dumps(payload))
        p = subprocess.run([sys.executable, "-m", "ir2onnx.harness.openvino_child", *args, str(inp), str(out)],
                           capture_output=True, text=True)
        message = " ".join(p.stderr.strip().splitlines()[-1:]) or f"exit code {p.returncode}"
        if p.returncode < 0:
            raise RuntimeError(f"OpenVINO crashed the process ({signal.Signals(-p.returncode).name})")
        if p.returncode == REFUSED_EXIT:
            raise Refused(message)
        if p.returncode != 0:
            raise RuntimeError(message)
        return pickle.loads(out.read_bytes())  # written by our own child, in our own temp folder


def run_openvino_isolated(graph: Graph, feeds: dict, steps: int = 0, layers: bool = False) -> dict:
    """:func:`run_openvino` in a child process (:func:`run_in_child`); ``layers``:
    :func:`ir2onnx.harness.layers.run_openvino_layers` instead, ``feeds`` holding its feeds and wanted."""
    return run_in_child(["layers" if layers else "ir", str(graph.xml_path), graph.bin_path or "", str(steps),
                         graph.precision or "ir"], feeds if isinstance(feeds, list) else dict(feeds))

