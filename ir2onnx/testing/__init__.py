"""Helpers for tests and sample scripts: write IR files by hand, run IR and ONNX models.

:class:`IRWriter` writes small IR v11 files directly (for attributes OpenVINO's Python API
cannot express, such as DepthToSpace ``data_format``, and for deliberately broken files).
Real OpenVINO-written IR comes from ``openvino.save_model``; :func:`run_openvino` runs an IR on
OpenVINO's CPU plugin and :func:`run_onnx` converts an IR and runs it on onnxruntime.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
import onnx

from ..api import convert
from ..harness.check import check
from ..harness.report import format_text
from ..ir.element_types import element_type as _etype, from_numpy
from ..lowering.builder import pack
from ..runtime import sessions as runtime

_PRECISION = {"f32": "FP32", "f16": "FP16", "f64": "FP64", "boolean": "BOOL", "u1": "BIN"}


@dataclass(frozen=True)
class Ref:
    """An output port of a layer being written: what an input edge points at."""

    layer: int
    port: int
    etype: str
    shape: tuple | None


def _dims(shape) -> str:
    return "".join(f"<dim>{-1 if d is None else d}</dim>" for d in (shape or ()))


def _shape_attr(shape) -> str:
    if shape is None:
        return "..."
    return ",".join("?" if d is None else str(d) for d in shape)


def _attr_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(str(int(v)) if isinstance(v, (bool, np.integer, int)) else str(v) for v in value)
    return str(value)


class IRWriter:
    """Build an IR v11 model layer by layer and save it as .xml + .bin."""

    def __init__(self, name: str = "model", version: int = 11):
        self.name, self.version = name, version
        self.layers: list[str] = []
        self.edges: list[tuple[int, int, int, int]] = []
        self.bin = bytearray()
        self._next = 0

    def _id(self) -> int:
        self._next += 1
        return self._next - 1

    def _port(self, pid: int, etype: str, shape, names: str | None = None) -> str:
        prec = _PRECISION.get(etype, etype.upper())
        n = f" names={quoteattr(names)}" if names else ""
        return f'<port id="{pid}" precision="{prec}"{n}>{_dims(shape)}</port>'

    def parameter(self, shape, etype: str = "f32", name: str | None = None) -> Ref:
        lid = self._id()
        name = name or f"param{lid}"
        self.layers.append(
            f'<layer id="{lid}" name={quoteattr(name)} type="Parameter" version="opset1">'
            f'<data shape="{_shape_attr(shape)}" element_type="{etype}"/>'
            f"<output>{self._port(0, etype, shape, name)}</output></layer>")
        return Ref(lid, 0, etype, None if shape is None else tuple(shape))

    def const(self, array, etype: str | None = None, name: str | None = None) -> Ref:
        array = np.asarray(array)
        etype = etype or from_numpy(array.dtype).name
        lid = self._id()
        offset = len(self.bin)
        if _etype(etype).bits < 8:
            data = pack(array, _etype(etype)) if etype != "u1" else np.packbits(array.reshape(-1).astype(np.uint8)).tobytes()
        else:
            data = np.ascontiguousarray(array, dtype=_etype(etype).numpy).tobytes()
        self.bin += data
        self.layers.append(
            f'<layer id="{lid}" name={quoteattr(name or f"const{lid}")} type="Const" version="opset1">'
            f'<data element_type="{etype}" shape="{_shape_attr(array.shape)}" offset="{offset}" size="{len(data)}"/>'
            f"<output>{self._port(0, etype, array.shape)}</output></layer>")
        return Ref(lid, 0, etype, array.shape)

    def layer(self, op_type: str, version: str, inputs: list[Ref], attrs: dict | None = None,
              outputs: list[tuple[str, Any]] | None = None, name: str | None = None,
              out_names: list[str] | None = None) -> list[Ref]:
        """Add a layer; ``outputs`` lists (element type, shape) per output port."""
        lid = self._id()
        data = ""
        if attrs is not None:
            data = "<data " + " ".join(f"{k}={quoteattr(_attr_text(v))}" for k, v in attrs.items()) + "/>"
        ins = "".join(self._port(i, r.etype, r.shape) for i, r in enumerate(inputs))
        outputs = outputs or []
        outs = "".join(self._port(len(inputs) + j, et, sh, (out_names or [None] * len(outputs))[j])
                       for j, (et, sh) in enumerate(outputs))
        self.layers.append(
            f'<layer id="{lid}" name={quoteattr(name or f"{op_type}_{lid}")} type="{op_type}" version="{version}">'
            f"{data}<input>{ins}</input><output>{outs}</output></layer>")
        for i, r in enumerate(inputs):
            self.edges.append((r.layer, r.port, lid, i))
        return [Ref(lid, len(inputs) + j, et, None if sh is None else tuple(sh)) for j, (et, sh) in enumerate(outputs)]

    def result(self, ref: Ref, name: str | None = None) -> None:
        lid = self._id()
        self.layers.append(
            f'<layer id="{lid}" name={quoteattr(name or f"result{lid}")} type="Result" version="opset1">'
            f"<input>{self._port(0, ref.etype, ref.shape)}</input></layer>")
        self.edges.append((ref.layer, ref.port, lid, 0))

    def xml(self) -> str:
        edges = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                        for a, b, c, d in self.edges)
        return (f'<?xml version="1.0"?>\n<net name={quoteattr(self.name)} version="{self.version}">'
                f"<layers>{''.join(self.layers)}</layers><edges>{edges}</edges></net>\n")

    def save(self, xml_path: str | os.PathLike) -> Path:
        xml_path = Path(xml_path)
        xml_path.write_text(self.xml(), encoding="utf-8")
        xml_path.with_suffix(".bin").write_bytes(bytes(self.bin))
        return xml_path


def run_openvino(xml_path: str | os.PathLike, feeds: dict[str, np.ndarray] | list[np.ndarray]) -> list[np.ndarray]:
    """Run an IR on OpenVINO's CPU plugin (inference precision f32 and no dynamic quantization of
    activations, so results are exact)."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(xml_path))
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                 "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
    if isinstance(feeds, dict):
        feeds = [feeds[p.get_any_name()] if p.get_names() else None for p in model.inputs]
    result = compiled(list(feeds))
    return [np.asarray(result[o]) for o in compiled.outputs]


