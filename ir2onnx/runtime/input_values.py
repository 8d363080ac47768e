"""Generated inputs that mean something, for ``run`` and ``check`` when no file is given.

Random normal floats and small integers exercise an op, but a model's inputs often have a
meaning the values must respect, or every output is NaN:

- an integer input that indexes a table (it reaches the indices input of a Gather or of an
  Embedding* layer through Convert, Reshape, Unsqueeze, Squeeze, Transpose, ...) gets values
  in ``[0, rows)`` of the smallest such table;
- an input named like a mask (``attention_mask``, anything with ``mask``) gets ones;
- ``token_type_ids`` (and ``segment_ids``) get zeros; ``position_ids`` get 0, 1, 2 ... along the
  last axis (within the table when it indexes one);
- an input that is an operation's parameter rather than its data gets a value valid for any
  model: a Range's start 0, limit 4 and delta 1 (also inputs named ``start``, ``limit``,
  ``delta``), scales of 1 (Interpolate/Resize), a count of 1 (a Loop's trip count, TopK's k,
  OneHot's depth, Tile's repeats);
- everything else stays random (:func:`ir2onnx.runtime.sessions.random_array`); ``--seed`` seeds both.

Dims are shared (:func:`shared_dims`): an input whose dynamic dims are tied to an input that
``--shape``/``--input`` sized (a symbolic dim of the same name; ``attention_mask``,
``token_type_ids``, ``position_ids`` beside ``input_ids``) takes its dims, not 1.

The tables are found in the IR (:func:`ir_hints`, the ports' declared dims) or in an ONNX
file (:func:`onnx_hints`, initializer dims and ONNX shape inference).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from ..ir.names import input_name, parameters

# layers that pass an input's values on (data input 0), possibly reshaped, retyped or reordered
_PASS_IR = {"Convert", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Broadcast", "Tile",
            "StridedSlice", "Slice", "Split", "VariadicSplit", "Concat", "Flatten"}
_PASS_ONNX = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Expand", "Tile", "Slice",
              "Split", "Concat", "Flatten", "Identity"}
# layer type -> (indices input, table input): the table's rows are its dim 0 (Gather: its axis)
_INDEXING_IR = {"Gather": (1, 0), "EmbeddingBagOffsetsSum": (1, 0), "EmbeddingBagOffsets": (1, 0),
                "EmbeddingSegmentsSum": (1, 0), "EmbeddingBagPackedSum": (1, 0)}


@dataclass(frozen=True)
class Hint:
    """What an input means: ``rows`` of the table it indexes (None: not an index); ``role``: the
    parameter of an operation it is (a key of :data:`ROLES`), or None."""

    rows: int | None = None
    role: str | None = None


# role -> (the one value every element gets, how check's report says it)
ROLES = {"start": (0, "0 (a range's start)"), "limit": (4, "4 (a range's limit)"),
         "delta": (1, "1 (a range's delta)"), "scale": (1, "ones (scales)"),
         "count": (1, "1 (a count)")}
_ROLE_NAMES = ("start", "limit", "delta")  # a one-element input of such a name
# (layer type, input port) -> role, in the IR; (node type, input index) -> role, in ONNX
_ROLES_IR = {("Range", 0): "start", ("Range", 1): "limit", ("Range", 2): "delta",
             ("Interpolate", 2): "scale", ("Loop", 0): "count", ("TopK", 1): "count",
             ("OneHot", 1): "count", ("Tile", 1): "count"}
_ROLES_ONNX = {("Range", 0): "start", ("Range", 1): "limit", ("Range", 2): "delta",
               ("Resize", 2): "scale", ("Upsample", 1): "scale", ("Loop", 0): "count",
               ("TopK", 1): "count", ("OneHot", 1): "count", ("Tile", 1): "count"}


def _ir_role(layer, port: int) -> str | None:
    """The role of ``layer``'s input ``port`` (Interpolate-11's input 1 is scales or sizes)."""
    if layer.type == "Interpolate" and layer.version == "opset11" and port == 1:
        return "scale" if layer.attrs.get("shape_calculation_mode") == "scales" else None
    if layer.type == "Interpolate" and layer.version == "opset11":
        return None
    return _ROLES_IR.get((layer.type, port))


def role_by_name(name: str, shape) -> str | None:
    """``start``/``limit``/``delta`` for a one-element input of that name (a Range expanded into
    the graph leaves no Range to trace)."""
    size = int(np.prod(shape, dtype=np.int64)) if shape is not None else 0
    last = name.lower().rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    return last if size == 1 and last in _ROLE_NAMES else None


def name_kind(name: str) -> str | None:
    """``'ones'``, ``'zeros'``, ``'arange'`` or None, by the input's name."""
    low = name.lower()
    if "mask" in low:
        return "ones"
    if low.endswith(("token_type_ids", "segment_ids")):
        return "zeros"
    if low.endswith("position_ids"):
        return "arange"
    return None


