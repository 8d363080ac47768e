"""Walk an IR graph in topological order and lower every layer into one ONNX graph."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper

from .. import ops  # noqa: F401  (the op modules fill the lowering table)
from ..errors import InvalidLayer, Ir2OnnxError, NeedsOpset, UnsupportedLayer, UnsupportedLayers, describe
from ..ir.element_types import ElementType, from_numpy
from ..ir.graph import Graph, Layer
from . import declared
from .builder import Builder, TensorEntry, Value
from .registry import lowering_for
from ..version import __version__

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

    def require_opset(self, layer: Layer, opset: int, what: str) -> None:
        """NeedsOpset unless the model's opset is at least ``opset`` (the converter then retries
        at ``opset`` when it chooses the opset itself)."""
        if self.opset < opset:
            raise NeedsOpset(layer, opset, what, self.opset)

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

    @property
    def opset(self) -> int:
        """The default-domain ONNX opset the model was lowered at."""
        return next(o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx"))

    @property
    def weight_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def to_model_proto(self) -> onnx.ModelProto:
        """A complete ModelProto with every initializer's bytes copied in."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        for t in self.tensors:
            proto = t.skeleton()
            proto.raw_data = bytes(t.raw_bytes())
            model.graph.initializer.append(proto)
        return model


def check_supported(graph: Graph) -> None:
    """Raise one :class:`UnsupportedLayers` that lists every layer without a lowering."""
    missing = [(l, "no lowering for this operation version") for l in graph.order
               if lowering_for(l.type, l.version) is None]
    if missing:
        raise UnsupportedLayers(missing)


def convert_graph(graph: Graph, opset: int | None = None) -> Converted:
    """Lower ``graph`` into an ONNX model.

    ``opset=None`` chooses the opset: the lowest one >= DEFAULT_OPSET that every layer needs (a
    lowering says what it needs through :meth:`Context.require_opset`), never above what the
    installed onnxruntime loads. A given ``opset`` is used as it is, and the layers that need a
    newer one are refused (all of them at once, each naming the opset it needs)."""
    if opset is not None and not MIN_OPSET <= opset <= max_opset():
        raise Ir2OnnxError(f"opset {opset} is not supported: choose {MIN_OPSET}..{max_opset()}")
    check_supported(graph)
    declared.check_edges(graph)
    if opset is not None:
        _warn_if_ort_cannot_load(opset)
        return _lower(graph, opset)
    from ..runtime import ort_max_opset

    newest = ort_max_opset(max_opset())
    chosen = DEFAULT_OPSET
    while True:  # each pass can only raise the opset, and layers past a failed one are seen next
        try:
            return _lower(graph, chosen)
        except (NeedsOpset, UnsupportedLayers) as e:
            problems = getattr(e, "errors", [e])
            needs = [p.opset for p in problems if isinstance(p, NeedsOpset)]
            if not needs or max(needs) <= chosen:
                raise
            if max(needs) > newest:
                raise _beyond_onnxruntime(problems, newest) from None
            chosen = max(needs)


def _beyond_onnxruntime(problems: list, newest: int) -> Ir2OnnxError:
    """The refusal when a layer needs an opset newer than the installed onnxruntime loads."""
    import onnxruntime

    for p in problems:
        if isinstance(p, NeedsOpset) and p.opset > newest:
            p.reason = (f"{p.what} needs ONNX opset >= {p.opset}, newer than onnxruntime "
                        f"{onnxruntime.__version__} loads ({newest}); --opset {p.opset} writes it anyway")
            p.args = (f"layer {describe(p.layer)}: {p.reason}",)
    if len(problems) == 1:
        return problems[0]
    many = UnsupportedLayers([(p.layer, p.reason) for p in problems])
    many.errors = problems
    return many


def _lower(graph: Graph, opset: int) -> Converted:
    """Lower every layer at ``opset``; one error, or every failed layer in one UnsupportedLayers."""
    b = Builder(opset)
    ctx = Context(b, graph, opset)
    values: dict[tuple[str, int], Value | None] = {}
    errors: list[InvalidLayer] = []
    for layer in graph.order:
        inputs = [values[(s.layer, s.output)] for s in layer.sources]
        if any(v is None for v in inputs):  # downstream of a layer that already failed
            values.update({(layer.id, i): None for i in range(len(layer.outputs))})
            continue
        b.layer_name = layer.name
        try:
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
    outputs = [ctx.outputs[r.id] for r in graph.results]  # IR order, not lowering order
    declared.check_outputs(graph, b, values, outputs)  # before a wrong port becomes a wrong model
    g = helper.make_graph(b.nodes, _safe_graph_name(graph.name), b.inputs, outputs)
    model = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", opset)], producer_name="ir2onnx",
        producer_version=__version__,
        ir_version=helper.find_min_ir_version_for([helper.make_opsetid("", opset)]),
    )
    helper.set_model_props(model, {"source_model": graph.name, "source_ir_version": str(graph.ir_version)})
    return Converted(model, b.tensors)


def _warn_if_ort_cannot_load(opset: int) -> None:
    from ..runtime import ort_max_opset

    newest = ort_max_opset(max_opset())
    if opset > newest:
        import onnxruntime
        import sys

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
