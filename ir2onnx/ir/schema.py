"""Op schemas from the ``opsets/`` data files, and attribute parsing against them.

Each ``opsets/<Type>.json`` describes one operation type::

    {"type": "Reshape",
     "versions": {"opset1": {
         "inputs": [{"name": "data"}, {"name": "shape"}],
         "attributes": {"special_zero": {"type": "bool", "required": true}}}}}

Attribute types: ``int``, ``ints``, ``float``, ``floats``, ``bool``, ``str``, ``strs``,
``etype`` (an element type name) and ``shape`` (a partial shape such as ``?,3,1..8``).
An attribute may give ``default`` (already in its typed form) and ``allowed`` (a list of values).
Inputs may be ``"optional": true``. ``"variadic": true`` on the last input allows any count.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import IRFormatError
from .element_types import element_type
from .limits import MAX_DIM


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: str
    required: bool = False
    default: Any = None
    allowed: tuple | None = None


@dataclass(frozen=True)
class OpSchema:
    type: str
    version: str
    inputs: tuple[dict, ...]
    attributes: dict[str, AttrSpec] = field(default_factory=dict)
    doc: str = ""

    @property
    def min_inputs(self) -> int:
        return sum(1 for i in self.inputs if not i.get("optional") and not i.get("variadic"))

    @property
    def max_inputs(self) -> int | None:
        if self.inputs and self.inputs[-1].get("variadic"):
            return None
        return len(self.inputs)


def data_folder():
    """The folder of ``<Type>.json`` files.

    In a source tree (a checkout, or an editable install) it is ``opsets/`` beside the package;
    an installed package carries it as ``ir2onnx._opsets``. The source tree is tried first: run
    from a checkout's root, ``import ir2onnx`` finds the checkout's package (the current folder
    comes first on ``sys.path``), which must read the checkout's data, not an installed copy.
    """
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "opsets" / "__init__.py").is_file():
        return checkout / "opsets"
    return resources.files("ir2onnx._opsets")


@lru_cache(maxsize=None)
def schemas() -> dict[tuple[str, str], OpSchema]:
    """Every schema from the data files, keyed by ``(type, version)``."""
    out: dict[tuple[str, str], OpSchema] = {}
    root = data_folder()
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        for version, spec in data["versions"].items():
            attrs = {
                name: AttrSpec(name, a["type"], a.get("required", False), a.get("default"),
                               tuple(a["allowed"]) if "allowed" in a else None)
                for name, a in spec.get("attributes", {}).items()
            }
            key = (data["type"], version)
            if key in out:
                raise RuntimeError(f"opsets/: {key} described twice")
            out[key] = OpSchema(data["type"], version, tuple(spec.get("inputs", [])), attrs,
                                spec.get("doc", ""))
    return out


def parse_dims(text: str, *, allow_dynamic: bool) -> tuple[int | None, ...] | None:
    """Parse ``1,3,?,1..8`` into dims (``None`` for dynamic); ``...`` means dynamic rank."""
    text = text.strip()
    if text in ("...", "?..."):
        return None
    if text == "":
        return ()
    dims: list[int | None] = []
    for part in text.split(","):
        part = part.strip()
        if allow_dynamic and (part in ("?", "-1") or ".." in part):
            if ".." in part:
                lo, _, hi = part.partition("..")
                for bound in (lo, hi):
                    if bound.strip() not in ("", "-1") and not bound.strip().isdigit():
                        raise ValueError(f"bad dimension '{part}'")
            dims.append(None)
            continue
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"bad dimension '{part}'") from None
        if value < 0:
            raise ValueError(f"negative dimension {value}")
        if value > MAX_DIM:
            raise ValueError(f"dimension {value} is out of range (the limit is {MAX_DIM}, 2^36)")
        dims.append(value)
    return tuple(dims)


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise ValueError(f"'{text}' is not a boolean")


def _list(text: str, item) -> list:
    text = text.strip()
    return [] if text == "" else [item(p.strip()) for p in text.split(",")]


def parse_value(kind: str, text: str) -> Any:
    """Turn an attribute string into its typed value; ValueError when it does not parse."""
    if kind == "int":
        return int(text.strip())
    if kind == "ints":
        return _list(text, int)
    if kind == "float":
        return float(text.strip())
    if kind == "floats":
        return _list(text, float)
    if kind == "bool":
        return _bool(text)
    if kind == "str":
        return text.strip()
    if kind == "strs":
        return _list(text, str)
    if kind == "etype":
        try:
            return element_type(text)
        except IRFormatError as e:
            raise ValueError(str(e)) from None
    if kind == "shape":
        return parse_dims(text, allow_dynamic=True)
    raise RuntimeError(f"opsets/: unknown attribute type '{kind}'")


def parse_attributes(schema: OpSchema | None, raw: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Typed attributes (defaults filled in) and a list of problems, for one layer.

    Without a schema the attributes stay strings (the layer is reported as unsupported later).
    """
    if schema is None:
        return dict(raw), []
    typed: dict[str, Any] = {}
    problems: list[str] = []
    for name, spec in schema.attributes.items():
        if name not in raw:
            if spec.required:
                problems.append(f"attribute '{name}' is required")
            else:
                typed[name] = spec.default
            continue
        try:
            value = parse_value(spec.type, raw[name])
        except ValueError as e:
            problems.append(f"attribute {name}='{raw[name]}' is not a valid {spec.type}: {e}")
            continue
        if spec.allowed is not None and value not in spec.allowed:
            allowed = ", ".join(map(str, spec.allowed))
            problems.append(f"attribute {name}='{raw[name]}' is not one of: {allowed}")
            continue
        typed[name] = value
    for name, text in raw.items():  # attributes the schema does not know are kept verbatim
        typed.setdefault(name, text)
    return typed, problems
