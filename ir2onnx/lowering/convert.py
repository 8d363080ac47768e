"""Walk an IR graph in topological order and lower every layer into one ONNX graph."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime
from onnx import helper

from .. import ops  # noqa: F401  (the op modules fill the lowering table)
from ..errors import describe, InvalidLayer, Ir2OnnxError, NeedsOpset, UnsupportedLayer, UnsupportedLayers
from ..ir.element_types import ElementType, from_numpy
from ..ir.graph import Graph, Layer
from ..ir.idioms import extra_sources
from ..ir.names import input_name, output_names, parameters
from ..runtime.sessions import ort_max_opset
from ..version import __version__
from . import declared, decompression, fixed_shapes, precision as precision_pass, targets
from .builder import Builder, TensorEntry, Value
from .node_lists import prune, rerouted, without_output_identities
from .registry import lowering_for

DEFAULT_OPSET = 17  # the lowest opset chosen when none is given (a layer may need more)
MIN_OPSET = 14


def max_opset() -> int:
    """The newest ONNX opset the installed onnx package knows."""
    return onnx.defs.onnx_opset_version()


@dataclass
class Context:
    """What a lowering sees besides its layer and inputs."""

    b: Builder
    graph: Graph
    opset: int
    outputs: dict = field(default_factory=dict)  # Result layer id -> graph output ValueInfo
    state_inputs: dict = field(default_factory=dict)  # variable_id -> Value of the state input
    state_outputs: dict = field(default_factory=dict)  # variable_id -> ValueInfo of `<id>.new`
    top: Graph | None = None  # the model's graph (``graph`` is a body's while lowering one)
    quantized: str = "exact"  # FakeQuantize: "exact" float emulation, "qdq", "qdq-symmetric"
    stats: dict = field(default_factory=dict)  # counters for the summary (see Converted.summary)
    compressed_weights: str = "dequantize"  # "dequantize" (packed) or "unpack"
    packed: dict = field(default_factory=dict)  # last layer id of a decompression chain -> its plan
    inside: set = field(default_factory=set)  # ids of the chains' other layers (replaced)
    found: dict = field(default_factory=dict)  # id(graph) -> (graph, its decompression chains), kept across opset retries
    auto_opset: int = 0  # the newest opset the converter may choose (0: the opset was given)
    merged: dict = field(default_factory=dict)  # MatMul layer id -> its piece of a merged MatMul
    consumer_map: dict | None = None  # graph.consumers(), made on first use
    values: dict = field(default_factory=dict)  # (layer id, output) -> Value, of the layers lowered so far
    target: targets.Target = targets.TARGETS[targets.DEFAULT]  # which forms the file may hold (--target)
    attention: str = "decomposed"  # ScaledDotProductAttention: "decomposed", or "gqa" where it matches
    memo: dict = field(default_factory=dict)  # what lowerings of several layers share (GQA's lengths)
    reroutes: list = field(default_factory=list)  # (old, new): every reader of tensor old reads new
    io_names: dict = field(default_factory=dict)  # Result layer id -> its output name (ir/names.py)
    state: str = "inputs"  # ReadValue: a graph input per variable ("inputs"), or its init value ("init")

    def consumers(self) -> dict:
        """``graph.consumers()`` of the graph being lowered, computed once."""
        if self.consumer_map is None:
            self.consumer_map = self.graph.consumers()
        return self.consumer_map

    def prefer_opset(self, layer: Layer, opset: int, what: str) -> bool:
        """Whether a form that needs ``opset`` can be used: True at ``opset`` or newer, NeedsOpset
        (the converter retries there) when it chooses the opset itself and may go that far, else
        False (the caller keeps the form the model's opset allows). Only the ``onnxruntime``
        target raises the opset for a form; the others keep the lowest one."""
        if self.opset >= opset:
            return True
        if not self.target.onnxruntime_forms:
            return False
        if opset <= self.auto_opset:
            raise NeedsOpset(layer, opset, what, self.opset)
        return False

    def require_opset(self, layer: Layer, opset: int, what: str) -> None:
        """NeedsOpset unless the model's opset is at least ``opset`` (the converter then retries
        at ``opset`` when it chooses the opset itself)."""
        if self.opset < opset:
            raise NeedsOpset(layer, opset, what, self.opset)

    def body(self, graph: Graph, prelude, outputs: list[str]):
        """Lower a sub-graph into its own node list (see :func:`lower_body`)."""
        return lower_body(self, graph, prelude, outputs)

    def onnx_type(self, layer: Layer, etype: ElementType) -> int:
        """The ONNX data type for ``etype``, or a clear error naming the layer."""
        if etype.onnx is None:
            raise UnsupportedLayer(layer, f"element type {etype.name} has no ONNX counterpart")
        self.require_opset(layer, etype.min_opset, f"element type {etype.name}")
        return etype.onnx


@dataclass
class Converted:
    """An ONNX model whose initializer bytes are not copied yet (see :mod:`ir2onnx.writer`)."""

    model: onnx.ModelProto  # initializers absent; `tensors` lists them
    tensors: list[TensorEntry]
    node_layers: dict[str, Layer] = field(default_factory=dict)  # ONNX node name -> its IR layer
    summary: list[str] = field(default_factory=list)  # one line per INT8 / compressed-weight form
    probes: dict[str, tuple[str, int]] = field(default_factory=dict)  # expose_layers: output -> (layer id, port)
    attention_kept: list[str] = field(default_factory=list)  # attention="gqa": why each SDPA left kept its form

    @property
    def opset(self) -> int:
        """The default-domain ONNX opset the model was lowered at."""
        return next(o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx"))

    @property
    def weight_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors if t.alias is None)

    def without_aliases(self) -> "Converted":
        """The model with every alias initializer replaced by the one whose bytes it shares (one
        file cannot point two initializers at the same bytes)."""
        aliases = {t.name: t.alias for t in self.tensors if t.alias is not None}
        if not aliases:
            return self
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        def rename(graph: onnx.GraphProto) -> None:
            for node in graph.node:
                node.input[:] = [aliases.get(i, i) for i in node.input]
                for a in node.attribute:
                    for g in [a.g] if a.HasField("g") else list(a.graphs):
                        rename(g)

        rename(model.graph)
        tensors = [t for t in self.tensors if t.alias is None]
        return Converted(model, tensors, self.node_layers, self.summary, self.probes, self.attention_kept)

    def to_model_proto(self) -> onnx.ModelProto:
        """A complete ModelProto with every initializer's bytes copied in."""
        model = onnx.ModelProto()
        conv = self.without_aliases()
        model.CopyFrom(conv.model)
        for t in conv.tensors:
            proto = t.skeleton()
            proto.raw_data = bytes(t.raw_bytes())
            model.graph.initializer.append(proto)
        return model