def generate(name: str, shape, dtype, rng: np.random.Generator,
             hint: Hint | None) -> tuple[np.ndarray | None, str]:
    """The value of one input and how it was made (for ``check``'s report); ``(None, 'random')``
    where nothing is known, and the caller draws random values."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    kind = name_kind(name)
    rows = hint.rows if hint and hint.rows and hint.rows > 0 else None
    numeric = dtype == np.bool_ or dtype.kind in "iuf"
    role = (hint.role if hint else None) or role_by_name(name, shape)
    if role in ROLES and dtype.kind in "iuf":
        value, how = ROLES[role]
        return np.full(shape, value, dtype), how
    if kind == "ones" and numeric:
        return np.ones(shape, dtype), "ones (a mask)"
    if kind == "zeros" and numeric:
        return np.zeros(shape, dtype), "zeros"
    if kind == "arange" and dtype.kind in "iuf" and shape:
        values = np.arange(shape[-1]) % (rows or max(shape[-1], 1))
        return np.broadcast_to(values, shape).astype(dtype), "0, 1, 2 ... (positions)"
    if rows and dtype.kind in "iu":
        high = min(rows, int(np.iinfo(dtype).max) + 1)
        return rng.integers(0, high, size=shape).astype(dtype), f"random indices in [0, {high})"
    return None, "random"


def text_family(name: str) -> bool:
    """Inputs of a text model that share its token dims: ``input_ids`` and its masks, token
    types, segment and position ids."""
    return name_kind(name) is not None or name.lower().endswith("input_ids")


def shared_dims(declared: dict[str, tuple | list | None], known: dict[str, tuple]) -> dict[str, tuple]:
    """Shapes for inputs that ``known`` (the shapes given with ``--shape`` or ``--input``) leaves
    open but whose dynamic dims are tied to a known input's: a symbolic dim (a str, an ONNX
    ``dim_param``) of the same name; or, between inputs tied by name (:func:`text_family`:
    ``attention_mask``, ``token_type_ids``, ``position_ids`` beside ``input_ids``) of the same
    rank, the dynamic dims at the same positions. ``declared``: every input's dims (an int, or
    None / a str for a dynamic dim). Only inputs with a tied dim are returned; their untied
    dynamic dims are 1, as generated inputs' are."""
    symbols: dict[str, int] = {}
    for name, shape in known.items():
        for d, v in zip(declared.get(name) or (), shape):
            if isinstance(d, str) and d:
                symbols.setdefault(d, int(v))
    anchors = [n for n in known if text_family(n) and declared.get(n) is not None
               and len(declared[n]) == len(known[n])]
    out = {}
    for name, dims in declared.items():
        if name in known or dims is None:
            continue
        shape: list[int | None] = [d if isinstance(d, int) else None for d in dims]
        for i, d in enumerate(dims):
            if isinstance(d, str) and d in symbols:
                shape[i] = symbols[d]
        anchor = next((a for a in anchors if len(known[a]) == len(dims)), None) if text_family(name) else None
        if anchor is not None:
            shape = [known[anchor][i] if s is None else s for i, s in enumerate(shape)]
        if any(s is not None and not isinstance(d, int) for s, d in zip(shape, dims)):
            out[name] = tuple(1 if s is None else int(s) for s in shape)
    return out


def _gather_rows(dims, axis: int) -> int | None:
    if dims is None or not dims:
        return None
    axis = axis + len(dims) if axis < 0 else axis
    if not 0 <= axis < len(dims):
        return None
    d = dims[axis]
    return d if isinstance(d, int) and d > 0 else None


