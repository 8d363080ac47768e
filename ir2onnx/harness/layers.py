"""The first layer that drifts: ``ir2onnx check --layers``.

Every IR layer's output is made a model output on both sides, the converted ONNX model (each
layer's value as the converter lowered it: :func:`ir2onnx.lowering.convert.convert_graph` with
``expose_layers``) and OpenVINO (``Model.add_outputs`` on the op of the same name and type), both
run on the check's inputs, and the layers are compared in graph order. The first layer whose
values differ beyond the tolerance is where the two runtimes part; the ones after it show whether
the difference grows or stays. Layers that compute constants (weight decompression, shape
arithmetic: nothing upstream is a model input) are not listed; layers that only one side
exposes (an op OpenVINO renamed) are counted as left out.

Exposing a value as an output keeps both runtimes from fusing across it, so a layer-wise run can
differ slightly from the model's normal run (its outputs are still compared normally).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..ir.names import input_name, parameters
from ..lowering.convert import convert_graph
from ..runtime import sessions
from ..runtime.stateful import variables
from ..writer import save
from .backends import OPENVINO_EXACT, Refused, _as_float, _ov_tensor, run_openvino_isolated
from .compare import default_tolerance

SKIPPED = ("Parameter", "Result", "Const")


@dataclass
class LayerError:
    """One layer output compared: ``rel`` is the largest difference over the largest magnitude of
    the reference's values (scale-free, so layers compare with each other)."""

    index: int  # position in graph order (of the compared layers' ports)
    layer: str  # the IR layer's name
    type: str  # "Convolution-opset1"
    port: int
    shape: tuple
    max_abs: float
    rel: float
    outside: int  # elements outside the tolerance
    size: int
    reason: str = ""  # compared no values (shape or dtype differ)

    @property
    def beyond(self) -> bool:
        return self.outside > 0 or bool(self.reason)

    def to_dict(self) -> dict:
        return {"index": self.index, "layer": self.layer, "type": self.type, "port": self.port,
                "shape": list(self.shape), "max_abs": self.max_abs, "rel": self.rel,
                "outside": self.outside, "size": self.size, "beyond": self.beyond, "reason": self.reason}


@dataclass
class LayerDrift:
    """Every compared layer in graph order, with ``first`` the index in ``layers`` of the first one
    beyond tolerance (None: none is)."""

    a: str
    b: str
    rtol: float | None
    atol: float | None
    layers: list[LayerError] = field(default_factory=list)
    left_out: int = 0  # layer outputs one side does not expose
    message: str = ""  # why no layer was compared (OpenVINO refused the IR, a runtime failed)

    @property
    def first(self) -> int | None:
        return next((i for i, e in enumerate(self.layers) if e.beyond), None)

    def growth(self, i: int) -> float | None:
        """``rel`` of layer ``i`` over that of the first drifting layer (after it), else None."""
        f = self.first
        if f is None or i <= f or self.layers[f].rel == 0:
            return None
        return self.layers[i].rel / self.layers[f].rel

    def summary(self) -> str:
        """One line: the first layer beyond tolerance and how the error grows after it."""
        f = self.first
        if self.message:
            return f"layers not compared: {self.message}"
        if f is None:
            return (f"no layer beyond tolerance: {len(self.layers)} layer output(s) of {self.a} and "
                    f"{self.b} agree")
        e = self.layers[f]
        what = e.reason or (f"{e.outside} of {e.size} element(s) outside tolerance, max abs "
                            f"{e.max_abs:.3g}, rel {e.rel:.3g}")
        line = f"first layer beyond tolerance: #{e.index} '{e.layer}' ({e.type}): {what}"
        after = [i for i in range(f + 1, len(self.layers)) if self.growth(i) is not None]
        if after:
            peak = max(after, key=lambda i: self.layers[i].rel)
            p, last = self.layers[peak], self.layers[-1]
            line += (f"; after it the error peaks at #{p.index} '{p.layer}' (rel {p.rel:.3g}, "
                     f"{self.growth(peak):.3g}x)" + (
                         f"; the last compared layer, '{last.layer}', is at rel {last.rel:.3g} "
                         f"({self.growth(len(self.layers) - 1):.3g}x)"
                         if last.rel else f"; the last compared layer, '{last.layer}', agrees exactly"))
        return line

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "rtol": self.rtol, "atol": self.atol, "first": self.first,
                "left_out": self.left_out, "message": self.message, "summary": self.summary(),
                "layers": [e.to_dict() for e in self.layers]}


