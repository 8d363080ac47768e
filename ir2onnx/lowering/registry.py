"""The lowering table: one function per exact ``(type, version)`` of the IR XML.

A lowering has the signature ``fn(ctx, layer, inputs) -> outputs``: ``ctx`` is the
:class:`~ir2onnx.lowering.convert.Context` (``ctx.b`` is the Builder), ``inputs`` the
:class:`~ir2onnx.lowering.builder.Value` of each input port, and the result holds one entry per
output port: a Value, an ONNX tensor name (type and shape then come from the IR port), or a
numpy array (a value folded at convert time).
"""
from __future__ import annotations

from typing import Callable

Lowering = Callable[..., list]
LOWERINGS: dict[tuple[str, str], Lowering] = {}


def lowers(op_type: str, version: str) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the lowering of ``(op_type, version)``."""

    def register(fn: Lowering) -> Lowering:
        key = (op_type, version)
        if key in LOWERINGS:
            raise RuntimeError(f"two lowerings registered for {op_type}-{version}: "
                               f"{LOWERINGS[key].__module__} and {fn.__module__}")
        LOWERINGS[key] = fn
        return fn

    return register


def lowering_for(op_type: str, version: str) -> Lowering | None:
    """The lowering of ``(op_type, version)``, or None. This module imports no op module: the one
    that needs the table filled (the converter, the support table, the selftest) imports
    :mod:`ir2onnx.ops`."""
    return LOWERINGS.get((op_type, version))


def supported() -> list[tuple[str, str]]:
    """Every registered ``(type, version)``, sorted by type, then version number (opset8 < opset14)."""

    def key(pair: tuple[str, str]):
        digits = "".join(ch for ch in pair[1] if ch.isdigit())
        return (pair[0], int(digits) if digits else -1, pair[1])

    return sorted(LOWERINGS, key=key)
