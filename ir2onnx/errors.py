"""The errors ir2onnx raises on purpose.

Every error a user can cause (a bad file, an unsupported or invalid layer) is a subclass of
:class:`Ir2OnnxError`. The CLI prints ``str(error)`` on one line and exits with code 2; anything
else escaping is a bug in ir2onnx.
"""
from __future__ import annotations


class Ir2OnnxError(Exception):
    """Base class of every error caused by the input model or the user's request."""


class IRFormatError(Ir2OnnxError):
    """The .xml or .bin file is not a well-formed OpenVINO IR (structure, sizes, offsets)."""


class InvalidLayer(Ir2OnnxError):
    """A layer violates its operation's specification (attributes, input values, shapes)."""

    def __init__(self, layer, reason: str):
        self.layer = layer
        self.reason = reason
        super().__init__(f"layer {describe(layer)}: {reason}")


class UnsupportedLayer(InvalidLayer):
    """A layer is valid IR, but ir2onnx cannot express it exactly in ONNX."""


class NeedsOpset(UnsupportedLayer):
    """A layer is convertible, but only at ONNX opset ``opset`` or newer (the converter then picks
    a newer opset by itself unless the user forced one)."""

    def __init__(self, layer, opset: int, what: str, current: int):
        self.opset, self.what = opset, what
        super().__init__(layer, f"{what} needs ONNX opset >= {opset} (converting with opset {current}; "
                                f"use --opset {opset} or leave --opset out)")


class UnsupportedLayers(Ir2OnnxError):
    """Several layers at once have no lowering: all of them are listed in one message."""

    def __init__(self, problems: list[tuple[object, str]]):
        self.problems = problems
        parts = [f"{describe(layer)}: {reason}" for layer, reason in problems]
        super().__init__(f"{len(problems)} layer(s) cannot be converted: " + "; ".join(parts))


def describe(layer) -> str:
    """``'name' (Type-opsetN, id=7)`` for a Layer, or ``str(layer)`` for anything else."""
    name = getattr(layer, "name", None)
    if name is None:
        return str(layer)
    return f"'{name}' ({layer.type}-{layer.version}, id={layer.id})"
