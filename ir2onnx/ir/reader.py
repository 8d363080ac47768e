"""Read an OpenVINO IR (``model.xml`` + ``model.bin``) into a :class:`~ir2onnx.ir.graph.Graph`.

The XML is parsed with defusedxml (no DTD, no entities, nothing fetched); the .bin is
memory-mapped, never read whole. Every structural problem raises :class:`IRFormatError` and
every attribute problem :class:`InvalidLayer`, each naming what is wrong.
"""
from __future__ import annotations

import heapq
import math
import os
from pathlib import Path

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from ..errors import InvalidLayer, IRFormatError
from .bodies import parse_bodies
from .element_types import element_type
from .graph import BinFile, ConstData, Graph, Layer, Port, Source
from .limits import MAX_BODY_DEPTH, over_dims
from .schema import parse_attributes, schemas

SUPPORTED_IR_VERSIONS = (10, 11)
_NO_TYPE = {"unspecified", "undefined", "dynamic"}


def default_weights_path(xml_path: str | os.PathLike) -> Path:
    """``model.xml`` -> ``model.bin`` beside it."""
    return Path(xml_path).with_suffix(".bin")


def load_ir(xml_path: str | os.PathLike, weights: str | os.PathLike | None = None) -> Graph:
    """Read and validate an IR model. ``weights`` defaults to the .xml's stem + ``.bin``."""
    xml_path = Path(xml_path)
    root = _parse_xml(xml_path)
    bin_path = Path(weights) if weights is not None else default_weights_path(xml_path)
    binfile = None
    if _is_file(bin_path):
        binfile = BinFile(bin_path)
    elif weights is not None:
        raise IRFormatError(f"weights file '{bin_path}' not found")
    return _build_graph(root, xml_path, bin_path, binfile)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, but a path the OS cannot even look up (a component over 255 bytes)
    says so as bad input."""
    try:
        return path.is_file()
    except OSError as e:
        raise IRFormatError(f"cannot read '{path}': {e.strerror}") from None


def _parse_xml(xml_path: Path):
    try:
        data = xml_path.read_bytes()
    except FileNotFoundError:
        raise IRFormatError(f"model file '{xml_path}' not found") from None
    except OSError as e:
        raise IRFormatError(f"cannot read '{xml_path}': {e.strerror}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise IRFormatError(f"'{xml_path}' is not UTF-8 text (bad byte at offset {e.start})") from None
    try:
        root = SafeET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as e:
        raise IRFormatError(f"'{xml_path}' is refused: DTDs and entities are not allowed ({type(e).__name__})") from None
    except SafeET.ParseError as e:
        raise IRFormatError(f"'{xml_path}' is not well-formed XML: {e}") from None
    if root.tag != "net":
        raise IRFormatError(f"'{xml_path}' is not an OpenVINO IR: root element is <{root.tag}>, not <net>")
    return root


def _int(text: str | None, what: str) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise IRFormatError(f"{what} '{text}' is not an integer") from None


def _parse_port(elem, where: str) -> Port:
    pid = _int(elem.get("id"), f"{where}: port id")
    precision = elem.get("precision")
    etype = None
    if precision is not None and precision.strip().lower() not in _NO_TYPE:
        etype = element_type(precision)
    dims = []
    for d in elem.findall("dim"):
        value = _int(d.text, f"{where}, port {pid}: dim")
        if value < -1:
            raise IRFormatError(f"{where}, port {pid}: negative dimension {value}")
        dims.append(None if value == -1 else value)
    problem = over_dims(dims, f"{where}, port {pid}")
    if problem:
        raise IRFormatError(problem)
    shape = tuple(dims)  # a dynamic rank is only visible in a Parameter's `shape` attribute
    names = tuple(n.strip() for n in elem.get("names", "").replace("\\,", "\x00").split(",") if n.strip())
    names = tuple(n.replace("\x00", ",") for n in names)
    return Port(pid, etype, shape, names)


def _parse_layer(elem, all_schemas) -> tuple[Layer, list[str]]:
    lid = elem.get("id")
    if lid is None:
        raise IRFormatError("a <layer> has no id")
    ltype, version = elem.get("type"), elem.get("version", "")
    if ltype is None:
        raise IRFormatError(f"layer id={lid} has no type")
    name = elem.get("name", lid)
    where = f"layer '{name}' (id={lid})"
    data = elem.find("data")
    raw = dict(data.attrib) if data is not None else {}
    attrs, problems = parse_attributes(all_schemas.get((ltype, version)), raw)
    inp, out = elem.find("input"), elem.find("output")
    inputs = [_parse_port(p, where) for p in (inp.findall("port") if inp is not None else [])]
    outputs = [_parse_port(p, where) for p in (out.findall("port") if out is not None else [])]
    ids = [p.id for p in inputs + outputs]
    if len(set(ids)) != len(ids):
        raise IRFormatError(f"{where}: duplicate port ids {ids}")
    rt = {}
    rt_elem = elem.find("rt_info")
    if rt_elem is not None:
        rt = {a.get("name", ""): a.get("value", "") for a in rt_elem.findall("attribute")}
    layer = Layer(lid, name, ltype, version, attrs, inputs, outputs, rt_info=rt)
    return layer, problems


def _build_graph(root, xml_path: Path, bin_path: Path, binfile: BinFile | None) -> Graph:
    version = _int(root.get("version"), "IR version")
    if version not in SUPPORTED_IR_VERSIONS:
        raise IRFormatError(f"IR version {version} is not supported (only {', '.join(map(str, SUPPORTED_IR_VERSIONS))})")
    return _network(root, root.get("name", xml_path.stem), version, xml_path, bin_path, binfile)


def _network(root, name: str, version: int, xml_path: Path, bin_path: Path,
             binfile: BinFile | None, depth: int = 0) -> Graph:
    """One ``<layers>`` + ``<edges>`` network: the model, or a body of If/Loop/TensorIterator
    (``depth``: how many bodies it is nested in; over :data:`MAX_BODY_DEPTH` is refused before
    it is read, as neither protobuf nor Python's stack could hold it)."""
    if depth > MAX_BODY_DEPTH:
        raise IRFormatError(f"sub-graph '{name}' is nested {depth} bodies deep, over the limit of "
                            f"{MAX_BODY_DEPTH} (If/Loop/TensorIterator inside one another)")
    layers_elem = root.find("layers")
    if layers_elem is None:
        raise IRFormatError(f"'{xml_path}' has no <layers>" if root.tag == "net" else f"sub-graph '{name}' has no <layers>")
    all_schemas = schemas()
    layers: dict[str, Layer] = {}
    file_order: dict[str, int] = {}
    for elem in layers_elem.findall("layer"):
        layer, problems = _parse_layer(elem, all_schemas)
        if layer.id in layers:
            raise IRFormatError(f"duplicate layer id {layer.id} ('{layers[layer.id].name}' and '{layer.name}')")
        if problems:
            raise InvalidLayer(layer, "; ".join(problems))
        _check_typed_source(layer, all_schemas)
        layer.bodies = parse_bodies(elem, layer, lambda body, body_name: _network(
            body, body_name, version, xml_path, bin_path, binfile, depth + 1))
        layers[layer.id] = layer
        file_order[layer.id] = len(file_order)
    _connect(root, layers)
    for layer in layers.values():
        _check_io_counts(layer, all_schemas)
        if layer.type == "Const":
            layer.const = _const_data(layer, binfile, bin_path)
        elif layer.type == "Parameter":
            _check_parameter(layer)
    order = _topological_order(layers, file_order)
    params = [l for l in layers.values() if l.type == "Parameter"]
    results = [l for l in layers.values() if l.type == "Result"]
    where = f"'{xml_path}'" if root.tag == "net" else f"sub-graph '{name}'"
    if not layers:
        raise IRFormatError(f"{where} has no layers: there is no model to convert")
    if not results:
        raise IRFormatError(f"{where} has no Result layer: the model has no output")
    return Graph(name, version, layers, order, params, results,
                 str(xml_path), str(bin_path) if binfile else None)


def _connect(root, layers: dict[str, Layer]) -> None:
    """Resolve ``<edges>`` into each layer's ``sources`` (one per input port, in port order)."""
    fed: dict[tuple[str, int], Source] = {}
    edges = root.find("edges")
    for e in (edges.findall("edge") if edges is not None else []):
        fl, tl = e.get("from-layer"), e.get("to-layer")
        fp, tp = _int(e.get("from-port"), "edge from-port"), _int(e.get("to-port"), "edge to-port")
        for lid in (fl, tl):
            if lid not in layers:
                raise IRFormatError(f"edge {fl}:{fp} -> {tl}:{tp} names unknown layer id {lid}")
        src = layers[fl]
        out_idx = next((i for i, p in enumerate(src.outputs) if p.id == fp), None)
        if out_idx is None:
            raise IRFormatError(f"edge {fl}:{fp} -> {tl}:{tp}: layer '{src.name}' has no output port {fp}")
        dst = layers[tl]
        if not any(p.id == tp for p in dst.inputs):
            raise IRFormatError(f"edge {fl}:{fp} -> {tl}:{tp}: layer '{dst.name}' has no input port {tp}")
        if (tl, tp) in fed:
            raise IRFormatError(f"input port {tp} of layer '{dst.name}' has two incoming edges")
        fed[(tl, tp)] = Source(fl, out_idx)
    for layer in layers.values():
        missing = [p.id for p in layer.inputs if (layer.id, p.id) not in fed]
        if missing:
            raise InvalidLayer(layer, f"input port(s) {missing} have no incoming edge")
        layer.sources = [fed[(layer.id, p.id)] for p in layer.inputs]
        for port, src in zip(layer.inputs, layer.sources):  # Model Optimizer's IR v10 types output
            if port.etype is None:                           # ports only: an input port has its
                port.etype = layers[src.layer].outputs[src.output].etype  # producer's type


_TYPED_SOURCES = ("Const", "Parameter")  # layers whose attributes the reader itself interprets


def _check_typed_source(layer: Layer, all_schemas) -> None:
    """A Const or Parameter: a version the reader knows (its attributes are read here, not by a
    lowering), and an output port of its ``element_type`` (a port without a precision takes it)."""
    if layer.type not in _TYPED_SOURCES:
        return
    if (layer.type, layer.version) not in all_schemas:
        known = sorted(v for t, v in all_schemas if t == layer.type)
        got = f"version '{layer.version}' is unknown" if layer.version else "has no version"
        raise InvalidLayer(layer, f"{layer.type} {got} (known: {', '.join(known)})")
    etype = layer.attrs.get("element_type")
    for port in layer.outputs:
        if port.etype is None:
            port.etype = etype
        elif etype is not None and port.etype != etype:
            raise InvalidLayer(layer, f"output port {port.id} is declared {port.etype.name}, but its "
                                      f"element_type is {etype.name}")


def _check_io_counts(layer: Layer, all_schemas) -> None:
    schema = all_schemas.get(layer.key)
    if schema is None:
        return
    n = len(layer.inputs)
    hi = schema.max_inputs
    if n < schema.min_inputs or (hi is not None and n > hi):
        want = f"{schema.min_inputs}" if hi == schema.min_inputs else f"{schema.min_inputs}..{hi if hi is not None else 'N'}"
        raise InvalidLayer(layer, f"has {n} input(s), the operation takes {want}")


def _check_parameter(layer: Layer) -> None:
    """The ``shape`` attribute and the output port's dims must describe the same tensor."""
    shape, port = layer.attrs.get("shape"), layer.outputs[0] if layer.outputs else None
    if port is None:
        raise InvalidLayer(layer, "a Parameter needs one output port")
    if shape is None or not port.shape and shape != ():  # dynamic rank: ports carry no dims
        return
    agree = len(shape) == len(port.shape) and all(
        a is None or b is None or a == b for a, b in zip(shape, port.shape))
    if not agree:
        raise InvalidLayer(layer, f"shape attribute {list(shape)} disagrees with its output port "
                                  f"dims {list(port.shape)}")


def _const_data(layer: Layer, binfile: BinFile | None, bin_path: Path) -> ConstData:
    a = layer.attrs
    etype = a["element_type"]
    shape = a["shape"]
    if shape is None or any(d is None for d in shape):
        raise InvalidLayer(layer, f"a Const needs a static shape, got '{a.get('shape')}'")
    offset, size = a["offset"], a["size"]
    if offset < 0 or size < 0:
        raise InvalidLayer(layer, f"negative offset ({offset}) or size ({size})")
    if etype.numpy is None:
        raise InvalidLayer(layer, f"element type {etype.name} constants are not supported")
    count = math.prod(shape)
    if count == 0 and size == 1:  # OpenVINO's save_model writes one placeholder byte for an empty Const
        size = 0
    if etype.nbytes(count) != size:
        raise InvalidLayer(layer, f"size {size} does not match shape {list(shape)} of {etype.name} "
                                  f"({etype.nbytes(count)} bytes)")
    if size == 0:
        return ConstData(binfile, offset, 0, etype, tuple(shape))
    if binfile is None:
        raise IRFormatError(f"weights file '{bin_path}' not found (needed by Const '{layer.name}')")
    if offset + size > binfile.size:
        raise InvalidLayer(layer, f"bytes {offset}..{offset + size} lie beyond the end of "
                                  f"'{binfile.path}' ({binfile.size} bytes)")
    return ConstData(binfile, offset, size, etype, tuple(shape))


def _topological_order(layers: dict[str, Layer], file_order: dict[str, int]) -> list[Layer]:
    """Kahn's algorithm over the edges; ties broken by file order so the result is stable."""
    indeg = {lid: len(l.sources) for lid, l in layers.items()}
    users: dict[str, list[str]] = {lid: [] for lid in layers}
    for lid, layer in layers.items():
        for src in layer.sources:
            users[src.layer].append(lid)
    ready = [(file_order[l], l) for l, d in indeg.items() if d == 0]
    heapq.heapify(ready)
    order: list[Layer] = []
    while ready:
        _, lid = heapq.heappop(ready)
        order.append(layers[lid])
        for u in users[lid]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, (file_order[u], u))
    if len(order) != len(layers):
        stuck = sorted((l for l, d in indeg.items() if d > 0), key=file_order.get)
        names = ", ".join(f"'{layers[l].name}'" for l in stuck[:8])
        raise IRFormatError(f"the graph has a cycle through layers {names}")
    return order
