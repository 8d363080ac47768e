"""Verify a converted model: an onnxruntime CPU session, and one inference on generated inputs.

A valid ONNX file can still hold a node that onnxruntime's CPU provider has no kernel for (an op
on an element type it lacks); that is found when the session is created. A node can also be
fused by onnxruntime's default graph optimizations into one whose kernel refuses its inputs when
it runs (a per-axis QuantizeLinear folded into QLinearConv, which takes scalar scales only); that
is found by running it. ``ir2onnx convert`` (and :func:`ir2onnx.convert` /
:func:`ir2onnx.convert_file`) verify every model both ways, with the session options a user gets
(default optimizations), unless told not to, and refuse the model with one line naming the IR
layer whose node onnxruntime rejected (node names start with their layer's name).

The inference is one run on the inputs ``ir2onnx run`` generates (:func:`runtime.make_inputs`:
dynamic dims 1, normal floats), with integers 0 (an `attention_mask` 1) and booleans False (:func:`_feeds`), so it stays
cheap on big models; a run longer than :data:`RUN_SECONDS` is ended with a warning. Generated values
can be wrong for a model (an integer input that is an index or a shape, a dim of 1 under a
pooling window): a run that fails is therefore run again with the graph optimizations off, and

* if that run succeeds, the optimizations made a node that cannot run: refused;
* if it fails too and every input is floating point with static dims (the inputs cannot be at
  fault), the model cannot run: refused;
* otherwise the inputs may be at fault: a warning on stderr, and the model is written.
"""
from __future__ import annotations

import os
import re
import sys
import threading
from typing import Mapping

import numpy as np

from .errors import Ir2OnnxError, UnsupportedLayer

RUN_SECONDS = 120  # the verifying inference is ended (with a warning) after this long
_NODE = re.compile(r"node with name '([^']*)'|[Nn]ame:\s*'([^']*)'|[Nn]ode[: ]+\(?'?([^'\s)]+)'?\)?")
_NOISE = [  # (pattern, replacement) that shorten onnxruntime's messages to what failed
    (re.compile(r"\[ONNXRuntimeError\] : \d+ : \w+ : "), ""),
    (re.compile(r"Non-zero status code returned while running (\w+) node\. Name:'[^']*' Status Message: "), r"\1: "),
    (re.compile(r"\S+\.(?:cc|cpp|h):\d+ (?:[^()]*\([^()]*\)(?: const)?(?: \[with [^\]]*\])? )?"), ""),
    (re.compile(r"\b(\w+): \1: "), r"\1: "),  # "Range: Range: ..." when the kernel names itself too
]


def _first_line(e: Exception) -> str:
    text = " ".join(str(e).split()).removeprefix("onnxruntime failed: ")
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return text[:400] or type(e).__name__


def _layer_of(text: str, node_layers: Mapping[str, object]):
    """(node name, layer) of the first node named in ``text`` that maps to a layer: exactly, or
    by the longest node name it starts with (onnxruntime names the nodes its optimizations make
    after the node they replace: ``conv/Conv`` becomes ``conv/Conv__token_1``)."""
    for match in _NODE.finditer(text):
        node = next(g for g in match.groups() if g is not None)
        layer = node_layers.get(node)
        if layer is None:
            stems = [n for n in node_layers if n and node.startswith(n)]
            layer = node_layers[max(stems, key=len)] if stems else None
        if layer is not None:
            return node, layer
    return None, None


def _refuse(e: Exception, node_layers, what: str) -> None:
    """Raise for ``e`` (onnxruntime's exception): ``what`` says how onnxruntime failed, with
    ``{at}`` standing for the node (and its layer) or the model."""
    node, layer = _layer_of(str(e), node_layers)
    at = f"the ONNX node '{node}' made for it" if layer is not None else "a node of the converted model"
    reason = f"{what.format(at=at)}: {_first_line(e)}"
    if layer is not None:
        raise UnsupportedLayer(layer, reason) from None
    raise Ir2OnnxError(reason) from None


_OPTIMIZED = "onnxruntime's default graph optimizations turn {at} into a node that the CPU provider {fails}"


