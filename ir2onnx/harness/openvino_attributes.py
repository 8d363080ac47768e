"""Does OpenVINO run the IR as written? The attributes of each layer that OpenVINO's op does not
carry, found by the layer's identity, and whether their values matter (opsets/ defaults)."""
from __future__ import annotations

import defusedxml.ElementTree as SafeET

from ..ir.schema import parse_value, schemas


def ignored_attributes(xml_path, model) -> str:
    """Why OpenVINO would run another model than the IR at ``xml_path`` ("" when it would not):
    it ignores an attribute the IR sets (say DepthToSpace ``data_format``) to a value other
    than its default. The XML is re-read for the attributes actually written. Each layer is
    found by its identity, its name and type (an IR v10 f16 model read by OpenVINO gains an
    output Convert that takes the name of the layer before it); an attribute at the default
    value opsets/ gives it (this version of the type, another version, else any type that has
    the attribute) changes nothing and is not a refusal."""
    named: dict[str, list] = {}
    for op in model.get_ops():
        named.setdefault(op.get_friendly_name(), []).append(op)
    skip = {"Parameter", "Const", "Result"}
    for elem in SafeET.parse(xml_path).getroot().iter("layer"):
        data, kind = elem.find("data"), elem.get("type")
        if data is None or kind in skip:
            continue
        op = _openvino_op(named.get(elem.get("name"), []), kind)
        if op is None:  # not found as written (fused or renamed by OpenVINO's reader): nothing to say
            continue
        known = set(op.get_attributes())
        unknown = sorted(a for a in set(data.attrib) - known
                         if not _at_default(kind, elem.get("version"), a, data.attrib[a]))
        if unknown:
            return (f"OpenVINO ignores attribute(s) {', '.join(unknown)} of layer '{elem.get('name')}' "
                    f"({kind}-{elem.get('version')}): it would run another model")
    return ""


def _openvino_op(candidates: list, kind: str):
    """The OpenVINO op of an IR layer among the ops of its name: the one of its type, or the
    input of a Convert OpenVINO inserted under the layer's name."""
    kind = kind.lower()
    for op in candidates:
        if op.get_type_name().lower() == kind:
            return op
    for op in candidates:
        if op.get_type_name() == "Convert" and op.get_input_size() == 1:
            src = op.input_value(0).get_node()
            if src.get_type_name().lower() == kind:
                return src
    return None


def _at_default(kind: str, version: str | None, name: str, text: str) -> bool:
    """Is ``text`` the default value of attribute ``name`` (by opsets/: this type's version,
    another version of it, else any type that has the attribute)? All-zero and empty lists are
    the same value (no padding)."""
    table = schemas()
    specs = [s.attributes[name] for key, s in sorted(table.items(), key=lambda kv: (
        kv[0][0] != kind, kv[0][1] != version)) if name in s.attributes]
    for spec in specs:
        try:
            value = parse_value(spec.type, text)
        except (ValueError, RuntimeError):
            continue
        value = getattr(value, "name", value)  # an element type: by its name, as opsets/ writes it
        if spec.default is None and spec.required:  # no default: only a value that does nothing
            return name in _IDENTITY and all(v == _IDENTITY[name] for v in value)
        default = spec.default
        return value == default or (_zeros(value) and _zeros(default))
    return False


_IDENTITY = {"dilations": 1}  # required attributes whose all-ones value changes nothing


def _zeros(value) -> bool:
    """An empty or all-zero list (no padding) is one value."""
    return isinstance(value, (list, tuple)) and all(v == 0 for v in value)
