"""The few lines ``ir2onnx convert`` prints about what it wrote: inputs and outputs (type and
shape), node count by op type, weights by precision, file size and opset, and a hint where an
output carries only OpenVINO's per-export name ``Result_<id>``.

Example::

    inputs   input_ids int64 [?,?], attention_mask int64 [?,?]
    outputs  last_hidden_state float32 [?,?,16], pooler_output float32 [?,16]
    nodes    203: Constant 52, Add 24, MatMul 18, Reshape 16, Mul 14, Transpose 12, ... (19 op types)
    weights  f16 41.0 kB in 25 tensors, i64 1.2 kB in 40 tensors
"""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import onnx

RESULT_NAME = re.compile(r"^Result_\d+$")  # OpenVINO's name for an unnamed output: new on each export
TOP_OPS = 6


def size_text(n: float) -> str:
    """``1234567`` -> ``'1.2 MB'`` (decimal units, as file managers show them)."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # unreachable


def _type_name(elem_type: int) -> str:
    """numpy's spelling: float32, float16, int64, bool, bfloat16 ..."""
    name = onnx.TensorProto.DataType.Name(elem_type).lower()
    return {"float": "float32", "double": "float64"}.get(name, name)


def value_text(vi: onnx.ValueInfoProto) -> str:
    """``'x float32 [?,3,224,224]'``; a dim with a name of its own shows it."""
    t = vi.type.tensor_type
    kind = _type_name(t.elem_type)
    if not t.HasField("shape"):
        return f"{vi.name} {kind} (any rank)"
    dims = [str(d.dim_value) if d.HasField("dim_value") else _dim_name(d.dim_param) for d in t.shape.dim]
    return f"{vi.name} {kind} [{','.join(dims)}]"


def _dim_name(param: str) -> str:
    """A dynamic dim: ``?`` for the converter's own ``<input>_d<k>`` names, else the name given."""
    return "?" if not param or re.fullmatch(r".*_d\d+", param) else param


def _nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                yield from _nodes(sub)


def _tensor_bytes(t) -> int:
    data = t.data
    if hasattr(data, "size") and hasattr(data, "offset"):  # a ConstData range of the .bin
        return data.size
    count = 1
    for d in t.dims:
        count *= d
    return (count * t.etype.bits + 7) // 8


def weights_text(tensors) -> str:
    """``'f16 12.3 MB in 40 tensors, u4 (packed) 40.1 MB in 24 tensors, other 2.1 kB'``: types
    largest first; those under 1 kB (shapes, axes) summed as ``other``."""
    by_type: dict[str, list[int]] = {}
    for t in tensors:
        name = t.etype.name + (" (packed)" if t.etype.bits < 8 else "")
        entry = by_type.setdefault(name, [0, 0])
        entry[0] += _tensor_bytes(t)
        entry[1] += 1
    if not by_type:
        return "none"
    parts = sorted(by_type.items(), key=lambda kv: -kv[1][0])
    shown = [kv for i, kv in enumerate(parts) if i == 0 or kv[1][0] >= 1000]
    rest = sum(n for _, (n, _) in parts[len(shown):])
    text = ", ".join(f"{name} {size_text(n)} in {k} tensor{'s' * (k != 1)}" for name, (n, k) in shown)
    return text + (f", other {size_text(rest)}" if len(shown) < len(parts) else "")


def file_bytes(path: str | os.PathLike) -> int:
    """The size of an .onnx file plus its ``.data`` file, when it has one."""
    path = Path(path)
    data = path.with_name(path.name + ".data")
    try:
        extra = data.stat().st_size if data.is_file() else 0
    except OSError:  # a 251-255-byte name leaves no room for '.data': it has none
        extra = 0
    return path.stat().st_size + extra


def unstable_outputs(model: onnx.ModelProto) -> list[str]:
    """The outputs named only ``Result_<id>`` (OpenVINO's name for an output that had none)."""
    return [o.name for o in model.graph.output if RESULT_NAME.match(o.name)]


def summary_lines(model: onnx.ModelProto, tensors) -> list[str]:
    """The lines ``convert`` prints (without a prefix) for ``model`` (initializers listed in
    ``tensors``, the writer's TensorEntry list)."""
    ops = Counter(n.op_type for n in _nodes(model.graph))
    top = ", ".join(f"{op} {k}" for op, k in ops.most_common(TOP_OPS))
    more = f", ... ({len(ops)} op types)" if len(ops) > TOP_OPS else ""
    lines = [
        "inputs   " + (", ".join(value_text(v) for v in model.graph.input) or "none"),
        "outputs  " + ", ".join(value_text(v) for v in model.graph.output),
        f"nodes    {sum(ops.values())}: {top}{more}",
        "weights  " + weights_text(tensors),
    ]
    for name in unstable_outputs(model):
        lines.append(f"note     output '{name}' has only OpenVINO's per-export name (Result_<id> "
                     f"changes on every export): give it a stable one with --rename {name}=NAME")
    return lines