def compare_layer(index: int, layer, port: int, a: np.ndarray, b: np.ndarray,
                  rtol: float | None, atol: float | None) -> LayerError:
    """One layer output, ``b`` the reference (OpenVINO)."""
    a, b = np.asarray(a), np.asarray(b)
    kind = f"{layer.type}-{layer.version}"
    if a.shape != b.shape:
        return LayerError(index, layer.name, kind, port, tuple(a.shape), float("inf"), float("inf"),
                          a.size, a.size, f"shape {list(a.shape)} vs {list(b.shape)}")
    coarse = min((a.dtype, b.dtype), key=lambda t: (t.kind != "f", t.itemsize))  # an f16 value: f16's
    d_rtol, d_atol = default_tolerance(coarse)
    r = d_rtol if rtol is None else rtol
    t = d_atol if atol is None else atol
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        same = (fa == fb) | (np.isnan(fa) & np.isnan(fb))
        diff = np.where(same, 0.0, np.abs(fa - fb))
        diff = np.where(np.isnan(diff), np.inf, diff)
        bad = diff > t + r * np.maximum(np.abs(fa), np.abs(fb))
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.nanmax(np.abs(np.where(np.isfinite(fb), fb, 0.0)))) if fb.size else 0.0
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    return LayerError(index, layer.name, kind, port, tuple(a.shape), max_abs, rel,
                      int(np.count_nonzero(bad)), int(a.size))


def can_compare_layers(graph: Graph) -> None:
    """Raise :class:`~ir2onnx.errors.Ir2OnnxError` when :func:`layer_drift` cannot run: OpenVINO
    is not installed, or the model is stateful (one step's layers say nothing of the next's)."""
    if variables(graph):
        raise Ir2OnnxError("--layers: a stateful model (ReadValue/Assign) is not compared layer by layer")
    try:
        import openvino  # noqa: F401
    except ImportError:
        raise Ir2OnnxError("--layers compares onnxruntime with OpenVINO layer by layer: "
                           "install openvino (pip install openvino)") from None


def layer_drift(graph: Graph, feeds: dict[str, np.ndarray], *, opset: int | None = None,
                rtol: float | None = None, atol: float | None = None, isolate: bool = False) -> LayerDrift:
    """Compare every layer output of the converted model (onnxruntime, CPU) with OpenVINO's.

    ``graph`` is the graph the check converted, computed at its precision (``graph.precision``,
    which the OpenVINO child reads to compute the IR the same way), ``feeds`` the check's inputs.
    ``rtol``/``atol``: None keeps each layer's default tolerance (by its element type).
    Raises :class:`~ir2onnx.errors.Ir2OnnxError` where :func:`can_compare_layers` says no. When a
    runtime fails on the model with every layer exposed (OpenVINO refuses the IR, its child process
    crashes), the result holds no layer and says why (``message``).
    """
    can_compare_layers(graph)
    converted = convert_graph(graph, opset, expose_layers=True)
    wanted = sorted({(graph.layers[lid].name, graph.layers[lid].type, port)
                     for lid, port in converted.probes.values()})
    drift = LayerDrift("ort:cpu", "openvino", rtol, atol)
    try:
        with tempfile.TemporaryDirectory(prefix="ir2onnx-layers-") as tmp:
            path = save(converted, Path(tmp) / "layers.onnx", check=False)
            ort_values = sessions.run(sessions.session(path, "cpu", quiet=True), feeds)
    except Exception as e:  # reported, like a backend's failure: the outputs are still compared
        drift.message = f"onnxruntime failed on the model with every layer exposed: {' '.join(str(e).split())[:300]}"
        return drift
    run = run_openvino_layers_isolated if isolate else run_openvino_layers
    try:
        ov_values = run(graph, feeds, wanted)
    except Exception as e:  # Refused (an IR OpenVINO cannot run) or a crash in its child process
        drift.message = " ".join(str(e).split())[:400] or type(e).__name__
        return drift
    by_key = {key: name for name, key in converted.probes.items()}
    live = _downstream_of_inputs(graph)
    for layer in graph.order:
        if layer.type in SKIPPED or layer.id not in live:
            continue
        for port in range(len(layer.outputs)):
            name = by_key.get((layer.id, port))
            theirs = ov_values.get((layer.name, port))
            if name is None or theirs is None or name not in ort_values:
                drift.left_out += 1
                continue
            drift.layers.append(compare_layer(len(drift.layers), layer, port, ort_values[name], theirs,
                                              rtol, atol))
    return drift


def _downstream_of_inputs(graph: Graph) -> set[str]:
    """Ids of the layers that depend on a model input: the others compute constants (weight
    decompression, shapes), the same on every run, and are left out of the table."""
    live: set[str] = set()
    for layer in graph.order:
        if layer.type == "Parameter" or any(s.layer in live for s in layer.sources):
            live.add(layer.id)
    return live


