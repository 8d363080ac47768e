"""The compute precision of floats (``--precision f32|f16|ir``): a Graph -> Graph pass run before
lowering, so that no op lowering, oracle or check knows about it.

Each layer gets a compute type; its f16/f32 ports are retyped to it, and a Convert-1 layer (the
IR's own, so the lowerings, the oracles and the declared-port checks all just work) is inserted
wherever a producer's type differs from what its consumer computes in::

    Const(f16) -> Convolution(f16) -> Result(f16)          an FP16 IR v10, as Model Optimizer writes it
    Const(f16) -> Convert(f32) -> Convolution(f32) -> Result(f32)      after the f32 pass

* ``f32`` (the default): every f16 activation is computed in f32, as OpenVINO's CPU plugin does
  (``INFERENCE_PRECISION_HINT`` f32). Weights stay as they are stored (an f16 initializer and a
  Cast). Layers whose f16 output comes from an attribute keep it (:data:`ATTRIBUTE_TYPED`: an
  explicit ``Convert`` to f16 still rounds, as torch's ``x.half().float()`` does), and a Convert
  to f32 follows. f16 state (ReadValue/Assign) becomes f32.
* ``f16``: every f16/f32 activation is computed in f16 (for CUDA and TensorRT), except the layers
  of :data:`KEEP_F32`, which stay f32 to stay accurate or to run on onnxruntime's CPU provider.
* ``ir``: the IR's literal types (the pass does nothing).

Inputs and outputs: an IR v10 model's f16 Parameters and Results become f32 in ``f32`` and
``f16`` modes (OpenVINO's IR v10 rule: ``Core().read_model`` presents them as f32); IR v11 keeps
its declared types (a Convert follows an f16 Parameter / precedes an f16 Result as needed).

Compressed-weight chains (:mod:`.decompression`) are opaque: their layers keep their types, so the
converter still finds them and keeps the weights packed (in ``f32`` mode an f16 chain gains a
Convert(f32), which makes it the f32 DequantizeLinear OpenVINO computes). Data-movement layers
(:data:`TRANSPARENT`) take their input's type, so f16 data moves as f16 until something computes.
Bodies of If/Loop/TensorIterator are transformed too; their Parameters and Results take the
compute type. The pass is linear in the number of layers and never reads weights.
"""
from __future__ import annotations

import copy
import gc

from ..errors import Ir2OnnxError
from ..ir.element_types import TYPES, ElementType
from ..ir.graph import Body, Graph, Layer, Port, Source
from . import decompression

MODES = ("f32", "f16", "ir")
DEFAULT = "f32"
F16, F32 = TYPES["f16"], TYPES["f32"]
RETYPED = frozenset({"f16", "f32"})  # the float types the pass moves between (f64, bf16, f8 stay)


def _moves(etype: ElementType | None) -> bool:
    """Is ``etype`` one of the types the pass retypes? (by name: ElementType's == is slow)"""
    return etype is not None and etype.name in RETYPED

# f16 mode: layers computed in f32, by type (every version): those whose f16 results lose accuracy
# (as onnxconverter-common's float16 tooling keeps them: normalisations, sums over many terms,
# Softmax, Exp, Pow), and those whose lowering takes f32 only (the detection layers, as OpenVINO's
# CPU plugin). Every selftest case converted in f16 mode runs on onnxruntime 1.32's CPU provider
# (it casts layers without an f16 kernel to f32 itself); docs/precision.md says how this was measured.
KEEP_F32: frozenset[str] = frozenset({
    # normalisations
    "MVN", "NormalizeL2", "BatchNormInference", "GroupNormalization", "LRN",
    # softmax, exponentials, powers, logarithms
    "SoftMax", "LogSoftmax", "Exp", "Power", "Log", "SoftPlus",
    # reductions that sum
    "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "CumSum",
    # box coordinates and scores (f16 has 0.5 px steps at 1000 px; near-equal scores tie):
    # detection outputs, proposals, NMS, prior boxes, ROI pooling
    "DetectionOutput", "Proposal", "GenerateProposals", "ExperimentalDetectronDetectionOutput",
    "ExperimentalDetectronGenerateProposalsSingleImage", "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronPriorGridGenerator", "ExperimentalDetectronTopKROIs", "NonMaxSuppression",
    "MulticlassNms", "MatrixNms", "NMSRotated", "PriorBox", "PriorBoxClustered", "ROIAlign",
    "ROIAlignRotated", "ROIPooling", "PSROIPooling", "DeformablePSROIPooling",
})
# Layers whose float output type is an attribute (or the like-input's type): it is kept.
ATTRIBUTE_TYPED: frozenset[str] = frozenset({"Convert", "ConvertLike", "Range", "RandomUniform",
                                             "Eye", "Multinomial"})