def _all_graphs(graph: Graph):
    yield graph
    for layer in graph.order:
        for body in layer.bodies.values():
            yield from _all_graphs(body.graph)


def check_supported(graph: Graph) -> None:
    """Raise one :class:`UnsupportedLayers` that lists every layer without a lowering (bodies too)."""
    missing = [(l, "no lowering for this operation version") for l in graph.all_layers()
               if lowering_for(l.type, l.version) is None]
    if missing:
        raise UnsupportedLayers(missing)


QUANTIZED_MODES = ("exact", "qdq", "qdq-symmetric")
STATE_MODES = ("inputs", "init")  # ReadValue as a graph input, or as its init value (the first step)


ATTENTION_MODES = ("decomposed", "gqa")


def computed_graph(graph: Graph, precision: str = precision_pass.DEFAULT) -> Graph:
    """``graph`` as the converter computes it at ``precision`` (``"f32"``, ``"f16"``, ``"ir"``;
    :mod:`.precision`): the one place the precision is applied. The result records it
    (``graph.precision``), so the oracles, OpenVINO and ``run`` read it from the graph, and
    converting the result again transforms nothing."""
    return precision_pass.apply(graph, precision)


def convert_graph(graph: Graph, opset: int | None = None, *, quantized: str | None = None,
                  compressed_weights: str = "dequantize", precision: str | None = None,
                  shapes: dict[str, tuple[int, ...]] | None = None, expose_layers: bool = False,
                  state: str = "inputs", target: str = targets.DEFAULT,
                  ir_version: int | None = None, attention: str = "decomposed") -> Converted:
    """Lower ``graph`` into an ONNX model.

    ``opset=None`` chooses the opset: the lowest one >= DEFAULT_OPSET that every layer needs (a
    lowering says what it needs through :meth:`Context.require_opset`, and what it would rather
    have, for a faster form, through :meth:`Context.prefer_opset`), never above what the
    installed onnxruntime loads. A given ``opset`` is used as it is, and the layers that need a
    newer one are refused (all of them at once, each naming the opset it needs).

    ``quantized``: FakeQuantize as exact float emulation (``"exact"``), or as QuantizeLinear ->
    DequantizeLinear where it is an 8-bit affine quantization (``"qdq"``; ``"qdq-symmetric"``:
    int8 with zero point 0 only). ``compressed_weights``: integer weights decompressed in the
    graph stay packed behind a DequantizeLinear (``"dequantize"``) or are unpacked to floats
    (``"unpack"``). ``precision``: the compute type of floats, ``"f32"``, ``"f16"``
    or ``"ir"`` (the IR's literal types; :mod:`.precision`); None (the default): the graph's own
    (``graph.precision``, set by :func:`computed_graph`), or ``"f32"`` for a graph as read. ``shapes`` fixes the dims of the
    named inputs (tensor or Parameter names), and the ports downstream are re-inferred so that
    shape subgraphs fold (:mod:`.fixed_shapes`). ``expose_layers`` also makes the output of every
    top-level layer that the model computes at run time a graph output (not the constants the
    converter folds), listed in ``Converted.probes`` (``check --layers``: :mod:`ir2onnx.harness.layers`).
    ``state``: each variable (ReadValue/Assign) a graph input and a ``.new`` output (``"inputs"``),
    or the first step alone, each ReadValue its init value computed in the graph (``"init"``;
    :mod:`ir2onnx.ops.state`).

    ``target`` (:mod:`.targets`): ``"onnxruntime"`` (the default, the forms above), ``"onnx"``
    (the standard domain at the lowest opset from 14 the model needs; ``quantized`` defaults to
    ``"qdq"``), ``"web"`` (onnxruntime-web's opset and size limits) or ``"tensorrt"`` (TensorRT's
    parser: ``"qdq-symmetric"``, int32 constants, known ranks). ``ir_version`` pins the ONNX IR
    version (at least what the opset needs). ``attention="gqa"``: an LLM's attention over its
    KV cache as onnxruntime's GroupQueryAttention where it matches (:mod:`ir2onnx.ops._attention_gqa`;
    exact when the attention mask is ones, what onnxruntime-genai feeds)."""
    t = targets.get(target)
    quantized = t.quantized if quantized is None else quantized
    if opset is not None and not MIN_OPSET <= opset <= max_opset():
        raise Ir2OnnxError(f"opset {opset} is not supported: choose {MIN_OPSET}..{max_opset()}")
    if opset is not None:
        targets.check_opset(t, opset)
    if quantized not in QUANTIZED_MODES:
        raise Ir2OnnxError(f"quantized='{quantized}': choose one of {', '.join(QUANTIZED_MODES)}")
    if state not in STATE_MODES:
        raise Ir2OnnxError(f"state='{state}': choose one of {', '.join(STATE_MODES)}")
    if compressed_weights not in decompression.MODES:
        raise Ir2OnnxError(f"compressed_weights='{compressed_weights}': choose one of "
                           f"{', '.join(decompression.MODES)}")
    if precision is None:
        precision = graph.precision or precision_pass.DEFAULT
    precision_pass.check_mode(precision)
    if attention not in ATTENTION_MODES:
        raise Ir2OnnxError(f"attention='{attention}': choose one of {', '.join(ATTENTION_MODES)}")
    check_supported(graph)
    for g in _all_graphs(graph):
        declared.check_edges(g)
    graph = computed_graph(graph, precision)
    graph = fixed_shapes.fix_inputs(graph, shapes or {})

    found: dict = {}  # the decompression chains are matched once per graph, whatever opset is tried

    def lower(at: int, auto: int = 0) -> Converted:
        g = graph
        for _ in range(fixed_shapes.MAX_PASSES if shapes else 1):
            conv, refined = _lower(g, at, quantized, compressed_weights, found, refine=bool(shapes),
                                   auto_opset=auto, expose_layers=expose_layers, state=state, target=t,
                                   attention=attention)
            if refined is None:
                break
            g = refined
        conv.model.ir_version = targets.ir_version(t, at, ir_version)
        targets.finish(conv, t)
        return conv

    if opset is not None:
        _warn_if_ort_cannot_load(opset)
        return lower(opset)

    chosen, newest = targets.opset_range(t, MIN_OPSET if t.lowest_opset else DEFAULT_OPSET,
                                         ort_max_opset(max_opset()))
    while True:  # each pass can only raise the opset, and layers past a failed one are seen next
        try:
            return lower(chosen, auto=newest)
        except (NeedsOpset, UnsupportedLayers) as e:
            problems = getattr(e, "errors", [e])
            needs = [p.opset for p in problems if isinstance(p, NeedsOpset)]
            if not needs or max(needs) <= chosen:
                raise
            if max(needs) > newest:
                raise _beyond_onnxruntime(problems, newest, t) from None
            chosen = max(needs)


