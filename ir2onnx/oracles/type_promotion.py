"""Oracle of ConvertPromoteTypes-14 from the spec's promotion rules, read as a decision list over
(kind, signedness, bits) of the two input types, then a numpy ``astype`` of both inputs (integer
to float rounds to nearest; integer to integer keeps the low bits)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..ir.element_types import element_type, from_numpy
from .registry import oracle


def _kind(t) -> tuple[str, bool, int]:
    """('bool' | 'float' | 'int', signed, bits)."""
    if t.name == "boolean":
        return "bool", False, 8
    if t.name.startswith(("f", "bf")):
        return "float", True, t.bits
    return "int", t.name.startswith("i"), t.bits


def promoted(layer, t0, t1, scalar0: bool, scalar1: bool):
    unsafe = bool(layer.attrs.get("promote_unsafe", False))
    pytorch = bool(layer.attrs.get("pytorch_scalar_promotion", False))
    (k0, s0, b0), (k1, s1, b1) = _kind(t0), _kind(t1)
    if t0 == t1 or k1 == "bool":
        return t0
    if k0 == "bool":
        return t1
    if k0 != k1:  # float with integer
        f, fb, ib = (t0, b0, b1) if k0 == "float" else (t1, b1, b0)
        if unsafe or fb >= 2 * ib:
            return f
        raise InvalidLayer(layer, "integer to float is not safe")
    if pytorch and scalar0 != scalar1:  # the tensor's type wins over the scalar's
        (tt, ts, tb), (ss, sb) = ((t1, s1, b1), (s0, b0)) if scalar0 else ((t0, s0, b0), (s1, b1))
        safe = (ts == ss and tb >= sb) or (ts and not ss and 2 * tb >= sb)
        if unsafe or safe:
            return tt
        raise InvalidLayer(layer, "the scalar does not fit the tensor's type")
    if s0 != s1:  # signed with unsigned integers
        ub, sb = (b1, b0) if s0 else (b0, b1)
        if ub <= 32 and (unsafe or sb >= 2 * ub):
            return element_type("i" + str(max(2 * ub, sb)))
        if unsafe:
            target = layer.attrs.get("u64_integer_promotion_target") or "f32"
            return element_type(target) if isinstance(target, str) else target
        raise InvalidLayer(layer, "no signed integer holds the unsigned input")
    if b0 != b1:
        return t0 if b0 > b1 else t1
    if unsafe and sorted([t0.name, t1.name]) == ["f8e4m3", "f8e5m2"]:
        return element_type("f16")
    if unsafe and sorted([t0.name, t1.name]) == ["bf16", "f16"]:
        return element_type("f32")
    raise InvalidLayer(layer, f"no promotion of {t0.name} and {t1.name}")


@oracle("ConvertPromoteTypes", "opset14")
def convert_promote_types14(layer, inputs):
    a, b = (np.asarray(x) for x in inputs)
    target = promoted(layer, from_numpy(a.dtype), from_numpy(b.dtype), a.ndim == 0, b.ndim == 0)
    return [a.astype(target.numpy), b.astype(target.numpy)]
