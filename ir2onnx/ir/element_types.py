"""IR element types and their numpy and ONNX counterparts.

One table, :data:`TYPES`, keyed by the IR's ``element_type`` spelling. Sub-byte types (u1, u4,
i4, nf4, f4e2m1) are packed in the .bin: :func:`unpack` turns their bytes into one numpy element
per value (u1 most significant bit first, 4-bit types low nibble first, as OpenVINO writes them).
nf4 (NormalFloat4) has no numpy or ONNX type: each 4-bit code is read as the f32 value of
OpenVINO's 16-entry table :data:`NF4_VALUES`.
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from onnx import TensorProto

from ..errors import IRFormatError


@dataclass(frozen=True)
class ElementType:
    """One IR element type: its name, storage bits and numpy / ONNX counterparts."""

    name: str
    bits: int
    numpy: np.dtype | None  # None: no numpy dtype (string)
    onnx: int | None  # TensorProto.DataType, None: ONNX has no such type
    min_opset: int = 1  # first ONNX opset whose Cast accepts the type

    @property
    def is_float(self) -> bool:
        return self.numpy is not None and self.name.startswith(("f", "bf", "nf"))

    @property
    def is_integer(self) -> bool:
        return self.name[0] in "iu"

    def nbytes(self, count: int) -> int:
        """Bytes that ``count`` packed elements take in the .bin."""
        return (count * self.bits + 7) // 8


def _t(name, bits, np_type, onnx_type, min_opset=1):
    dtype = np.dtype(np_type) if np_type is not None else None
    return ElementType(name, bits, dtype, onnx_type, min_opset)


TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (
        _t("f64", 64, np.float64, TensorProto.DOUBLE),
        _t("f32", 32, np.float32, TensorProto.FLOAT),
        _t("f16", 16, np.float16, TensorProto.FLOAT16),
        _t("bf16", 16, ml_dtypes.bfloat16, TensorProto.BFLOAT16, 13),
        _t("f8e4m3", 8, ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN, 19),
        _t("f8e5m2", 8, ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, 19),
        _t("f8e8m0", 8, ml_dtypes.float8_e8m0fnu, TensorProto.FLOAT8E8M0, 24),
        _t("f4e2m1", 4, ml_dtypes.float4_e2m1fn, TensorProto.FLOAT4E2M1, 23),
        _t("nf4", 4, np.float32, None),  # codes read as NF4_VALUES
        _t("i64", 64, np.int64, TensorProto.INT64),
        _t("i32", 32, np.int32, TensorProto.INT32),
        _t("i16", 16, np.int16, TensorProto.INT16),
        _t("i8", 8, np.int8, TensorProto.INT8),
        _t("i4", 4, ml_dtypes.int4, TensorProto.INT4, 21),
        _t("u64", 64, np.uint64, TensorProto.UINT64),
        _t("u32", 32, np.uint32, TensorProto.UINT32),
        _t("u16", 16, np.uint16, TensorProto.UINT16),
        _t("u8", 8, np.uint8, TensorProto.UINT8),
        _t("u4", 4, ml_dtypes.uint4, TensorProto.UINT4, 21),
        _t("u2", 2, ml_dtypes.uint2, TensorProto.UINT2, 25),
        _t("u1", 1, np.uint8, None),
        _t("boolean", 8, np.bool_, TensorProto.BOOL),
        _t("string", 0, None, None),
    )
}

# nf4 code -> value: OpenVINO's table (src/core/src/type/nf4.cpp, the NormalFloat4 levels of
# bitsandbytes), exact f32 values.
NF4_VALUES = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0], np.float32)

# Port `precision` spellings and older aliases, mapped to the element_type names above.
ALIASES = {
    "fp64": "f64", "fp32": "f32", "fp16": "f16", "bool": "boolean", "bin": "u1",
    "f8e4m3fn": "f8e4m3",
}

_BY_NUMPY = {t.numpy: t for t in TYPES.values() if t.numpy is not None and t.name not in ("u1", "nf4")}
_BY_ONNX = {t.onnx: t for t in TYPES.values() if t.onnx is not None}


def element_type(name: str) -> ElementType:
    """The :class:`ElementType` for an IR spelling (``f32``, ``FP32``, ``boolean`` ...)."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    try:
        return TYPES[key]
    except KeyError:
        raise IRFormatError(f"unknown element type '{name}'") from None


def from_numpy(dtype) -> ElementType:
    """The IR element type of a numpy dtype."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise IRFormatError(f"numpy dtype {dtype} has no IR element type") from None


def from_onnx(onnx_type: int) -> ElementType:
    """The IR element type of an ONNX TensorProto data type."""
    return _BY_ONNX[onnx_type]


def unpack(raw: np.ndarray, etype: ElementType, count: int) -> np.ndarray:
    """Turn the .bin bytes ``raw`` (uint8) of ``count`` elements into a flat numpy array."""
    if etype.bits >= 8:
        return raw.view(etype.numpy)[:count]
    if etype.bits == 4:
        low, high = raw & 0x0F, raw >> 4
        nibbles = np.stack([low, high], axis=-1).reshape(-1)[:count]
        if etype.name == "i4":
            return (nibbles.astype(np.int8) ^ 8) - 8  # sign-extend 4 bits
        if etype.name == "nf4":
            return NF4_VALUES[nibbles]
        if etype.name == "f4e2m1":  # ml_dtypes keeps one 4-bit code per byte: reinterpret the codes
            return nibbles.astype(np.uint8).view(etype.numpy)
        return nibbles.astype(etype.numpy)
    if etype.bits == 2:
        parts = np.stack([(raw >> s) & 3 for s in (0, 2, 4, 6)], axis=-1).reshape(-1)[:count]
        return parts.astype(np.uint8)
    if etype.bits == 1:
        return np.unpackbits(raw, bitorder="big")[:count]
    raise IRFormatError(f"element type {etype.name} cannot be read")