def _beyond_onnxruntime(problems: list, newest: int, t: targets.Target) -> Ir2OnnxError:
    """The refusal when a layer needs an opset newer than the installed onnxruntime (or the
    target's runtime) loads."""
    for p in problems:
        if isinstance(p, NeedsOpset) and p.opset > newest:
            if t.max_opset is not None and newest == t.max_opset:
                p.reason = (f"{p.what} needs ONNX opset >= {p.opset}; target {t.name} ({t.runtime}) "
                            f"loads opsets up to {t.max_opset}")
            else:
                p.reason = (f"{p.what} needs ONNX opset >= {p.opset}, newer than onnxruntime "
                            f"{onnxruntime.__version__} loads ({newest}); --opset {p.opset} writes it anyway")
            p.args = (f"layer {describe(p.layer)}: {p.reason}",)
    if len(problems) == 1:
        return problems[0]
    many = UnsupportedLayers([(p.layer, p.reason) for p in problems])
    many.errors = problems
    return many


def _lower(graph: Graph, opset: int, quantized: str, compressed_weights: str, found: dict | None = None,
           refine: bool = False, auto_opset: int = 0, expose_layers: bool = False,
           state: str = "inputs", target: targets.Target = targets.TARGETS[targets.DEFAULT],
           attention: str = "decomposed") -> tuple[Converted, Graph | None]:
    """Lower every layer at ``opset``; one error, or every failed layer in one UnsupportedLayers.
    With ``refine``, also the graph with the output ports' dims that ONNX inference over the
    result knows and the IR left dynamic (None when there are none)."""
    b = Builder(opset)
    ctx = Context(b, graph, opset, top=graph, quantized=quantized, compressed_weights=compressed_weights,
                  found={} if found is None else found, auto_opset=auto_opset, state=state, target=target,
                  attention=attention)
    ctx.packed, ctx.inside = _decompression(graph, compressed_weights, ctx.found)
    for p in parameters(graph):  # the model's input and output names first: no inner tensor takes one
        b.reserve(input_name(p))
    ctx.io_names = output_names(graph)
    for name in ctx.io_names.values():
        b.reserve(name)
    values: dict[tuple[str, int], Value | None] = {}
    _walk(ctx, graph, values)
    for var, v in ctx.state_inputs.items():  # a variable nothing assigns keeps its value
        if var not in ctx.state_outputs:
            b.layer_name = var
            b.Identity(v, _names=[var + ".new"])
            ctx.state_outputs[var] = b.value_info(var + ".new", v.etype, v.shape)
    outputs = [ctx.outputs[r.id] for r in graph.results]  # IR order, then the variables'
    outputs += [ctx.state_outputs[var] for var in ctx.state_inputs]
    refined = fixed_shapes.refine(graph, b, values, outputs) if refine else None
    declared.check_outputs(graph, b, values, outputs)  # before a wrong port becomes a wrong model
    nodes = b.nodes
    if ctx.reroutes:
        nodes = rerouted(nodes, outputs, ctx.reroutes, {i.name for i in b.inputs} | {t.name for t in b.tensors})
    probes, exposed = _probes(graph, b, values, {o.name for o in outputs}) if expose_layers else ({}, [])
    outputs = outputs + exposed
    nodes, tensors = prune(nodes, outputs, b.tensors)
    nodes = without_output_identities(nodes, [ctx.state_outputs[var] for var in ctx.state_inputs],
                                      {i.name for i in b.inputs} | {t.name for t in tensors} | {o.name for o in outputs})
    g = helper.make_graph(nodes, _safe_graph_name(graph.name), b.inputs, outputs)
    imports = [helper.make_opsetid("", opset)]
    if any(n.domain == MS_DOMAIN for n in nodes):
        imports.append(helper.make_opsetid(MS_DOMAIN, 1))
    model = helper.make_model(g, opset_imports=imports, producer_name="ir2onnx", producer_version=__version__,
                              ir_version=helper.find_min_ir_version_for(imports[:1]))
    helper.set_model_props(model, {"source_model": graph.name, "source_ir_version": str(graph.ir_version)})
    by_name = {layer.name: layer for layer in reversed(list(graph.all_layers()))}  # the first of equal names
    node_layers = {node: by_name[name] for node, name in b.node_layers.items() if name in by_name}
    return Converted(model, tensors, node_layers, _summary(ctx.stats), probes,
                     ctx.stats.get("gqa_refused", [])), refined