def run_openvino_layers(graph: Graph, feeds: dict, wanted: list) -> dict:
    """OpenVINO's CPU plugin (f32 inference precision) with the output of each op named in
    ``wanted`` (``(layer name, type, port)``) added to the model's outputs: ``{(name, port): array}``.
    An op is found by name and type (OpenVINO keeps the IR's layer names), so a Convert it inserts
    under a layer's name is not taken for the layer."""
    import openvino as ov

    core = ov.Core()
    try:
        model = core.read_model(graph.xml_path, graph.bin_path) if graph.bin_path and Path(
            graph.bin_path).is_file() else core.read_model(graph.xml_path)
    except Exception as e:
        raise Refused(f"OpenVINO cannot load this IR: {' '.join(str(e).split())[-300:]}") from None
    ops: dict[tuple[str, str], list] = {}
    for op in model.get_ordered_ops():
        ops.setdefault((op.friendly_name, op.get_type_name().lower()), []).append(op)
    ports, keys = [], []
    for name, kind, port in wanted:
        found = ops.get((name, kind.lower()), [])  # (the IR's ReLU is OpenVINO's Relu)
        if len(found) == 1 and port < found[0].get_output_size():  # ambiguous names are left out
            ports.append(found[0].output(port))
            keys.append((name, port))
    if ports:
        model.add_outputs(ports)  # (a port that is a model output already is not added twice)
    where = {}
    for i, out in enumerate(model.outputs):
        src = out.get_node().input_value(0)
        where.setdefault((src.get_node().friendly_name, src.get_index()), i)
    try:
        compiled = core.compile_model(model, "CPU", OPENVINO_EXACT)
    except Exception as e:
        raise Refused(f"OpenVINO cannot compile this IR: {' '.join(str(e).split())[-300:]}") from None
    by_param = {p.name: input_name(p) for p in parameters(graph)}
    request = compiled.create_infer_request()
    for i, port in enumerate(compiled.inputs):
        value = feeds[by_param[port.get_node().friendly_name]]
        request.set_input_tensor(i, _ov_tensor(ov, _as_float(value, port.get_element_type())))
    request.infer()
    return {key: np.array(request.get_output_tensor(where[key]).data) for key in keys if key in where}


def run_openvino_layers_isolated(graph: Graph, feeds: dict, wanted: list) -> dict:
    """:func:`run_openvino_layers` in a child process (see
    :func:`ir2onnx.harness.backends.run_openvino_isolated`: a crash inside OpenVINO is reported,
    not fatal)."""
    return run_openvino_isolated(graph, {"feeds": feeds, "wanted": wanted}, layers=True)


def _shape(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _mark(drift: LayerDrift, i: int) -> str:
    if i == drift.first:
        return "FIRST"
    g = drift.growth(i)
    return "" if not g else f"{g:.3g}x"


def text_lines(drift: LayerDrift) -> list[str]:
    """The ``check --layers`` table: every compared layer output in graph order, the first one
    beyond tolerance marked FIRST, the later ones with their error as a multiple of its."""
    if drift.message:
        return [f"layers  not compared: {drift.message}"]
    lines = [f"layers  {drift.a} vs {drift.b}: {len(drift.layers)} layer output(s) in graph order"
             + (f" ({drift.left_out} not exposed by both)" if drift.left_out else "")
             + "; rel = max |a-b| / max |b|",
             f"  {'#':>4} {'type':<24} {'shape':<16} {'max abs':>9} {'rel':>9} {'outside':>13} {'growth':>8}  layer"]
    for i, e in enumerate(drift.layers):
        outside = e.reason or f"{e.outside}/{e.size}"
        lines.append(f"  {e.index:>4} {e.type:<24} {_shape(e.shape):<16} {e.max_abs:>9.3g} {e.rel:>9.3g} "
                     f"{outside:>13} {_mark(drift, i):>8}  {e.layer}")
    lines.append(f"  {drift.summary()}")
    return lines


def markdown_lines(drift: LayerDrift) -> list[str]:
    """The same table in Markdown."""
    if drift.message:
        return ["", f"#### Layer by layer: {drift.a} vs {drift.b}", "", drift.summary()]
    lines = ["", f"#### Layer by layer: {drift.a} vs {drift.b}", "", drift.summary()
             + (f" ({drift.left_out} layer output(s) not exposed by both.)" if drift.left_out else ""), "",
             "| # | layer | type | shape | max abs | rel | outside | growth |", "|---|---|---|---|---|---|---|---|"]
    for i, e in enumerate(drift.layers):
        name = e.layer.replace("|", "/")
        lines.append(f"| {e.index} | `{name}` | {e.type} | {_shape(e.shape)} | {e.max_abs:.3g} | {e.rel:.3g} "
                     f"| {e.reason or f'{e.outside}/{e.size}'} | {_mark(drift, i)} |")
    return lines
