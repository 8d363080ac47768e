"""onnxruntime sessions, providers and input generation."""
from __future__ import annotations

import ctypes
import os
import re

import ml_dtypes
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from ..errors import Ir2OnnxError
from ..ir.limits import MAX_INPUT_BYTES, over_dims
from .input_values import generate, shared_dims

MAX_GENERATED_BYTES = MAX_INPUT_BYTES  # refuse to generate random inputs larger than this
PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider",
             "openvino": "OpenVINOExecutionProvider"}
HARDWARE = ("cpu", "cuda")  # what ``--provider all`` runs: openvino is asked for by name
# Each provider computes f32 in f32, as the oracles and OpenVINO's CPU plugin do (f32 hint): the
# CUDA provider turns TF32 on by default (MatMul, Gemm, Conv, RNNs with 10-bit mantissas on
# Ampere and later: up to 2e-2 off the oracle on an H200, docs/providers.md); OpenVINO's
# provider runs on its CPU device with no lower-precision hint (ACCURACY).
PROVIDER_OPTIONS = {"cuda": {"use_tf32": "0"}, "openvino": {"device_type": "CPU", "precision": "ACCURACY"}}
_INSTALL = {"cuda": "install 'ir2onnx[gpu]' and a CUDA driver",
            "openvino": "install 'ir2onnx[openvino-ep]': onnxruntime-openvino, in place of onnxruntime "
                        "(docs/providers.md)"}


def install_hint(provider: str) -> str:
    """What to install for ``provider`` (for the one-line error of an absent one)."""
    return _INSTALL.get(provider, "see docs/providers.md")


# onnxruntime's input type strings -> numpy dtypes
_ORT_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32,
    "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}


def _ml_dtype(name: str):
    return {"tensor(bfloat16)": ml_dtypes.bfloat16, "tensor(float8e4m3fn)": ml_dtypes.float8_e4m3fn,
            "tensor(float8e5m2)": ml_dtypes.float8_e5m2,
            "tensor(float8e8m0)": ml_dtypes.float8_e8m0fnu}.get(name)


def available_providers() -> list[str]:
    """Our short names (cpu, cuda, openvino) of the providers this onnxruntime build offers."""
    have = set(ort.get_available_providers())
    return [short for short, full in PROVIDERS.items() if full in have]


def session(model: str | os.PathLike | bytes, provider: str = "cpu", threads: int | None = None,
            optimize: bool = True, quiet: bool = False) -> ort.InferenceSession:
    """An InferenceSession on exactly one provider (``cpu``, ``cuda`` or ``openvino``), never a
    silent fallback (``openvino``: a node OpenVINO's provider cannot take fails the session);
    with onnxruntime's default graph optimizations (all), or none when ``optimize`` is False;
    ``quiet`` keeps onnxruntime's own error log off stderr (the caller reports the exception).

    onnxruntime's MatMulNBits fusion (DequantizeLinear of packed weights -> MatMul) keeps its
    int8 activations off (``accuracy_level`` 0): by default it quantizes the activations
    dynamically, ~5e-3 relative from the model, as OpenVINO's CPU plugin does by default."""
    if provider not in PROVIDERS:
        raise Ir2OnnxError(f"unknown provider '{provider}': choose {', '.join(PROVIDERS)}")
    full = PROVIDERS[provider]
    if full not in ort.get_available_providers():
        raise Ir2OnnxError(f"provider '{provider}' is not available in this onnxruntime "
                           f"({install_hint(provider)})")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4 if quiet else 3
    opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
    if threads:
        opts.intra_op_num_threads = threads
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if provider == "openvino":  # no node left to the CPU provider behind OpenVINO's back
        opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    model = model if isinstance(model, bytes) else os.fspath(model)
    sess = ort.InferenceSession(model, opts, providers=[(full, PROVIDER_OPTIONS.get(provider, {}))])
    if provider == "cuda" and sess.get_providers()[0] != full:
        raise Ir2OnnxError("onnxruntime could not start the CUDA provider (no GPU or no driver?)")
    return sess


def input_dtype(type_str: str):
    dtype = _ORT_TYPES.get(type_str) or _ml_dtype(type_str)
    if dtype is None:
        raise Ir2OnnxError(f"cannot make inputs of type {type_str}")
    return np.dtype(dtype)