def _probes(graph: Graph, b: Builder, values: dict, taken: set) -> tuple[dict, list]:
    """``({tensor name: (layer id, port)}, the graph outputs to add)`` for every run-time value
    of a top-level layer (Parameters, Results, Consts, folded constants and replaced steps of a
    weight-decompression chain left out)."""
    fixed = {t.name for t in b.tensors} | {i.name for i in b.inputs}
    probes: dict[str, tuple[str, int]] = {}
    exposed = []
    for layer in graph.order:
        if layer.type in ("Parameter", "Result", "Const"):
            continue
        for port in range(len(layer.outputs)):
            v = values.get((layer.id, port))
            if v is None or v.is_const or v.etype.onnx is None:
                continue
            try:
                name = v.name
            except Exception:  # a step a DequantizeLinear replaced: no tensor holds it
                continue
            if name in fixed or name in probes:
                continue
            probes[name] = (layer.id, port)
            if name not in taken:
                exposed.append(b.value_info(name, v.etype, None))
    return probes, exposed


MS_DOMAIN = "com.microsoft"


def _decompression(graph: Graph, mode: str, found: dict):
    if mode != "dequantize":
        return {}, set()
    if id(graph) not in found or found[id(graph)][0] is not graph:  # (an id outlives its graph)
        found[id(graph)] = (graph, decompression.find(graph))
    return found[id(graph)][1]


