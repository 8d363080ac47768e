"""Helpers shared by the DepthToSpace / SpaceToDepth tests: IR writing, input data, node types."""
from __future__ import annotations

import numpy as np

from ir2onnx.api import convert
from ir2onnx.ir.element_types import TYPES
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.registry import oracle_for
from ir2onnx.testing import IRWriter

OPS = {"DepthToSpace", "SpaceToDepth"}


def write_ir(path, op, shape, attrs, etype="f32", dynamic=(), out_shape=None, layer_name="under_test"):
    """x -> op -> y with IRWriter; the axes in ``dynamic`` are ``?`` in the IR (input and output:
    every layout keeps each axis at its index)."""
    w = IRWriter(op.lower())
    x = w.parameter(None if shape is None else [None if i in dynamic else d for i, d in enumerate(shape)],
                    etype, "x")
    if out_shape is not None:
        out_shape = [None if i in dynamic else d for i, d in enumerate(out_shape)]
    (y,) = w.layer(op, "opset1", [x], attrs, [(etype, out_shape)], name=layer_name, out_names=["y"])
    w.result(y, "y")
    return w.save(path)


def data(shape, etype: str, seed: int = 0) -> np.ndarray:
    """Values that show any misplaced element: distinct where the type allows, with NaNs of
    different payloads, -0.0 and infinities for the float types (data movement keeps every bit)."""
    rng = np.random.default_rng(seed)
    dtype = TYPES[etype].numpy
    n = int(np.prod(shape))
    if etype == "boolean":
        return rng.random(shape) < 0.5
    if TYPES[etype].is_integer:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    x = (rng.permutation(n) - n // 2).astype(dtype)
    bits = x.view(np.uint16 if dtype == np.float16 else np.uint32 if dtype == np.float32 else np.uint64)
    nans = {np.float16: [0x7E01, 0xFE3F], np.float32: [0x7FC00123, 0xFFA00001],
            np.float64: [0x7FF8000000000321, 0xFFF0000000000001]}[dtype.type]
    specials = nans + [bits.dtype.type(1) << (bits.itemsize * 8 - 1)]  # -0.0
    for i, v in enumerate(specials[:n]):
        bits[(i * 7919) % n] = v
    if n > len(specials):
        x[(n * 3) // 5] = np.inf
    return x.reshape(shape)


def ov_safe(x: np.ndarray) -> np.ndarray:
    """``x`` with 64-bit integers brought into the int32 range: OpenVINO's CPU plugin computes
    i64 tensors as i32 (it would truncate the full-range values)."""
    return x >> 33 if x.dtype == np.int64 else x


def oracle(xml, x):
    """The oracle's output for the one DepthToSpace / SpaceToDepth layer of ``xml``."""
    layer = next(l for l in load_ir(xml).order if l.type in OPS)
    return oracle_for(layer.type, layer.version)(layer, [x])[0]


def node_types(xml, opset: int = 17) -> list[str]:
    return [n.op_type for n in convert(xml, opset=opset).graph.node]


def path(types: list[str]) -> str:
    """Which lowering a converted model took: 'onnx' (the ONNX operator), 'gather' ([Transpose ->]
    Reshape -> Gather of rows), 'chain' (Reshape -> Transpose -> Reshape), 'chain2' (two
    Transposes), 'reshape' (no element moves) or 'identity'."""
    if OPS & set(types):
        assert "Transpose" not in types and "Gather" not in types, types
        return "onnx"
    if "Gather" in types:
        return "gather"
    if "Transpose" in types:
        return "chain" if types.count("Transpose") == 1 else "chain2"
    return "reshape" if "Reshape" in types else "identity"
