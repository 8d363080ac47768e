"""Verify a converted model: an onnxruntime CPU session, and one bounded inference on generated inputs.

A valid ONNX file can still hold a node that onnxruntime's CPU provider has no kernel for (an op
on an element type it lacks); that is found when the session is created. A node can also be
fused by onnxruntime's default graph optimizations into one whose kernel refuses its inputs when
it runs (a per-axis QuantizeLinear folded into QLinearConv, which takes scalar scales only); that
is found by running it. ``ir2onnx convert`` (and :func:`ir2onnx.convert` /
:func:`ir2onnx.convert_file`) verify every model both ways, with the session options a user gets
(default optimizations), unless told not to, and refuse the model with one line naming the IR
layer whose node onnxruntime rejected (node names start with their layer's name).

The inference is one run on generated inputs (:func:`ir2onnx.runtime.sessions.make_inputs`:
dynamic dims 1, normal floats, integers 0 (an ``attention_mask`` 1: GroupQueryAttention
takes its row sums as sequence lengths), and the operation parameters it can trace or that
are named so valid values: a Range's start 0, limit 4, delta 1, scales of 1, counts of 1;
:mod:`ir2onnx.runtime.input_values`). It is bounded: a watchdog thread sets onnxruntime's
``RunOptions.terminate`` after ``timeout`` seconds (default :func:`default_timeout`, which grows
with the model's size; ``--verify-timeout``). A model is refused only for what is true of the
model itself; generated values can be wrong for a model (a float that is a scale, an integer
that is an index, a count or a shape), so a run that fails is judged so:

* run again with the graph optimizations off: if that succeeds, the optimizations made a node
  that cannot run: refused;
* run again on other valid values (floats and integers 1): if that succeeds, the model runs and
  is verified;
* if both fail at a node that depends on no input (only on the model's constants), or the model
  has no inputs, no input can make it run: refused;
* otherwise, and when the run is ended by the time limit or runs out of memory, the model is
  written, verified by onnx.checker and by the session only, with one warning that says why and
  names the inputs to give real values for (``ir2onnx run MODEL --input NAME=FILE.npy``).

A model file over :data:`PROTO_BYTES` is not read a second time to trace what its inputs mean
and which reach a node: its parameters are known by name only, and a failure is warned of.
"""
from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path
from typing import Mapping

import numpy as np
import onnx
import onnxruntime as ort

from .errors import Ir2OnnxError, UnsupportedLayer
from .lowering.convert import max_opset
from .runtime import sessions as runtime
from .runtime.input_values import onnx_hints, role_by_name

RUN_SECONDS = 3.0         # the time limit of the verifying inference of a small model ...
SECONDS_PER_GIB = 30.0    # ... plus this per GiB of the model (its weights are the work)
MAX_RUN_SECONDS = 600.0   # the default never exceeds this
PROTO_BYTES = 256 * 2**20  # a model file up to this size is read again to trace its inputs' meaning
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


def default_timeout(nbytes: int) -> float:
    """The default time limit of the verifying inference for a model of ``nbytes`` (file and
    external data): :data:`RUN_SECONDS` + :data:`SECONDS_PER_GIB` per GiB, at most
    :data:`MAX_RUN_SECONDS` (3 s for a small model, 33 s at 1 GiB, 123 s for 4 GiB)."""
    return min(MAX_RUN_SECONDS, RUN_SECONDS + SECONDS_PER_GIB * nbytes / 2**30)


def _model_bytes(model) -> int:
    """The size of ``model`` (bytes, or a path and its external data files beside it)."""
    if isinstance(model, bytes):
        return len(model)
    path = Path(model)
    try:
        return sum(p.stat().st_size for p in path.parent.iterdir()
                   if p == path or p.name.startswith(path.name + "."))
    except OSError:
        return 0


def check_timeout(timeout) -> None:
    """A time limit must be a number of seconds > 0 (None: the default)."""
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0
                                    and timeout == timeout and timeout != float("inf")):
        raise Ir2OnnxError(f"the verification time limit must be a number of seconds > 0, got {timeout!r}")


def verify_model(model: str | os.PathLike | bytes, node_layers: Mapping[str, object], opset: int,
                 run: bool = True, timeout: float | None = None) -> None:
    """Create an onnxruntime CPU session for ``model`` (a path or serialized bytes) and, unless
    ``run`` is False, run it once on generated inputs within ``timeout`` seconds (None:
    :func:`default_timeout`); raise :class:`UnsupportedLayer` naming the layer whose node it
    cannot run, or :class:`Ir2OnnxError` when no layer can be traced. Models of an opset the
    installed onnxruntime cannot load are not verified (the converter has already warned)."""
    check_timeout(timeout)
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
        seconds = default_timeout(_model_bytes(model)) if timeout is None else float(timeout)
        _Run(runtime, sess, model, node_layers, seconds).verify()


def _works(make) -> bool:
    try:
        make()
        return True
    except Exception:
        return False


class _TimedOut(Exception):
    """The verifying inference was ended by the watchdog."""