def lower_body(ctx: Context, graph: Graph, prelude, outputs: list[str]):
    """Lower the body ``graph`` into a node list of its own.

    ``prelude()`` runs first, inside the body (its nodes belong to the body), and returns the
    Value of every body Parameter by layer id; ``outputs`` lists body Result ids. Returns
    ``(nodes, output ValueInfos, output Values)``; an ``outputs`` entry may instead be a function
    of ``result_value(result id) -> Value`` that makes the output (a condition made scalar). Each output is an Identity made inside the
    body, so no body output is an outer-scope name. Outer values reach the body by name (ONNX's
    outer-scope capture); initializers stay in the main graph.
    """
    b = ctx.b
    saved_nodes, saved_layer = b.nodes, b.layer_name
    b.nodes = []
    try:
        sub = Context(b, graph, ctx.opset, state_inputs=ctx.state_inputs,
                      state_outputs=ctx.state_outputs, top=ctx.top, quantized=ctx.quantized,
                      stats=ctx.stats, compressed_weights=ctx.compressed_weights, found=ctx.found,
                      auto_opset=ctx.auto_opset, state=ctx.state, target=ctx.target)
        sub.packed, sub.inside = _decompression(graph, ctx.compressed_weights, ctx.found)
        values: dict = {(pid, 0): v for pid, v in prelude().items()}
        _walk(sub, graph, values, body=True)
        infos, outs = [], []
        def result_value(rid: str) -> Value:
            src = graph.layers[rid].sources[0]
            return values[(src.layer, src.output)]

        for out in outputs:
            b.layer_name = f"{graph.name}/out"
            v = out(result_value) if callable(out) else result_value(out)
            name = b.Identity(v.name)
            infos.append(b.value_info(name, v.etype, v.shape))
            outs.append(Value(b, v.etype, v.shape, name=name))
        return b.nodes, infos, outs
    finally:
        b.nodes, b.layer_name = saved_nodes, saved_layer


