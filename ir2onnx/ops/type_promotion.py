"""ConvertPromoteTypes-14: both inputs converted to one common element type, chosen at conversion
time by the spec's promotion rules (they depend on the element types, on which input is a
static scalar and on the attributes only, never on values):

* equal types: that type; boolean with anything: the other type;
* float and integer: the float (safe mode: only when its bits are at least twice the integer's);
* same kind, ``pytorch_scalar_promotion`` and exactly one input a static 0-d tensor: the other
  input's type (safe mode: only when it holds the scalar's range);
* signed and unsigned integers: the signed integer of ``max(2 * unsigned bits, signed bits)``
  (unsigned up to 32 bits; safe mode: only when the signed type is that wide already), else
  ``u64_integer_promotion_target`` (unsafe mode only);
* same kind and signedness: the wider type; unsafe mode: f16 with bf16 -> f32, f8e4m3 with
  f8e5m2 -> f16.

Anything else is an invalid layer, as the spec says. Each output is a ``Cast`` to the common type
(or the input itself when it has that type already); a common type that disagrees with the
declared output port is refused.
"""
from __future__ import annotations

from ..errors import InvalidLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers

_F8, _F16 = ("f8e4m3", "f8e5m2"), ("f16", "bf16")


def _float(t) -> bool:
    return t.name.startswith(("f", "bf"))


def _signed(t) -> bool:
    return _float(t) or t.name.startswith("i")


def common_type(layer, t0, t1, scalar0: bool, scalar1: bool):
    """The element type both inputs are converted to; InvalidLayer where the rules give none."""
    unsafe = bool(layer.attrs.get("promote_unsafe", False))
    pytorch = bool(layer.attrs.get("pytorch_scalar_promotion", False))
    if t0 == t1:
        return t0
    if t0.name == "boolean" or t1.name == "boolean":
        return t1 if t0.name == "boolean" else t0
    if _float(t0) != _float(t1):
        real, integer = (t0, t1) if _float(t0) else (t1, t0)
        if unsafe or real.bits >= 2 * integer.bits:
            return real
        raise InvalidLayer(layer, f"{integer.name} cannot be safely promoted to {real.name} (promote_unsafe=false)")
    if pytorch and scalar0 != scalar1:
        target, scalar = (t1, t0) if scalar0 else (t0, t1)
        if unsafe or (_signed(target) == _signed(scalar) and target.bits >= scalar.bits) or (
                _signed(target) and not _signed(scalar) and 2 * target.bits >= scalar.bits):
            return target
        raise InvalidLayer(layer, f"the scalar's {scalar.name} cannot be safely promoted to {target.name}")
    if _signed(t0) != _signed(t1):
        unsigned, signed = (t1, t0) if _signed(t0) else (t0, t1)
        if unsigned.bits <= 32 and (unsafe or 2 * unsigned.bits <= signed.bits):
            return element_type(f"i{max(2 * unsigned.bits, signed.bits)}")
        if not unsafe:
            raise InvalidLayer(layer, f"{unsigned.name} cannot be safely promoted to a signed integer")
        target = layer.attrs.get("u64_integer_promotion_target") or "f32"
        return element_type(target) if isinstance(target, str) else target
    if t0.bits != t1.bits:
        return t0 if t0.bits > t1.bits else t1
    if unsafe and {t0.name, t1.name} == set(_F8):
        return element_type("f16")
    if unsafe and {t0.name, t1.name} == set(_F16):
        return element_type("f32")
    raise InvalidLayer(layer, f"no common type for {t0.name} and {t1.name} with these attributes")


@lowers("ConvertPromoteTypes", "opset14")
def convert_promote_types14(ctx, layer, inputs):
    """ConvertPromoteTypes-14 -> Cast, Cast (the common type fixed at conversion time; an input
    already of that type passes through)."""
    a, b = inputs
    if a.etype is None or b.etype is None:
        raise InvalidLayer(layer, "ConvertPromoteTypes needs inputs of known element types")
    target = common_type(layer, a.etype, b.etype, a.shape == (), b.shape == ())
    for port in layer.outputs[:2]:
        if port.etype is not None and port.etype.name != "dynamic" and port.etype != target:
            raise InvalidLayer(layer, f"the output is declared {port.etype.name}; the promotion rules give "
                                      f"{target.name}")
    to = ctx.onnx_type(layer, target)
    out = []
    for x in (a, b):
        ctx.onnx_type(layer, x.etype)
        out.append(x if x.etype == target else Value(ctx.b, target, x.shape, name=ctx.b.Cast(x, to=to)))
    return out