def random_array(shape, dtype, rng: np.random.Generator) -> np.ndarray:
    """Values that exercise an op without overflow: normal floats, small integers, random bools."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = -8 if dtype.kind == "i" else 0
        return rng.integers(low, 9, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def parse_dims_arg(text: str) -> tuple[int, ...]:
    """``1,3,224,224`` (or ``1x3x224x224``) -> a tuple; ``""`` is a scalar."""
    parts = [p for p in re.split(r"[,x ]", text.strip()) if p]
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise Ir2OnnxError(f"bad shape '{text}': expected integers such as 1,3,224,224") from None
    if any(d < 0 for d in dims):
        raise Ir2OnnxError(f"bad shape '{text}': dims must be >= 0")
    problem = over_dims(dims, f"shape '{text}'")
    if problem:
        raise Ir2OnnxError(problem)
    return dims


def check_feed_request(given: dict, shapes: dict, seed: int) -> None:
    """What :func:`make_inputs` and ``check``'s feeds refuse up front: a negative seed, and an
    input given both as an array and as a shape that differs from the array's."""
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise Ir2OnnxError(f"the seed must be an integer >= 0, got {seed!r}")
    for name in set(given) & set(shapes):
        if tuple(np.shape(given[name])) != tuple(shapes[name]):
            raise Ir2OnnxError(f"input '{name}' is given as an array of shape {list(np.shape(given[name]))} "
                               f"and as shape {list(shapes[name])}: the array's shape is the input's shape")


def check_generated_size(name: str, shape, dtype) -> None:
    """Refuse to generate an input over :data:`MAX_GENERATED_BYTES` (by arithmetic, before any
    memory is taken)."""
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if nbytes > MAX_GENERATED_BYTES:
        raise Ir2OnnxError(f"input '{name}' of shape {list(shape)} would need {nbytes / 2**30:.1f} GiB, "
                           f"over the limit of {MAX_GENERATED_BYTES // 2**30} GiB per input; give "
                           f"smaller dims with --shape or a file with --input")


def make_inputs(sess: ort.InferenceSession, given: dict[str, np.ndarray] | None = None,
                shapes: dict[str, tuple[int, ...]] | None = None, seed: int = 0,
                hints: dict | None = None) -> dict[str, np.ndarray]:
    """Feeds for every session input: ``given`` arrays as they are, others generated
    (:mod:`ir2onnx.runtime.input_values`: indices within the table they index, per ``hints``, ones for
    masks ..., else random).

    A dynamic dim takes its value from ``shapes``, else from an input it is tied to
    (:func:`ir2onnx.runtime.input_values.shared_dims`), else 1.
    """
    given, shapes = dict(given or {}), dict(shapes or {})
    check_feed_request(given, shapes, seed)
    names = [i.name for i in sess.get_inputs()]
    known = {n: tuple(np.shape(v)) for n, v in given.items()}
    known.update({n: tuple(v) for n, v in shapes.items() if n not in known})
    tied = shared_dims({i.name: i.shape for i in sess.get_inputs()}, known)
    for name in list(given) + list(shapes):
        if name not in names:
            raise Ir2OnnxError(f"the model has no input '{name}' (inputs: {', '.join(names)})")
    rng = np.random.default_rng(seed)
    feeds = {}
    for info in sess.get_inputs():
        dtype = input_dtype(info.type)
        if info.name in given:
            arr = np.asarray(given[info.name])
            if arr.dtype != dtype:
                raise Ir2OnnxError(f"input '{info.name}' must be {dtype}, the file holds {arr.dtype}")
            if info.shape and len(arr.shape) != len(info.shape) or any(
                    isinstance(d, int) and d != s for d, s in zip(info.shape, arr.shape)):
                raise Ir2OnnxError(f"input '{info.name}' has shape {list(arr.shape)}, the model "
                                   f"expects {_dims_text(info.shape)}")
            feeds[info.name] = arr
            continue
        if info.name in shapes:
            shape = shapes[info.name]
            if len(shape) != len(info.shape) or any(isinstance(d, int) and d != s for d, s in zip(info.shape, shape)):
                raise Ir2OnnxError(f"--shape {info.name}={','.join(map(str, shape))} does not fit the "
                                   f"input's shape {info.shape}")
        elif info.name in tied:
            shape = tied[info.name]
        else:
            shape = tuple(d if isinstance(d, int) else 1 for d in info.shape)
        check_generated_size(info.name, shape, dtype)
        value, _ = generate(info.name, shape, dtype, rng, (hints or {}).get(info.name))
        feeds[info.name] = random_array(shape, dtype, rng) if value is None else value
    return feeds


def _dims_text(dims) -> str:
    """onnxruntime's input shape (ints, names or None) as ``[?,3]``."""
    return "[" + ",".join(str(d) if isinstance(d, int) else "?" for d in dims) + "]"


def ort_message(e: Exception) -> str:
    """onnxruntime's message on one line, without its ``[ONNXRuntimeError] : 2 : CODE :`` prefix
    (its useful part often comes after the first line break)."""
    text = " ".join(str(e).split())
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    return text[:500]


