"""LLM IRs as LLMs: where a decoder's KV cache lives, and the feeds of each decode step.

optimum-intel exports a decoder as ``input_ids``, ``attention_mask``, ``position_ids`` (most
architectures) and, stateful by default, ``beam_idx``; each layer's key and value cache is a
ReadValue/Assign variable (``past_key_values.N.keypresent.N.key``) that ``beam_idx`` reorders
(``Gather(axis=batch)``) before a ``Concat`` along the sequence axis appends the new tokens.
``--disable-stateful`` exports the cache as inputs ``past_key_values.N.key/value`` and outputs
``present.N.key/value`` instead. Either way the first step's cache is empty: zeros with the batch
of ``input_ids`` and a 0-length sequence axis.

The converted model says so itself (:func:`document`): a ``metadata_props`` entry
``ir2onnx.state.<input>`` per cache input, JSON ``{"output", "batch_axis", "sequence_axis",
"initial_shape"}`` (``initial_shape``: the batch as the symbol of ``input_ids``' first dim, the
sequence axis 0), and the cache inputs share that batch symbol. :func:`interface` reads it back
from any ONNX model, so ``ir2onnx run --steps`` and :mod:`ir2onnx.llm.decode` need only the file.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..ir.names import input_name, parameters

META_PREFIX = "ir2onnx.state."
NEW = ".new"
TOKEN_INPUTS = ("input_ids", "attention_mask", "position_ids", "beam_idx")
_PAST = re.compile(r"past_key_values\.(\d+)\.(key|value)")


@dataclass
class Cache:
    """One state input: its name, the output that carries it to the next step, and its axes."""

    input: str
    output: str
    batch_axis: int
    sequence_axis: int
    initial_shape: list  # ints, with the batch as a str (the batch symbol)


@dataclass
class Interface:
    """The LLM-facing inputs and outputs of a converted model."""

    inputs: dict  # the present TOKEN_INPUTS: name -> numpy dtype
    logits: str | None
    caches: list[Cache] = field(default_factory=list)

    def has(self, name: str) -> bool:
        return name in self.inputs


# -- reading the IR ------------------------------------------------------------------------------
def _consumers(graph: Graph, layer_id: str) -> list:
    return [l for l in graph.order if any(s.layer == layer_id for s in l.sources)]


def _const_int(graph: Graph, layer, port: int) -> int | None:
    src = graph.layers[layer.sources[port].layer]
    if src.type != "Const" or src.const is None:
        return None
    value = np.asarray(src.const.array()).reshape(-1)
    return int(value[0]) if value.size == 1 else None


def cache_layout(graph: Graph) -> dict[str, tuple[int, int]]:
    """variable_id -> (batch axis, sequence axis) for each variable that is a KV cache: the axis
    of the ``Gather`` by ``beam_idx`` (0 without one) and of the ``Concat`` that appends to it."""
    out = {}
    for read in graph.order:
        if read.type != "ReadValue":
            continue
        rank = len(read.outputs[0].shape or ())
        batch, seq, frontier = 0, None, [read]
        while frontier and seq is None:
            nxt = []
            for layer in frontier:
                for c in _consumers(graph, layer.id):
                    if c.type == "Gather" and len(c.sources) >= 3:
                        axis = _const_int(graph, c, 2)
                        batch = axis % rank if axis is not None and rank else batch
                        nxt.append(c)
                    elif c.type == "Concat":
                        seq = int(c.attrs.get("axis", 0)) % rank if rank else None
                    elif c.type == "Convert":
                        nxt.append(c)
            frontier = nxt
        if seq is not None:
            out[read.attrs["variable_id"]] = (batch, seq)
    return out


def is_llm(graph: Graph) -> bool:
    """A decoder exported for text generation: an ``input_ids`` Parameter and a KV cache."""
    names = {input_name(p) for p in parameters(graph)}
    return "input_ids" in names and (bool(cache_layout(graph)) or any(_PAST.fullmatch(n) for n in names))


# -- documenting the converted model -----------------------------------------------------------
def document(graph: Graph, model) -> None:
    """Add the ``ir2onnx.state.*`` metadata to ``model`` (a ModelProto) and give its state inputs
    the batch symbol of ``input_ids`` (see the module docstring)."""
    layout = cache_layout(graph)
    inputs = {i.name: i for i in model.graph.input}
    if not layout and not any(_PAST.fullmatch(n) for n in inputs):
        return
    batch = _batch_symbol(inputs.get("input_ids"))
    for name, info in inputs.items():
        if name in layout:
            b_axis, s_axis = layout[name]
            output = name + NEW
        elif _PAST.fullmatch(name) and len(info.type.tensor_type.shape.dim) == 4:
            b_axis, s_axis = 0, 2  # optimum's explicit cache: [batch, heads, sequence, head size]
            output = name.replace("past_key_values.", "present.")
        else:
            continue
        dims = info.type.tensor_type.shape.dim
        if batch is not None and dims[b_axis].dim_param:
            dims[b_axis].dim_param = batch
        shape = []
        for i, d in enumerate(dims):
            if i == s_axis:
                shape.append(0)
            elif i == b_axis:
                shape.append(batch or "batch")
            else:
                shape.append(d.dim_value if d.HasField("dim_value") else d.dim_param or "?")
        meta = model.metadata_props.add()
        meta.key = META_PREFIX + name
        meta.value = json.dumps({"output": output, "batch_axis": b_axis, "sequence_axis": s_axis,
                                 "initial_shape": shape})


def _batch_symbol(info) -> str | None:
    if info is None or not info.type.tensor_type.shape.dim:
        return None
    d = info.type.tensor_type.shape.dim[0]
    return d.dim_param or None


# -- reading the converted model ----------------------------------------------------------------
def interface(model) -> Interface | None:
    """The LLM interface of a ModelProto (initializers not needed), or None when it has no
    ``input_ids`` or no cache: documented ones, else ``past_key_values.N.key/value`` inputs with
    ``present.N.*`` outputs taken as optimum lays them out, [batch, heads, sequence, head size]."""
    types = {i.name: helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
             for i in model.graph.input}
    if "input_ids" not in types:
        return None
    caches = []
    for meta in model.metadata_props:
        if meta.key.startswith(META_PREFIX):
            d = json.loads(meta.value)
            caches.append(Cache(meta.key[len(META_PREFIX):], d["output"], d["batch_axis"],
                                d["sequence_axis"], d["initial_shape"]))
    outputs = [o.name for o in model.graph.output]
    if not caches:  # an explicit cache without ir2onnx's metadata (optimum's own ONNX export)
        batch = _batch_symbol(next(i for i in model.graph.input if i.name == "input_ids")) or "batch"
        for i in model.graph.input:
            present = i.name.replace("past_key_values.", "present.")
            dims = i.type.tensor_type.shape.dim
            if _PAST.fullmatch(i.name) and present in outputs and len(dims) == 4:
                shape = [batch, dims[1].dim_value or "?", 0, dims[3].dim_value or "?"]
                caches.append(Cache(i.name, present, 0, 2, shape))
    if not caches:
        return None
    logits = "logits" if "logits" in outputs else outputs[0]
    return Interface({n: types[n] for n in TOKEN_INPUTS if n in types}, logits, caches)


def load_interface(path) -> Interface | None:
    """:func:`interface` of an .onnx file, read without its weights."""
    try:
        return interface(onnx.load(str(path), load_external_data=False))
    except Exception:  # not an ONNX file: onnxruntime says so when it loads it
        return None


# -- feeds ---------------------------------------------------------------------------------------
def _dtype(iface: Interface, name: str):
    t = np.dtype(iface.inputs[name])
    if t.kind not in "iu":
        raise Ir2OnnxError(f"input '{name}' is {t}; ir2onnx feeds integer token inputs only")
    return t


def token_feeds(iface: Interface, ids: np.ndarray, past: int, given: dict | None = None) -> dict:
    """One decode step's token inputs: ``ids`` [batch, n], the mask ones over past + n tokens,
    positions past .. past+n-1, ``beam_idx`` arange(batch) (no reordering). ``given`` wins."""
    given = given or {}
    batch, n = ids.shape
    feeds = {"input_ids": ids.astype(_dtype(iface, "input_ids"))}
    if iface.has("attention_mask"):
        feeds["attention_mask"] = np.ones((batch, past + n), _dtype(iface, "attention_mask"))
    if iface.has("position_ids"):
        pos = np.arange(past, past + n)[None].repeat(batch, 0)
        feeds["position_ids"] = pos.astype(_dtype(iface, "position_ids"))
    if iface.has("beam_idx"):
        feeds["beam_idx"] = np.arange(batch).astype(_dtype(iface, "beam_idx"))
    feeds.update({k: v for k, v in given.items() if k in feeds})
    return feeds


def empty_cache(iface: Interface, batch: int, dtypes: dict) -> dict[str, np.ndarray]:
    """The first step's cache: zeros of each initial shape for this batch."""
    out = {}
    for c in iface.caches:
        shape = [batch if i == c.batch_axis else d for i, d in enumerate(c.initial_shape)]
        if any(not isinstance(d, int) for d in shape):
            raise Ir2OnnxError(f"the initial shape of state input '{c.input}' has unknown dims "
                               f"{c.initial_shape}: feed it with --input")
        out[c.input] = np.zeros(shape, dtypes.get(c.input, np.float32))
    return out


def prompt(iface: Interface, given: dict, shapes: dict, vocab: int, seed: int) -> np.ndarray:
    """The prompt ids: ``--input input_ids=...``, else random in [0, vocab) of ``--shape
    input_ids=B,N`` (default 1,8)."""
    if "input_ids" in given:
        ids = np.asarray(given["input_ids"])
        if ids.ndim != 2:
            raise Ir2OnnxError(f"input_ids must be [batch, tokens], the file holds shape {list(ids.shape)}")
        return ids
    shape = tuple(shapes.get("input_ids", (1, 8)))
    if len(shape) != 2 or 0 in shape:
        raise Ir2OnnxError(f"--shape input_ids={','.join(map(str, shape))}: expected BATCH,TOKENS")
    return np.random.default_rng(seed).integers(0, vocab, size=shape)