def run_onnx(xml_path: str | os.PathLike, feeds: dict[str, np.ndarray] | list[np.ndarray],
             opset: int | None = None, provider: str = "cpu") -> list[np.ndarray]:
    """Convert an IR (in memory, checked with full_check) and run it on onnxruntime."""
    model = convert(xml_path, opset=opset, verify=False)  # the session below verifies
    onnx.checker.check_model(model, full_check=True)
    sess = runtime.session(model.SerializeToString(), provider)
    if not isinstance(feeds, dict):
        feeds = {i.name: v for i, v in zip(sess.get_inputs(), feeds)}
    return list(runtime.run(sess, feeds).values())


def assert_bitexact(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """Same shape, same dtype and the same bytes (NaNs included): for data-movement ops."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what} shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what} dtype {actual.dtype} != {expected.dtype}"
    assert actual.tobytes() == expected.tobytes(), f"{what} values differ"


def openvino_available() -> bool:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def assert_check(xml_path, weights=None, *, require=("ort:cpu", "oracle", "openvino"), **kwargs):
    """Run :func:`ir2onnx.check` and fail the test, with the full report, unless every pair of
    backends agrees and every backend in ``require`` ran. ``kwargs`` go to ``check`` (inputs,
    shapes, providers, rtol, atol, bitexact ...). Returns the :class:`~ir2onnx.harness.check.CheckResult`."""
    result = check(xml_path, weights, **kwargs)
    ran = {b.name for b in result.backends if b.status == "ok"}
    missing = [name for name in require if name not in ran]
    assert result.ok and not missing, (
        f"check of {xml_path} failed" + (f" (did not run: {', '.join(missing)})" if missing else "")
        + ":\n" + format_text(result))
    return result


def ov_parameter(shape, dtype=np.float32, name: str = "x"):
    """An OpenVINO Parameter (``None`` dims dynamic) whose tensor is named ``name``."""
    import openvino as ov
    import openvino.opset15 as ops

    p = ops.parameter(ov.PartialShape([-1 if d is None else d for d in shape]), dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def ov_save(path: str | os.PathLike, outputs, params, *, compress_to_fp16: bool = False) -> Path:
    """Save an OpenVINO model of ``outputs`` (nodes or outputs, one or a list) as IR at ``path``."""
    import openvino as ov
    import openvino.opset15 as ops

    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    path = Path(path)
    model = ov.Model([ops.result(o) for o in outputs], list(params), path.stem)
    ov.save_model(model, str(path), compress_to_fp16=compress_to_fp16)
    return path


def ov_compressed_weight(shape, etype: str = "u4", group: int | None = None, *, zero_point="int",
                         scale_dtype=np.float16, to_f32: bool = True, seed: int = 0, e8m0_scale: bool = False):
    """An OpenVINO weight-compression chain as NNCF writes it, returning its output node:
    Const(etype) -> Convert -> [Subtract(zero point)] -> Multiply(scale) -> [Reshape] -> [Convert f32]
    (``etype`` u8/i8/u4/i4, or f8e4m3/f8e5m2/nf4/f4e2m1 with ``zero_point=None``; nf4/f4e2m1
    hold random 4-bit codes, packed low nibble first).

    ``shape`` is the weight's ``[N, K, ...]``; ``group`` splits axis 1 into ``[K/group, group]``
    groups with one scale each (then a Reshape back), else the scale is per output channel
    ``[N, 1, ...]``. ``zero_point``: "int" (a Const of ``etype`` -> Convert), "float" (a float
    Const holding integers), "scalar" (one integer Const), or None. ``e8m0_scale``: the scales are
    powers of two in an f8e8m0 Const -> Convert(``scale_dtype``), as NNCF's MXFP4 writes them."""
    import openvino as ov
    import openvino.opset15 as ops

    rng = np.random.default_rng(seed)
    lo, hi = {"u8": (0, 255), "i8": (-128, 127), "u4": (0, 15), "i4": (-8, 7)}.get(etype, (-8, 7))
    n, k, rest = shape[0], shape[1], tuple(shape[2:])
    wshape = (n, k // group, group, *rest) if group else tuple(shape)
    sshape = (n, k // group, 1, *(1 for _ in rest)) if group else (n, *(1 for _ in shape[1:]))
    store = np.int8 if etype[0] == "i" else np.uint8
    ov_type = getattr(ov.Type, etype)
    if etype in ("nf4", "f4e2m1"):
        codes = rng.integers(0, 16, int(np.prod(wshape))).astype(np.uint8)
        const = _ov_packed(ov, ops, ov_type, wshape, codes[0::2] | codes[1::2] << 4)
    else:
        values = rng.integers(lo, hi + 1, wshape).astype(store) if etype[0] in "iu" \
            else (rng.standard_normal(wshape) * 4).astype(np.float32)  # f8e4m3 / f8e5m2: rounded by OpenVINO
        const = ops.constant(values, dtype=ov_type)
    w = ops.convert(const, scale_dtype)
    zp = rng.integers(lo, hi + 1, sshape)
    if zero_point == "int":
        w = ops.subtract(w, ops.convert(ops.constant(zp.astype(store), dtype=ov_type), scale_dtype))
    elif zero_point == "float":
        w = ops.subtract(w, ops.constant(zp.astype(scale_dtype)))
    elif zero_point == "scalar":
        w = ops.subtract(w, ops.convert(ops.constant(np.array(zp.flat[0], store), dtype=ov_type), scale_dtype))
    if e8m0_scale:  # biased exponents: 2**-9 .. 2**-3
        exponents = rng.integers(127 - 9, 127 - 2, sshape).astype(np.uint8).reshape(-1)
        w = ops.multiply(w, ops.convert(_ov_packed(ov, ops, ov.Type.f8e8m0, sshape, exponents), scale_dtype))
    else:
        w = ops.multiply(w, ops.constant((rng.random(sshape) * 0.02 + 0.002).astype(scale_dtype)))
    if group:
        w = ops.reshape(w, ops.constant(np.array(shape, np.int64)), False)
    return ops.convert(w, np.float32) if to_f32 and scale_dtype != np.float32 else w


def _ov_packed(ov, ops, ov_type, shape, raw: np.ndarray):
    """An OpenVINO Const of ``ov_type`` whose storage bytes are ``raw`` (uint8)."""
    tensor = ov.Tensor(ov_type, ov.Shape(list(shape)))
    np.copyto(tensor.data.view(np.uint8).reshape(-1), raw)
    return ops.constant(tensor)