def verify_model(model: str | os.PathLike | bytes, node_layers: Mapping[str, object], opset: int,
                 run: bool = True) -> None:
    """Create an onnxruntime CPU session for ``model`` (a path or serialized bytes) and, unless
    ``run`` is False, run it once on generated inputs; raise :class:`UnsupportedLayer` naming the
    layer whose node it cannot run, or :class:`Ir2OnnxError` when no layer can be traced. Models
    of an opset the installed onnxruntime cannot load are not verified (the converter has already
    warned)."""
    from .runtime import sessions as runtime
    from .lowering.convert import max_opset

    if opset > runtime.ort_max_opset(max_opset()):
        return
    try:
        sess = runtime.session(model, "cpu", quiet=True)
    except Ir2OnnxError:
        raise
    except Exception as e:  # onnxruntime's own exception types
        if _works(lambda: runtime.session(model, "cpu", optimize=False, quiet=True)):
            _refuse(e, node_layers, _OPTIMIZED.replace("{fails}", "cannot load"))
        if _layer_of(str(e), node_layers)[1] is not None:
            _refuse(e, node_layers, "onnxruntime's CPU provider cannot run {at}")
        _refuse(e, node_layers, "onnxruntime's CPU provider cannot load the converted model")
    if run:
        _run_once(runtime, sess, model, node_layers)


def _works(make) -> bool:
    try:
        make()
        return True
    except Exception:
        return False


def _feeds(runtime, sess) -> dict | None:
    """The inputs ``ir2onnx run`` generates, with integers 0 and booleans False: an index of 0 is
    in range on any axis, and a Loop's trip count or condition taken from an input ends it at
    once (a random one could run it without end). An LLM's ``attention_mask`` is ones (no token
    masked; GroupQueryAttention takes its row sums as sequence lengths)."""
    try:
        feeds = runtime.make_inputs(sess)
    except Ir2OnnxError:  # inputs too large or of a type we cannot make: the session must do
        return None
    return {k: (np.ones_like if k == "attention_mask" else np.zeros_like)(v) if v.dtype.kind in "biu" else v
            for k, v in feeds.items()}


def _timed_run(runtime, sess, feeds) -> None:
    """One run, ended by onnxruntime (an Ir2OnnxError) when it takes over RUN_SECONDS."""
    import onnxruntime as ort

    options = ort.RunOptions()
    timer = threading.Timer(RUN_SECONDS, lambda: setattr(options, "terminate", True))
    timer.start()
    try:
        runtime.execute(sess, feeds, options)
    finally:
        timer.cancel()


def _run_once(runtime, sess, model, node_layers) -> None:
    feeds = _feeds(runtime, sess)
    if feeds is None:
        return
    try:
        _timed_run(runtime, sess, feeds)
        return
    except Ir2OnnxError as e:
        failure = e
    if "terminate flag" in str(failure):
        print(f"ir2onnx: warning: one inference on generated inputs did not finish within "
              f"{RUN_SECONDS} s; the model is written unverified by a run", file=sys.stderr)
        return
    if "allocate memory" in str(failure):  # a model sized for a bigger machine than this one
        print(f"ir2onnx: warning: one inference on generated inputs needs more memory than this "
              f"machine gives it ({_first_line(failure)}); the model is written unverified by a run",
              file=sys.stderr)
        return
    if _works(lambda: _timed_run(runtime, runtime.session(model, "cpu", optimize=False, quiet=True), feeds)):
        _refuse(failure, node_layers, _OPTIMIZED.replace("{fails}", "fails to run"))
    if _inputs_determined(sess):
        _refuse(failure, node_layers, "onnxruntime's CPU provider fails to run {at}")
    node, layer = _layer_of(str(failure), node_layers)
    where = f"layer '{getattr(layer, 'name', layer)}'" if layer is not None else "the model"
    print(f"ir2onnx: warning: one inference on generated inputs (dynamic dims 1, integers 0) "
          f"failed at {where}, perhaps for the inputs' sake (`ir2onnx run --input` checks real "
          f"ones): {_first_line(failure)}", file=sys.stderr)


def _inputs_determined(sess) -> bool:
    """Every input is floating point with static dims: generated values cannot be at fault."""
    return all(i.type in ("tensor(float)", "tensor(float16)", "tensor(double)", "tensor(bfloat16)")
               and all(isinstance(d, int) for d in i.shape) for i in sess.get_inputs())