class _Run:
    """The bounded verifying inference of one model and the judgement of a failure."""

    def __init__(self, runtime, sess, model, node_layers, seconds: float):
        self.runtime, self.sess, self.model = runtime, sess, model
        self.node_layers, self.seconds = node_layers, seconds
        self._proto = None

    def proto(self):
        """The ONNX model, weights left unread (for its inputs' meaning and its node graph)."""
        if self._proto is None:
            self._proto = onnx.ModelProto()  # empty: nothing traced, failures only warned of
            try:
                size = len(self.model) if isinstance(self.model, bytes) else os.path.getsize(self.model)
                if size <= PROTO_BYTES:
                    self._proto = (onnx.ModelProto.FromString(self.model) if isinstance(self.model, bytes)
                                   else onnx.load(str(self.model), load_external_data=False))
            except Exception:  # the session loaded it: only our reading of it failed
                pass
        return self._proto

    def feeds(self, ones: bool) -> dict | None:
        """Generated inputs with the traced parameters valid: integers 0 (an index of 0 is in
        range on any axis) or, with ``ones``, every plain float and integer 1 (a scale, a
        count, a divisor); None when they would be too large to make."""
        try:
            hints = onnx_hints(self.proto())
        except Exception:
            hints = {}
        try:
            feeds = self.runtime.make_inputs(self.sess, hints=hints)
        except Ir2OnnxError:  # inputs too large or of a type we cannot make
            return None
        fill = np.ones_like if ones else np.zeros_like
        return {k: v if (k in hints and hints[k].role) or role_by_name(k, v.shape) else
                np.ones_like(v) if k == "attention_mask" and v.dtype.kind in "biu" else
                fill(v) if v.dtype.kind in "biu" or ones and v.dtype.kind == "f" else v
                for k, v in feeds.items()}

    def attempt(self, sess, feeds) -> Exception | None:
        """One run ended by onnxruntime when it takes over ``seconds``: None when it succeeds,
        else the exception (:class:`_TimedOut` for the time limit)."""
        options = ort.RunOptions()
        timer = threading.Timer(self.seconds, lambda: setattr(options, "terminate", True))
        timer.daemon = True
        timer.start()
        try:
            self.runtime.execute(sess, feeds, options)
            return None
        except Ir2OnnxError as e:
            return _TimedOut(str(e)) if "terminate flag" in str(e) else e
        finally:
            timer.cancel()

    def verify(self) -> None:
        feeds = self.feeds(ones=False)
        if feeds is None:  # inputs over the limit: `run` and `check` say so when they need them
            return None
        failure = self.attempt(self.sess, feeds)
        if failure is None:
            return None
        if isinstance(failure, _TimedOut):
            return self.warn(f"one inference on generated inputs did not finish within {self.seconds:.3g} s "
                             f"(--verify-timeout)", failure)
        if "allocate memory" in str(failure):  # a model sized for a bigger machine than this one
            return self.warn(f"one inference on generated inputs needs more memory than this machine "
                             f"gives it ({_first_line(failure)})", failure)
        try:
            plain = self.runtime.session(self.model, "cpu", optimize=False, quiet=True)
        except Exception:  # onnxruntime's own exception types: no verdict from this session
            plain = None
        if plain is not None and self.attempt(plain, feeds) is None:
            _refuse(failure, self.node_layers, _OPTIMIZED.replace("{fails}", "fails to run"))
        ones = self.feeds(ones=True)
        again = self.attempt(self.sess, ones) if ones is not None else failure
        if again is None:
            return None  # the first values were wrong for the model; valid ones run it
        node, _ = _layer_of(str(failure), self.node_layers)
        given = self.inputs_upstream(node)
        if not self.sess.get_inputs() or given == []:
            _refuse(failure, self.node_layers, "onnxruntime's CPU provider fails to run {at} whatever the inputs")
        return self.warn(f"one inference on generated inputs failed ({_first_line(failure)}) and "
                         f"again on other valid values", failure, given)

    def inputs_upstream(self, node: str | None) -> list[str] | None:
        """The model inputs whose values reach the ONNX node ``node`` (or the nodes whose name it
        starts with: onnxruntime's fused nodes), through the graph and into sub-graphs; None
        when the node is not found."""
        graph = self.proto().graph
        if node is None:
            return None
        producers = {}
        for n in graph.node:
            for out in n.output:
                producers[out] = n
        targets = [n for n in graph.node if n.name == node] or [
            n for n in graph.node if n.name and node.startswith(n.name)]
        if not targets:
            return None
        inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
        found, seen, todo = set(), set(), [x for n in targets for x in _node_inputs(n)]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in inputs:
                found.add(name)
            elif name in producers:
                todo += _node_inputs(producers[name])
        return [i.name for i in graph.input if i.name in found]

    def warn(self, why: str, failure, given: list[str] | None = None) -> None:
        """The one warning of a model written without a verifying run."""
        if given is None and failure is not None:
            node, _ = _layer_of(str(failure), self.node_layers)
            given = self.inputs_upstream(node)
        names = given or [i.name for i in self.sess.get_inputs()]
        node, layer = _layer_of(str(failure), self.node_layers) if failure is not None else (None, None)
        where = f" at layer '{getattr(layer, 'name', layer)}'" if layer is not None else ""
        ask = (f"; give real values for {', '.join(names[:8])}{' ...' if len(names) > 8 else ''} to "
               f"check it (ir2onnx run MODEL --input NAME=FILE.npy)" if names else "")
        print(f"ir2onnx: warning: not verified by an inference: {why}{where}; the model is written, "
              f"verified by onnx.checker and an onnxruntime session{ask}", file=sys.stderr)


def _node_inputs(node) -> list[str]:
    """A node's inputs, and the outer names its sub-graphs (If/Loop/Scan bodies) read."""
    names = [x for x in node.input if x]
    for attr in node.attribute:
        for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            made = {i.name for i in g.input} | {t.name for t in g.initializer}
            made |= {o for n in g.node for o in n.output}
            names += [x for n in g.node for x in _node_inputs(n) if x not in made]
    return names