# Layers whose result is the same in every float type (they move data, or pick the largest or
# smallest): they take their float inputs' type when those agree, so no Cast is added around them
# and f16 data keeps its NaN payloads (and a max of nothing its type's lowest value).
TRANSPARENT: frozenset[str] = frozenset({
    "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "VariadicSplit", "Gather",
    "GatherND", "GatherElements", "StridedSlice", "Slice", "SliceScatter", "Broadcast", "Tile",
    "Pad", "DepthToSpace", "SpaceToDepth", "BatchToSpace", "SpaceToBatch", "ShuffleChannels",
    "Reverse", "ReverseSequence", "Roll", "Select", "Identity",
    "MaxPool", "AdaptiveMaxPool", "ReduceMax", "ReduceMin", "SegmentMax", "Maximum", "Minimum",
})
# ... and these when they scatter without a reduction.
SCATTERS: frozenset[str] = frozenset({"ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate"})
# Inputs that keep their declared type whatever the layer computes in: shapes, scales, lengths.
KEEP_INPUTS: dict[str, tuple[int, ...]] = {
    "Interpolate": (1, 2), "Range": (0, 1, 2), "RandomUniform": (0, 1, 2), "ConvertLike": (1,),
    "ReverseSequence": (1,),
}
# Inputs that take whatever their producer gives: read only for their shape, or converted.
ANY_INPUTS: dict[str, tuple[int, ...]] = {"ShapeOf": (0,), "Convert": (0,), "ConvertLike": (0,)}
STATE = ("ReadValue", "Assign")


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise Ir2OnnxError(f"precision='{mode}': choose one of {', '.join(MODES)}")


def apply(graph: Graph, mode: str = DEFAULT) -> Graph:
    """``graph`` with every float activation computed in ``mode`` (a new Graph whose ``precision``
    records ``mode``; ``graph`` is not changed; ``ir``: a copy that records it). A graph already
    transformed to ``mode`` is returned as it is, one transformed to another mode is refused (the
    pass starts from the IR's types). Only the converter calls this
    (:func:`ir2onnx.lowering.convert.computed_graph`): everything else reads ``graph.precision``."""
    check_mode(mode)
    if graph.precision == mode:
        return graph
    if graph.precision is not None:
        raise Ir2OnnxError(f"the model is already computed in {graph.precision}: it cannot be converted "
                           f"at precision '{mode}' (start again from the IR)")
    if mode == "ir":
        out = copy.copy(graph)  # keeps what an in-memory model's graph carries
        out.precision = mode
        return out
    collecting = gc.isenabled()
    gc.disable()  # the pass only allocates (no cycles): the collector's scans of the graph took 75%
    try:
        out = _Pass(mode, graph.ir_version).run(graph, body=False)
    finally:
        if collecting:
            gc.enable()
    out.precision = mode
    return out


def io_type(etype: ElementType | None, ir_version: int, mode: str) -> ElementType | None:
    """The type a model input or output of declared type ``etype`` has after the pass."""
    if mode != "ir" and etype is not None and etype.name == "f16" and ir_version <= 10:
        return F32
    return etype


