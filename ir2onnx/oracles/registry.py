"""The oracle table: a NumPy reference per exact ``(type, version)``, written from the op's spec.

An oracle has the signature ``fn(layer, inputs) -> list[np.ndarray]``: ``layer`` is the IR
:class:`~ir2onnx.ir.graph.Layer` (typed ``layer.attrs``), ``inputs`` the numpy value of each input
port. Oracles know nothing of ONNX or of the lowerings.
"""
from __future__ import annotations

from typing import Callable

Oracle = Callable[..., list]
ORACLES: dict[tuple[str, str], Oracle] = {}


def oracle(op_type: str, version: str) -> Callable[[Oracle], Oracle]:
    """Register the decorated function as the oracle of ``(op_type, version)``."""

    def register(fn: Oracle) -> Oracle:
        key = (op_type, version)
        if key in ORACLES:
            raise RuntimeError(f"two oracles registered for {op_type}-{version}")
        ORACLES[key] = fn
        return fn

    return register


def oracle_for(op_type: str, version: str) -> Oracle | None:
    """The oracle of ``(op_type, version)``, or None (the package's list fills the table)."""
    return ORACLES.get((op_type, version))