def _ml_onnx_types() -> dict:
    return {np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
            np.dtype(ml_dtypes.float8_e4m3fn): TensorProto.FLOAT8E4M3FN,
            np.dtype(ml_dtypes.float8_e5m2): TensorProto.FLOAT8E5M2,
            np.dtype(ml_dtypes.float8_e8m0fnu): TensorProto.FLOAT8E8M0}


def _ort_output(value, type_str: str) -> np.ndarray:
    """An output as numpy; f8 outputs come back as uint8 bits and are viewed as ml_dtypes."""
    try:
        array = value.numpy()
    except Exception:
        want = _ml_dtype(type_str)
        if want is None or not value.is_tensor() or value.device_name().lower() != "cpu":
            raise Ir2OnnxError(f"onnxruntime's Python API cannot return {type_str} outputs") from None
        # f8e5m2 has no numpy form there: copy the tensor's bytes (one byte per element)
        shape = value.shape()
        n = int(np.prod(shape, dtype=np.int64)) * np.dtype(want).itemsize
        raw = ctypes.string_at(value.data_ptr(), n) if n else b""
        return np.frombuffer(raw, np.dtype(want)).reshape(shape).copy()
    return _viewed(array, type_str)


def _viewed(array: np.ndarray, type_str: str) -> np.ndarray:
    want = _ml_dtype(type_str)
    return array.view(want) if want is not None and array.dtype != want else array


def run(sess: ort.InferenceSession, feeds: dict[str, np.ndarray],
        options: ort.RunOptions | None = None) -> dict[str, np.ndarray]:
    """Run and return ``{output name: array}`` in the model's output order (``options``: the
    RunOptions, e.g. one whose ``terminate`` another thread sets).

    bf16 and f8 arrays (ml_dtypes) are fed through OrtValues, which plain ``run`` cannot take.
    """
    names = [o.name for o in sess.get_outputs()]
    ml = _ml_onnx_types()
    try:
        types = {o.name: o.type for o in sess.get_outputs()}
        if not any(np.asarray(v).dtype in ml for v in feeds.values()) and not any(
                _ml_dtype(t) is not None for t in types.values()):
            return {n: _viewed(v, types[n]) for n, v in zip(names, sess.run(names, feeds, options))}
        values = sess.run_with_ort_values(names, _ort_feeds(feeds, ml), options)
        return {n: _ort_output(v, types[n]) for n, v in zip(names, values)}
    except Ir2OnnxError:
        raise
    except Exception as e:  # onnxruntime raises its own exception types for bad feeds
        raise Ir2OnnxError(f"onnxruntime failed: {ort_message(e)}") from None


def _ort_feeds(feeds: dict[str, np.ndarray], ml: dict) -> dict:
    ort_feeds = {}
    for k, v in feeds.items():
        v = np.asarray(v, order="C")
        ort_feeds[k] = (ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            v.view(np.uint16 if v.itemsize == 2 else np.uint8), ml[v.dtype])
            if v.dtype in ml else ort.OrtValue.ortvalue_from_numpy(v))
    return ort_feeds


def execute(sess: ort.InferenceSession, feeds: dict[str, np.ndarray],
            options: ort.RunOptions | None = None) -> None:
    """Run once and keep the outputs as onnxruntime's values (some, such as f8e5m2, have no
    numpy form in its Python API): for verification, where only the run matters."""
    names = [o.name for o in sess.get_outputs()]
    try:
        sess.run_with_ort_values(names, _ort_feeds(feeds, _ml_onnx_types()), options)
    except Exception as e:
        raise Ir2OnnxError(f"onnxruntime failed: {str(e).strip().splitlines()[0]}") from None


_ORT_MAX_OPSET: int | None = None


def ort_max_opset(upper: int) -> int:
    """The newest default-domain opset (<= ``upper``) the installed onnxruntime can load.

    onnxruntime has no API for it, so a one-node model is loaded per candidate (a few ms, cached).
    """
    global _ORT_MAX_OPSET
    if _ORT_MAX_OPSET is None:
        _ORT_MAX_OPSET = 0
        for opset in range(upper, 0, -1):
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
            g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [x], [y])
            ids = [helper.make_opsetid("", opset)]
            m = helper.make_model(g, opset_imports=ids, ir_version=helper.find_min_ir_version_for(ids))
            try:
                opts = ort.SessionOptions()
                opts.log_severity_level = 4
                ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
            except Exception:
                continue
            _ORT_MAX_OPSET = opset
            break
    return _ORT_MAX_OPSET