class _Pass:
    def __init__(self, mode: str, ir_version: int):
        self.mode, self.ir_version = mode, ir_version
        self.target = F32 if mode == "f32" else F16
        self.state: dict[str, ElementType] = {}  # variable_id -> its type after the pass

    def compute_type(self, layer: Layer) -> ElementType:
        if self.mode == "f16" and layer.type in KEEP_F32 and not layer.bodies:
            return F32
        return self.target

    def state_type(self, etype: ElementType | None) -> ElementType | None:
        return F32 if self.mode == "f32" and etype is not None and etype.name == "f16" else etype

    def run(self, graph: Graph, body: bool) -> Graph:
        try:
            roots, skip = decompression.find(graph)
        except Ir2OnnxError:  # a chain the converter refuses, or unpacks (--compressed-weights unpack):
            roots, skip = {}, set()  # its layers are typed like any others here
        opaque = set(skip) | set(roots)
        types: dict[tuple[str, int], ElementType | None] = {}  # (layer id, output) -> new type
        converts: dict[tuple[str, int, str], Layer] = {}  # (producer id, output, type) -> Convert
        after: dict[str, list[Layer]] = {}  # producer id -> Converts to place after it
        consumers = graph.consumers()
        layers: dict[str, Layer] = {}
        order: list[Layer] = []

        def convert(src: Source, to: ElementType) -> Source:
            key = (src.layer, src.output, to.name)
            conv = converts.get(key)
            if conv is None:
                producer = graph.layers[src.layer]
                port = producer.outputs[src.output]
                feeds_result = any(c.type == "Result" for c, _ in consumers.get((src.layer, src.output), []))
                conv = Layer(f"{src.layer}.{src.output}.to_{to.name}", f"{producer.name}/to_{to.name}",
                             "Convert", "opset1", {"destination_type": to},
                             [Port(0, types[(src.layer, src.output)], port.shape)],
                             [Port(1, to, port.shape, port.names if feeds_result else ())],
                             [src])
                converts[key] = conv
                after.setdefault(src.layer, []).append(conv)
                types[(conv.id, 0)] = to
            return Source(conv.id, 0)

        for layer in graph.order:
            new = self.layer(layer, graph, body, opaque, types)
            for i, src in enumerate(new.sources):
                have, want = types[(src.layer, src.output)], new.inputs[i].etype
                if have is not want and _moves(have) and _moves(want) and have.name != want.name:
                    new.sources[i] = convert(src, want)
            for o, port in enumerate(new.outputs):
                types[(layer.id, o)] = port.etype
            layers[new.id] = new
            order.append(new)
        out_order = []
        for new in order:  # each Convert right after its producer
            out_order.append(new)
            for conv in after.get(new.id, []):
                layers[conv.id] = conv
                out_order.append(conv)
        return Graph(graph.name, graph.ir_version, layers, out_order,
                     [layers[p.id] for p in graph.parameters], [layers[r.id] for r in graph.results],
                     graph.xml_path, graph.bin_path)

    def layer(self, layer: Layer, graph: Graph, body: bool, opaque: set, types: dict) -> Layer:
        """A copy of ``layer`` with its ports retyped (its sources still the old ones)."""
        have = [types[(s.layer, s.output)] for s in layer.sources]
        kind, attrs = layer.type, dict(layer.attrs)
        if kind == "Const" or layer.id in opaque:
            ins, outs = [p.etype for p in layer.inputs], [p.etype for p in layer.outputs]
        elif kind in ("Parameter", "Result"):
            port = (layer.outputs if kind == "Parameter" else layer.inputs)[0]
            to = self.retype(port.etype, self.target) if body else io_type(port.etype, self.ir_version, self.mode)
            if kind == "Parameter":
                attrs["element_type"] = to if _moves(attrs.get("element_type")) else attrs.get("element_type")
                ins, outs = [], [to]
            else:
                ins, outs = [to], []
        elif kind in STATE:
            ins, outs, attrs = self.state_ports(layer, attrs)
        else:
            c = self.compute_type(layer)
            keep = KEEP_INPUTS.get(kind, ())
            if kind in TRANSPARENT or (kind in SCATTERS and attrs.get("reduction", "none") == "none"):
                floats = {h.name for i, (h, p) in enumerate(zip(have, layer.inputs))
                          if i not in keep and _moves(p.etype) and _moves(h)}
                c = TYPES[floats.pop()] if len(floats) == 1 else c
            anything = ANY_INPUTS.get(kind, ())
            ins = [h if i in anything else p.etype if i in keep else self.retype(p.etype, c)
                   for i, (p, h) in enumerate(zip(layer.inputs, have))]
            outs = [p.etype if kind in ATTRIBUTE_TYPED else self.retype(p.etype, c) for p in layer.outputs]
        bodies = {k: Body(self.run(b.graph, body=True), b.inputs, b.outputs, b.back_edges)
                  for k, b in layer.bodies.items()}
        return Layer(layer.id, layer.name, layer.type, layer.version, attrs,
                     [Port(p.id, t, p.shape, p.names) for p, t in zip(layer.inputs, ins)],
                     [Port(p.id, t, p.shape, p.names) for p, t in zip(layer.outputs, outs)],
                     list(layer.sources), layer.const, layer.rt_info, bodies)

    @staticmethod
    def retype(etype: ElementType | None, to: ElementType) -> ElementType | None:
        return to if _moves(etype) else etype

    def state_ports(self, layer: Layer, attrs: dict):
        """ReadValue/Assign: the variable's type after the pass (f16 -> f32 in f32 mode)."""
        var = attrs.get("variable_id")
        if layer.type == "ReadValue":
            declared = attrs.get("variable_type")
            port = layer.outputs[0].etype
            to = self.state_type(declared if _moves(declared) else port)
            if _moves(declared):
                attrs["variable_type"] = to
            self.state[var] = to
            return [self.state_type(p.etype) for p in layer.inputs], \
                [self.state_type(p.etype) for p in layer.outputs], attrs
        to = self.state.get(var)
        fix = (lambda t: to if _moves(t) and _moves(to) else t)  # noqa: E731
        return [fix(p.etype) for p in layer.inputs], [fix(p.etype) for p in layer.outputs], attrs
