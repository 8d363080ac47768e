"""Sub-graphs of If-8, Loop-5 and TensorIterator-1: ``<body>``/``<then_body>``/``<else_body>``,
their ``<port_map>`` rules and ``<back_edges>``, checked as strictly as the top level.

A body is a ``<layers>`` + ``<edges>`` network of its own (layer ids are local to it); the port
map ties an outer input port to a body Parameter (sliced along ``axis`` when it is given, or fed
the iteration number when ``purpose="current_iteration"``) and a body Result to an outer output
port (the last iteration's value, or every iteration's concatenated along ``axis``).
"""
from __future__ import annotations

from typing import Callable

from ..errors import InvalidLayer, IRFormatError
from .graph import Body, Graph, Layer, PortMapEntry

# layer type -> (body tag, port map tag) pairs it must have
BODY_TAGS = {
    "If": (("then_body", "then_port_map"), ("else_body", "else_port_map")),
    "Loop": (("body", "port_map"),),
    "TensorIterator": (("body", "port_map"),),
}
_ALL_TAGS = {"body", "then_body", "else_body"}
_PURPOSES = {"input": {"current_iteration"}, "output": {"execution_condition"}}


def _int(elem, name: str, where: str, default: int | None = None) -> int | None:
    text = elem.get(name)
    if text is None:
        if default is None:
            raise IRFormatError(f"{where}: a port map rule has no {name}")
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise IRFormatError(f"{where}: port map {name} '{text}' is not an integer") from None


def parse_bodies(elem, layer: Layer, build: Callable[[object, str], Graph]) -> dict[str, Body]:
    """The bodies of ``layer`` (``build(body_elem, name)`` reads one network into a Graph)."""
    present = [t for t in _ALL_TAGS if elem.find(t) is not None]
    tags = BODY_TAGS.get(layer.type)
    if tags is None:
        if present:
            raise InvalidLayer(layer, f"has a <{present[0]}>, but {layer.type} takes no sub-graph")
        return {}
    bodies = {}
    for body_tag, map_tag in tags:
        body_elem, map_elem = elem.find(body_tag), elem.find(map_tag)
        if body_elem is None:
            raise InvalidLayer(layer, f"has no <{body_tag}>")
        if map_elem is None:
            raise InvalidLayer(layer, f"has no <{map_tag}>")
        graph = build(body_elem, f"{layer.name}/{body_tag}")
        bodies[body_tag] = _body(layer, graph, map_elem, elem.find("back_edges"), body_tag)
    return bodies


def _entries(layer: Layer, graph: Graph, map_elem, kind: str, where: str) -> list[PortMapEntry]:
    ports = layer.inputs if kind == "input" else layer.outputs
    index = {p.id: i for i, p in enumerate(ports)}
    wanted = "Parameter" if kind == "input" else "Result"
    out = []
    for rule in map_elem.findall(kind):
        pid = _int(rule, "external_port_id", where)
        lid = rule.get("internal_layer_id")
        purpose = rule.get("purpose")
        if lid is None:
            raise IRFormatError(f"{where}: a port map {kind} rule has no internal_layer_id")
        if purpose is not None and (layer.type != "Loop" or purpose not in _PURPOSES[kind]):
            raise InvalidLayer(layer, f"{where}: port map {kind} purpose '{purpose}' is not allowed")
        if pid == -1 and purpose is None:
            raise InvalidLayer(layer, f"{where}: port map {kind} external_port_id -1 needs a purpose")
        if pid != -1 and pid not in index:
            raise InvalidLayer(layer, f"{where}: port map {kind} names external port {pid}, which is "
                                      f"not an {kind} port of the layer")
        inner = graph.layers.get(lid)
        if inner is None or inner.type != wanted:
            raise InvalidLayer(layer, f"{where}: port map {kind} names internal layer {lid}, which is "
                                      f"not a {wanted} of the body")
        axis = rule.get("axis")
        out.append(PortMapEntry(
            -1 if pid == -1 else index[pid], lid,
            None if axis is None else _int(rule, "axis", where),
            _int(rule, "start", where, 0), _int(rule, "end", where, -1),
            _int(rule, "stride", where, 1), _int(rule, "part_size", where, 1), purpose))
        if out[-1].axis is not None and (out[-1].stride == 0 or out[-1].part_size <= 0):
            raise InvalidLayer(layer, f"{where}: port map {kind} on axis {out[-1].axis} has stride "
                                      f"{out[-1].stride} and part_size {out[-1].part_size}")
    return out


def _body(layer: Layer, graph: Graph, map_elem, edges_elem, tag: str) -> Body:
    where = f"<{tag}>"
    inputs = _entries(layer, graph, map_elem, "input", where)
    outputs = _entries(layer, graph, map_elem, "output", where)
    back = []
    for e in (edges_elem.findall("edge") if edges_elem is not None and tag == "body" else []):
        fl, tl = e.get("from-layer"), e.get("to-layer")
        src, dst = graph.layers.get(fl), graph.layers.get(tl)
        if src is None or src.type != "Result" or dst is None or dst.type != "Parameter":
            raise InvalidLayer(layer, f"back edge {fl} -> {tl} must go from a body Result to a "
                                      f"body Parameter")
        back.append((fl, tl))
    fed = [e.internal_layer_id for e in inputs]
    if len(set(fed)) != len(fed):
        raise InvalidLayer(layer, f"{where}: a body Parameter is fed by two port map rules")
    for p in graph.parameters:
        if p.id not in fed:
            raise InvalidLayer(layer, f"{where}: body Parameter '{p.name}' (id={p.id}) is fed by no "
                                      f"port map rule")
    targets = [t for _, t in back]
    if len(set(targets)) != len(targets):
        raise InvalidLayer(layer, "two back edges feed one body Parameter")
    specials = {e.internal_layer_id for e in inputs if e.purpose}
    if specials & set(targets):
        raise InvalidLayer(layer, "the current_iteration Parameter cannot take a back edge")
    mapped = sorted(e.port for e in outputs if e.port >= 0)
    if mapped != list(range(len(layer.outputs))):
        raise InvalidLayer(layer, f"{where}: the port map must give every output port exactly one "
                                  f"body Result")
    return Body(graph, inputs, outputs, back)
