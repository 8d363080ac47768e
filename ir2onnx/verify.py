"""Verify a converted model by creating an onnxruntime CPU session for it.

A valid ONNX file can still hold a node that onnxruntime's CPU provider has no kernel for (an op
on an element type it lacks); that is found when the session is created, not when the model
runs. ``ir2onnx convert`` (and :func:`ir2onnx.convert` / :func:`ir2onnx.convert_file`) verify
every model this way unless told not to, and refuse the model with one line naming the IR layer
whose node onnxruntime rejected (node names start with their layer's name).
"""
from __future__ import annotations

import os
import re
from typing import Mapping

from .errors import Ir2OnnxError, UnsupportedLayer

_NODE = re.compile(r"node with name '([^']*)'|[Nn]ode[: ]+\(?'?([^'\s)]+)'?\)?")


def _first_line(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text[:400] or type(e).__name__


def verify_model(model: str | os.PathLike | bytes, node_layers: Mapping[str, object], opset: int) -> None:
    """Create an onnxruntime CPU session for ``model`` (a path or serialized bytes); raise
    :class:`UnsupportedLayer` naming the layer whose node it cannot run, or :class:`Ir2OnnxError`
    when no layer can be traced. Models of an opset the installed onnxruntime cannot load are
    not verified (the converter has already warned)."""
    from . import runtime
    from .lowering.convert import max_opset

    if opset > runtime.ort_max_opset(max_opset()):
        return
    try:
        runtime.session(model, "cpu")
    except Ir2OnnxError:
        raise
    except Exception as e:  # onnxruntime's own exception types
        message = _first_line(e)
        for match in _NODE.finditer(str(e)):
            node = match.group(1) or match.group(2)
            layer = node_layers.get(node)
            if layer is not None:
                raise UnsupportedLayer(layer, f"onnxruntime's CPU provider cannot run the ONNX node "
                                              f"'{node}' made for it: {message}") from None
        raise Ir2OnnxError(f"onnxruntime's CPU provider cannot load the converted model: {message}") from None