def _walk(ctx: Context, graph: Graph, values: dict, body: bool = False) -> None:
    """Lower every layer of ``graph`` in order into ``values``; a body's Parameters are seeded in
    ``values`` and its Results are read by the caller."""
    b = ctx.b
    ctx.values = values
    errors: list[InvalidLayer] = []
    for layer in graph.order:
        if body and layer.type in ("Parameter", "Result"):
            continue
        if layer.id in ctx.inside:  # a step of a decompression chain that its last layer replaces
            values[(layer.id, 0)] = _replaced(b, layer)
            continue
        inputs = [values[(s.layer, s.output)] for s in (*layer.sources, *extra_sources(graph, layer))]
        if any(v is None for v in inputs):  # downstream of a layer that already failed
            values.update({(layer.id, i): None for i in range(len(layer.outputs))})
            continue
        b.layer_name = layer.name
        try:
            if layer.id in ctx.packed:
                outs = [decompression.emit(ctx, ctx.packed[layer.id])]
            else:
                outs = lowering_for(layer.type, layer.version)(ctx, layer, inputs)
        except InvalidLayer as e:  # e.layer may be an input's producer (a Const ONNX cannot hold)
            if all(e.layer is not f.layer or e.reason != f.reason for f in errors):
                errors.append(e)
            values.update({(layer.id, i): None for i in range(len(layer.outputs))})
            continue
        for i, port in enumerate(layer.outputs):
            values[(layer.id, i)] = _as_value(b, outs[i], port)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        many = UnsupportedLayers([(e.layer, e.reason) for e in errors])
        many.errors = errors
        raise many


def _summary(stats: dict) -> list[str]:
    lines = []
    if "compressed_weights" in stats:
        lines.append(f"{stats['compressed_weights']} compressed weight(s) kept packed (DequantizeLinear)")
    if "matmul_blocks" in stats:
        lines.append(f"{stats['matmul_blocks']} of them per-channel MatMul weights, written in blocks of K "
                     f"(the same values; onnxruntime's MatMulNBits runs them faster)")
    if "merged_groups" in stats:
        lines.append(f"{stats['merged_matmuls']} compressed MatMuls reading the same input merged into "
                     f"{stats['merged_groups']} (q/k/v, gate/up: one MatMulNBits each, then Split)")
    if "gathered_tables" in stats:
        lines.append(f"{stats['gathered_tables']} Gather(s) of a compressed table read the packed rows first "
                     f"and dequantize only those")
    if "tied_tables" in stats:
        lines.append(f"{stats['tied_tables']} table(s) read by both a Gather and a MatMul stored once, transposed "
                     f"for MatMulNBits")
    if "gqa" in stats:
        lines.append(f"{stats['gqa']} attention layer(s) as onnxruntime's GroupQueryAttention (com.microsoft)")
    if "fq_total" in stats:
        lines.append(f"{stats.get('fq_qdq', 0)} of {stats['fq_total']} FakeQuantize layer(s) became "
                     f"QuantizeLinear/DequantizeLinear (weights stored int8: {stats.get('fq_weights', 0)}); "
                     f"the others stay exact float emulation")
    if stats.get("fq_per_channel_activations"):
        lines.append(f"{stats['fq_per_channel_activations']} FakeQuantize layer(s) on activations vary "
                     f"per channel, which onnxruntime's int8 kernels cannot take: exact float emulation")
    if stats.get("fq_not_symmetric"):
        lines.append(f"{stats['fq_not_symmetric']} FakeQuantize layer(s) could not be made symmetric "
                     f"(int8, zero point 0) exactly")
    return lines


def _replaced(b: Builder, layer: Layer) -> Value:
    port = layer.outputs[0]
    return Value(b, port.etype, port.shape, unrepresentable=RuntimeError(
        f"internal: {layer} was folded into a DequantizeLinear but is read"))


def _warn_if_ort_cannot_load(opset: int) -> None:
    newest = ort_max_opset(max_opset())
    if opset > newest:
        print(f"ir2onnx: warning: onnxruntime {onnxruntime.__version__} loads models up to opset "
              f"{newest}; the opset {opset} model is valid ONNX but it cannot run it", file=sys.stderr)


def _as_value(b: Builder, out, port) -> Value:
    if isinstance(out, Value):
        return out
    if isinstance(out, (np.ndarray, np.generic)):  # a numpy scalar from folding a 0-d input
        out = np.asarray(out)
        return Value(b, from_numpy(out.dtype), out.shape, const=out)
    return Value(b, port.etype, port.shape, name=out)


def _safe_graph_name(name: str) -> str:
    return name or "model"
