"""Helpers shared by the BatchToSpace / SpaceToBatch tests: IR written by OpenVINO or by
IRWriter, and runners for onnxruntime and OpenVINO that also move bf16 bit for bit."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto

from ir2onnx.api import convert
from ir2onnx.oracles.registry import oracle_for
from ir2onnx.testing import IRWriter

BF16 = np.dtype(ml_dtypes.bfloat16)
TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": BF16, "i8": np.int8, "u8": np.uint8,
         "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
         "boolean": np.bool_}
OPS = {"b2s": ("BatchToSpace", ("block_shape", "crops_begin", "crops_end")),
       "s2b": ("SpaceToBatch", ("block_shape", "pads_begin", "pads_end"))}


def data(shape, dtype, seed: int = 0) -> np.ndarray:
    """Distinct-looking values of ``dtype`` (floats with a NaN and a -0.0 when there is room)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    if flat.size >= 3:
        flat[1], flat[2] = np.nan, -0.0
    return x.astype(dtype)


def ov_ir(path: Path, op: str, shape, B, lo, hi, *, etype: str = "f32", idx=np.int64,
          dynamic_batch: bool = False, runtime: bool = False) -> Path:
    """An IR written by OpenVINO: data -> op -> y. ``runtime``: block/crops/pads are Parameters."""
    import openvino as ov
    import openvino.opset15 as ops

    pshape = [-1 if dynamic_batch and i == 0 else d for i, d in enumerate(shape)]
    x = ops.parameter(pshape, getattr(ov.Type, etype), name="data")
    params = [x]
    if runtime:
        vecs = [ops.parameter([len(shape)], ov.Type(np.dtype(idx)), name=n) for n in OPS[op][1]]
        params += vecs
    else:
        vecs = [ops.constant(np.array(v, idx)) for v in (B, lo, hi)]
    node = (ops.batch_to_space if op == "b2s" else ops.space_to_batch)(x, *vecs)
    node.output(0).get_tensor().set_names({"y"})
    ov.save_model(ov.Model([node], params), path, compress_to_fp16=False)
    return Path(path)


def writer_ir(path: Path, op: str, shape, B, lo, hi, out_shape=None, *, etype: str = "f32",
              idx=(np.int64, np.int64, np.int64), runtime: bool = False, data_shape="static") -> Path:
    """An IR written by IRWriter (values OpenVINO refuses, mixed index types, bf16 ...);
    ``data_shape`` overrides the Parameter's declared shape (None: dynamic rank)."""
    w = IRWriter(op)
    x = w.parameter(list(shape) if data_shape == "static" else data_shape, etype, "data")
    if runtime:
        vecs = [w.parameter([len(v)], np.dtype(t).name.replace("int", "i"), n)
                for v, t, n in zip((B, lo, hi), idx, OPS[op][1])]
    else:
        vecs = [w.const(np.array(v, t)) for v, t in zip((B, lo, hi), idx)]
    out_shape = out_shape if out_shape is not None else [None] * len(shape)
    y = w.layer(OPS[op][0], "opset2", [x, *vecs], None, [(etype, out_shape)], out_names=["y"])[0]
    w.result(y)
    return w.save(path)


def oracle(op: str, x, B, lo, hi) -> np.ndarray:
    fn = oracle_for(OPS[op][0], "opset2")
    return fn(None, [x, np.array(B, np.int64), np.array(lo, np.int64), np.array(hi, np.int64)])[0]


def _ort_feed(a: np.ndarray):
    if a.dtype == BF16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint16), TensorProto.BFLOAT16)
    return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(a))


def run_ort(xml: Path, feeds: list[np.ndarray], out_like: np.ndarray | None = None, opset: int = 17) -> np.ndarray:
    """Convert (checked with full_check), run on onnxruntime and return the output's bytes as
    numpy; bf16 goes through OrtValues (``out_like`` gives the bf16 output's shape)."""
    model = convert(xml, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    if all(f.dtype != BF16 for f in feeds) and (out_like is None or out_like.dtype != BF16):
        return sess.run(None, dict(zip(names, feeds)))[0]
    binding = sess.io_binding()
    for n, f in zip(names, feeds):
        binding.bind_ortvalue_input(n, _ort_feed(f))
    out = np.empty(out_like.shape, np.uint16)
    binding.bind_ortvalue_output(sess.get_outputs()[0].name, _ort_feed(out.view(BF16)))
    sess.run_with_iobinding(binding)
    return out.view(BF16)


def run_ov(xml: Path, feeds: list[np.ndarray]) -> np.ndarray:
    """Run on OpenVINO's CPU plugin (f32 inference precision); bf16 is moved as raw bits."""
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    tensors = []
    for f in feeds:
        if f.dtype == BF16:
            t = ov.Tensor(ov.Type.bf16, list(f.shape))
            t.data.view(np.uint16)[...] = f.view(np.uint16)
            tensors.append(t)
        else:
            tensors.append(np.ascontiguousarray(f))
    out = np.array(compiled(tensors)[compiled.outputs[0]])
    return out.view(np.uint16).view(BF16) if feeds[0].dtype == BF16 else out


def test_oracle_reproduces_worked_example_1_by_hand():
    """The spec's first example, every value derived by hand from the element-wise definition
    (z = y + 2, o = z % 5, d = z // 5, b = o * 2 + n; data[b, d] = 2 * b + d)."""
    x = np.arange(20, dtype=np.int32).reshape(10, 2)
    y = oracle("b2s", x, [1, 5], [0, 2], [0, 0])
    assert y.tolist() == [[8, 12, 16, 1, 5, 9, 13, 17], [10, 14, 18, 3, 7, 11, 15, 19]]


def test_space_to_batch_oracle_by_hand():
    """SpaceToBatch of [1, 3] by block [1, 2] with pads [0, 1] / [0, 0]: padded row [0, a, b, c];
    block offset 0 takes [0, b], offset 1 takes [a, c]."""
    y = oracle("s2b", np.array([[7, 8, 9]], np.int16), [1, 2], [0, 1], [0, 0])
    assert y.dtype == np.int16 and y.tolist() == [[0, 8], [7, 9]]