def _smallest(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def ir_hints(graph) -> dict[str, Hint]:
    """Input name -> Hint for the Parameters of an IR Graph (only those that index a table)."""
    consumers = graph.consumers()
    hints = {}
    for param in parameters(graph):
        rows, role, seen, todo = None, None, set(), [(param, 0)]
        while todo:
            layer, out = todo.pop()
            if (layer.id, out) in seen:
                continue
            seen.add((layer.id, out))
            for user, port in consumers.get((layer.id, out), []):
                role = role or _ir_role(user, port)
                if user.type in _INDEXING_IR and port == _INDEXING_IR[user.type][0]:
                    axis = 0
                    if user.type == "Gather" and len(user.sources) > 2:
                        src, _ = graph.producer(user, 2)
                        if src.const is not None:
                            axis = int(np.asarray(src.const.array()).reshape(-1)[0])
                    table = user.inputs[_INDEXING_IR[user.type][1]].shape
                    rows = _smallest(rows, _gather_rows(table, axis))
                elif user.type in _PASS_IR and (port == 0 or user.type == "Concat"):
                    todo += [(user, i) for i in range(len(user.outputs))]
        if rows or role:
            hints[input_name(param)] = Hint(rows, role)
    return hints


def onnx_hints(model) -> dict[str, Hint]:
    """Input name -> Hint for the graph inputs of an ONNX ModelProto (weights need not be loaded)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # a model shape inference cannot follow: trace with what is declared
        inferred = model
    g = inferred.graph
    dims: dict[str, list] = {t.name: list(t.dims) for t in g.initializer}
    for vi in (*g.value_info, *g.input, *g.output):
        if vi.type.tensor_type.HasField("shape"):
            dims[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                             for d in vi.type.tensor_type.shape.dim]
    consts = {t.name: t for t in g.initializer}
    for node in g.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            consts[node.output[0]] = node.attribute[0].t
            dims[node.output[0]] = list(node.attribute[0].t.dims)
    users: dict[str, list] = {}

    def add_users(nodes) -> None:  # an If branch's nodes read outer names too (a cache reorder)
        for node in nodes:
            for i, name in enumerate(node.input):
                users.setdefault(name, []).append((node, i))
            for a in node.attribute:
                for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    add_users(sub.node)

    add_users(g.node)
    hints = {}
    initialized = set(consts)
    for inp in g.input:
        if inp.name in initialized:
            continue
        rows, role, seen, todo = None, None, set(), [inp.name]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for node, i in users.get(name, []):
                role = role or _ROLES_ONNX.get((node.op_type, i))
                if node.op_type == "Gather" and i == 1:
                    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                    rows = _smallest(rows, _gather_rows(dims.get(node.input[0]), axis))
                elif (node.op_type in _PASS_ONNX and (i == 0 or node.op_type == "Concat")
                      or node.op_type == "Where" and i > 0):  # the lowering's bounds guard of Gather-8
                    todo += list(node.output)
        if rows or role:
            hints[inp.name] = Hint(rows, role)
    return hints


def onnx_file_hints(path) -> dict[str, Hint]:
    """:func:`onnx_hints` of an .onnx file, its external data left unread; {} when unreadable."""
    try:
        return onnx_hints(onnx.load(str(path), load_external_data=False))
    except Exception:  # onnxruntime will report an unreadable file in its own words
        return {}


def nonfinite(outputs: dict[str, np.ndarray]) -> dict[str, str]:
    """Output name -> ``'3 NaN, 1 Inf of 16'`` for the float outputs holding NaN or Inf."""
    found = {}
    for name, value in outputs.items():
        value = np.asarray(value)
        if value.dtype.kind != "f" and value.dtype.name != "bfloat16":
            continue
        v = value.astype(np.float32) if value.dtype.kind != "f" else value
        nan, inf = int(np.isnan(v).sum()), int(np.isinf(v).sum())
        if nan or inf:
            parts = [f"{nan} NaN"] * bool(nan) + [f"{inf} Inf"] * bool(inf)
            found[name] = f"{', '.join(parts)} of {v.size}"
    return found
