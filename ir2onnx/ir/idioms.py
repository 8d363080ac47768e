"""Two-layer idioms whose meaning OpenVINO's frontends split over both layers.

OpenVINO's frontends write integer division as Divide-1 with ``m_pythondiv=true`` (the default of
the C++ constructor) and rely on its runtime, which truncates toward zero: ONNX ``Div`` and
PyTorch ``div(rounding_mode="trunc")`` both become a bare Divide, and onnxruntime / torch
truncate. PyTorch's ``//`` and ``rounding_mode="floor"`` become ``Floor(Divide(m_pythondiv=true))``:
the Floor says "floor division", which it cannot compute from an already divided integer. So the
Floor's lowering and oracle also see the Divide's two operands, and floor-divide them when they
are integers (docs/deviations.md).
"""
from __future__ import annotations

from .graph import Graph, Layer, Source


def extra_sources(graph: Graph, layer: Layer) -> tuple[Source, ...]:
    """Sources that ``layer``'s lowering and oracle receive after its own inputs: for Floor-1 fed
    by Divide-1 with ``m_pythondiv=true``, the Divide's two operands; otherwise none."""
    if layer.key != ("Floor", "opset1") or not layer.sources:
        return ()
    src, port = graph.producer(layer, 0)
    if src.key == ("Divide", "opset1") and port == 0 and bool(src.attrs.get("m_pythondiv", True)):
        return tuple(src.sources)
    return ()
