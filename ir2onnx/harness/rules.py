"""The rule table of ``ir2onnx check``: which rule judges each output of two backends.

Element-wise comparison (:mod:`ir2onnx.harness.compare`) is the default. Some outputs mean more
than their elements, and are judged by what a deployment cares about (docs/check.md):

============  ==============================================  =====================================
rule          the outputs it judges                           passes when
============  ==============================================  =====================================
detections    DetectionOutput ``[1, 1, N, 7]``, ``[N, 7]``,   every row above the score threshold
              ``[N, 5]`` box+score rows, ``boxes`` with       has a partner (IoU >= 0.5, same
              ``labels`` (and ``scores``)                     label), worst score/box error small
int8 step     a FakeQuantize's grid reaches the output        share within 1 (OpenVINO: 4) steps
class         ``[N, C]``, ``[N, C, 1, 1]`` after a SoftMax    argmax agrees, probabilities close
              (or logits); never a 4- or 5-wide box row
attributes    ``[N, C]``, ``[N, C, 1, 1]`` after a Sigmoid    probabilities close, same side of 0.5
embedding     re-identification vectors (a name with          cosine similarity per row
              ``embed``/``reid``/``descriptor``, a
              NormalizeL2, or ``[N, D >= 128]`` no softmax)
image         ``[N, 1|3, H, W]``, H and W >= 32               PSNR
labels        ``[N, K, H, W]`` after a SoftMax over K, or     the argmax / labels agree per pixel
              an integer ``[N, H, W]`` map
============  ==============================================  =====================================

Detections are judged so in every comparison (row order is not part of a detector's result;
RegionYolo maps, which have no order to lose, only in tolerant ones);
the other task rules judge only *tolerant* comparisons, those of an INT8 IR (FakeQuantize layers)
or of ``--precision f16``, where element-wise agreement is not expected; float comparisons of a
float IR stay element-wise. ``--rtol``/``--atol``/``--bitexact`` judge everything element-wise.
Each :class:`~ir2onnx.harness.compare.Comparison` names its rule (``rule``; "" is element-wise),
a one-line ``detail`` and the rule's numbers (``metrics``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from . import detections
from .compare import Comparison, compare
from .detections import SCORE_THRESHOLD
from .int8_rule import step_rule

# layers that pass an output's values on unchanged (through which its producer is looked for)
_PASS = frozenset({"Convert", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Identity",
                   "StridedSlice", "Slice", "Concat", "Gather", "ReduceMax", "ReduceMean"})
_DETECTORS = frozenset({"DetectionOutput", "ExperimentalDetectronDetectionOutput", "MulticlassNms",
                        "MatrixNms", "NonMaxSuppression"})
_SOFTMAX = frozenset({"SoftMax", "Softmax", "LogSoftmax"})
_EMBEDDING_NAME = re.compile(r"embed|reid|re_id|descriptor|identit", re.I)
_CLASS_NAME = re.compile(r"prob|logit|cls|class|score", re.I)


@dataclass(frozen=True)
class Limits:
    """What the task rules allow (tolerant comparisons; detections also in strict ones)."""

    score: float = 0.05  # detections: |score difference| of a matched row
    box: float = 0.1  # detections: coordinate difference / the box's larger side
    argmax: float = 0.99  # class: share of rows whose argmax agrees (a near-tie counts as agreeing)
    probability: float = 0.1  # class after SoftMax: |difference|
    attribute: float = 0.1  # attributes (after a Sigmoid): |difference|
    logit_share: float = 0.01  # class without SoftMax: |difference| / the output's range
    cosine: float = 0.99  # embedding: cosine similarity of every row
    psnr: float = 35.0  # image: dB, the peak being the reference's range
    labels: float = 0.99  # labels: share of pixels whose label agrees


TOLERANT = Limits()
STRICT = Limits(score=1e-3, box=0.05)  # detections of a float IR: near-ties only


@dataclass(frozen=True)
class Task:
    """What an output is, found once per output (``kind`` "": element-wise)."""

    kind: str = ""
    layout: str = ""  # detections: ssd7, box5, box4
    boxes: str = ""  # detections: the output with the boxes (itself, or the one it belongs to)
    labels: str = ""
    scores: str = ""
    step: float | None = None  # int8 step: the grid's step
    region: tuple = ()  # detections from a RegionYolo: what decoding needs (detections.rows)


def _producer(graph, result):
    """The first computing layer before a Result (through layers that pass values on)."""
    layer, hops = graph.producer(result, 0)[0], 0
    while layer.type in _PASS and layer.sources and hops < 16:
        hops += 1
        layer = graph.producer(layer, 0)[0]
    return layer


def _region(layer) -> tuple:
    """What decoding a RegionYolo's output needs: coords, classes, anchors per cell, H, W,
    anchors, do_softmax (None when its input's H and W are not known)."""
    a = layer.attrs
    dims = layer.inputs[0].shape
    if dims is None or len(dims) != 4 or not all(isinstance(d, int) for d in dims[2:]):
        return ()
    softmax = bool(a.get("do_softmax", True))
    mask = list(a.get("mask") or [])
    anchors = [float(v) for v in (a.get("anchors") or [])]
    count = int(a["num"]) if softmax or not mask else len(mask)
    if not softmax and mask:
        anchors = [v for m in mask for v in anchors[2 * m:2 * m + 2]]
    return (int(a["coords"]), int(a["classes"]), count, dims[2], dims[3], tuple(anchors), softmax)


def tasks(graph, names: dict[str, str], sample: dict[str, np.ndarray], tolerant: bool,
          steps: dict[str, float | None] | None = None) -> dict[str, Task]:
    """Output name -> Task. ``names``: Result layer id -> output name; ``sample``: one backend's
    outputs (for the shapes a dynamic model took); ``steps``: the INT8 grid steps."""
    results = {names[r.id]: r for r in graph.results if r.id in names}
    out: dict[str, Task] = {}
    shapes = {n: np.shape(v) for n, v in sample.items()}
    labels = [n for n, v in sample.items() if re.search(r"label", n, re.I) and np.asarray(v).dtype.kind in "iu"
              and np.ndim(v) == 1]
    scores = [n for n, v in sample.items() if re.search(r"score", n, re.I) and np.ndim(v) == 1]
    for name, shape in shapes.items():
        result = results.get(name.split("@")[0])
        producer = _producer(graph, result) if result is not None else None
        op = producer.type if producer is not None else ""
        if op == "RegionYolo" and tolerant and _region(producer):  # float: the maps element-wise
            out[name] = Task("detections", "yolo", name, region=_region(producer))
        elif (len(shape) == 4 and shape[:2] == (1, 1) and shape[3] == 7) or (
                op in _DETECTORS and shape and shape[-1] == 7) or (
                len(shape) == 2 and shape[1] == 7 and op not in _SOFTMAX and re.search(r"box|det", name, re.I)):
            out[name] = Task("detections", "ssd7", name)
        elif len(shape) == 2 and shape[1] in (4, 5) and op not in _SOFTMAX and (
                re.search(r"box|det", name, re.I) or labels):
            n = shape[0]
            lab = next((m for m in labels if shapes[m][0] == n), "")
            sc = next((m for m in scores if shapes[m][0] == n), "")
            layout = "box5" if shape[1] == 5 else "box4"
            if layout == "box4" and not sc:
                continue
            out[name] = Task("detections", layout, name, lab, sc)
            for part in (lab, sc):
                if part:
                    out[part] = Task("detections", layout, name, lab, sc)
    for name, shape in shapes.items():
        if name in out:
            continue
        result = results.get(name.split("@")[0])
        op = _producer(graph, result).type if result is not None else ""
        step = (steps or {}).get(name.split("@")[0])
        dtype = np.asarray(sample[name]).dtype
        if not tolerant:
            continue
        if step is not None:
            out[name] = Task("int8 step", step=step)
            continue
        rows_like = (len(shape) == 2) or (len(shape) == 4 and shape[2:] == (1, 1))
        width = shape[1] if len(shape) >= 2 else 0
        if dtype.kind == "f" and rows_like and (_EMBEDDING_NAME.search(name) or op == "NormalizeL2" or (
                len(shape) == 2 and width >= 128 and op not in _SOFTMAX and not _CLASS_NAME.search(name))):
            out[name] = Task("embedding")
        elif dtype.kind == "f" and rows_like and width >= 2 and op == "Sigmoid":
            out[name] = Task("attributes")
        elif dtype.kind == "f" and rows_like and width >= 2 and not (width in (4, 5) and op not in _SOFTMAX):
            out[name] = Task("class", layout="softmax" if op in _SOFTMAX else "logits")
        elif dtype.kind == "f" and len(shape) == 4 and shape[1] >= 2 and op in _SOFTMAX and min(shape[2:]) >= 2:
            out[name] = Task("labels", layout="argmax")
        elif dtype.kind == "f" and len(shape) == 4 and shape[1] in (1, 3) and min(shape[2:]) >= 32:
            out[name] = Task("image")
        elif dtype.kind in "iu" and len(shape) in (3, 4) and min(shape[-2:]) >= 8:
            out[name] = Task("labels", layout="map")
    return out


def judge(name: str, task: Task, a_name: str, a_out: dict, b_name: str, b_out: dict, *,
          tolerant: bool, score_threshold: float = SCORE_THRESHOLD, integer: bool = False) -> Comparison:
    """One output of two backends judged by its task's rule (element-wise statistics included
    where the shapes agree); ``integer``: a backend ran a QDQ file through integer kernels
    (:func:`ir2onnx.harness.int8_rule.step_rule`)."""
    a, b = np.asarray(a_out[name]), np.asarray(b_out[name])
    c = compare(name, a_name, a, b_name, b)
    if task.kind == "detections":
        return _detections(c, task, a_out, b_out, TOLERANT if tolerant else STRICT, score_threshold)
    if c.reason and not (task.kind == "labels" and c.reason.startswith("dtype")):
        return c
    if c.exact and task.kind != "labels" or a.size == 0:
        return c
    if task.kind == "int8 step":
        return step_rule(c, a, b, task.step, integer)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    if not (np.isfinite(fa).all() and np.isfinite(fb).all()):
        return c  # NaN/Inf: the element-wise verdict says where
    lim = TOLERANT
    if task.kind == "class":
        return _class(c, fa.reshape(fa.shape[0], -1), fb.reshape(fb.shape[0], -1), task.layout == "softmax", lim)
    if task.kind == "attributes":
        diff = float(np.max(np.abs(fa - fb)))
        flips = int(np.count_nonzero(((fa > 0.5) != (fb > 0.5)) & (np.abs(fa - fb) > lim.attribute)))
        _set(c, "attributes", diff <= lim.attribute and flips == 0,
             f"max abs {diff:.3g} (need <= {lim.attribute:g}), {flips} decision(s) at 0.5 differ",
             max_abs=diff, decisions_differ=flips)
        return c
    if task.kind == "embedding":
        ra, rb = fa.reshape(fa.shape[0], -1), fb.reshape(fb.shape[0], -1)
        na, nb = np.linalg.norm(ra, axis=1), np.linalg.norm(rb, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where((na > 0) & (nb > 0), np.sum(ra * rb, axis=1) / (na * nb), (na == nb).astype(float))
        worst = float(np.min(cos))
        _set(c, "embedding", worst >= lim.cosine, f"cosine similarity {worst:.5f} (worst of {ra.shape[0]} "
             f"row(s); need >= {lim.cosine:g})", cosine=worst)
        return c
    if task.kind == "image":
        peak = float(np.ptp(fa)) or float(np.max(np.abs(fa))) or 1.0
        mse = float(np.mean((fa - fb) ** 2))
        psnr = float("inf") if mse == 0 else 10 * np.log10(peak ** 2 / mse)
        _set(c, "image", psnr >= lim.psnr, f"PSNR {psnr:.1f} dB (peak {peak:.3g}; need >= {lim.psnr:g})",
             psnr=psnr, peak=peak)
        return c
    if task.kind == "labels":
        la, lb = (np.argmax(fa, axis=1), np.argmax(fb, axis=1)) if task.layout == "argmax" else (a, b)
        if la.shape != lb.shape:
            return c
        agree = float(np.mean(la == lb))
        _set(c, "labels", agree >= lim.labels, f"labels agree on {agree:.2%} of {la.size} pixel(s) "
             f"(need {lim.labels:.0%})", agreement=agree)
        return c
    return c


def _set(c: Comparison, rule: str, passed: bool, detail: str, **metrics) -> None:
    c.rule, c.passed, c.detail = rule, bool(passed), detail
    c.metrics = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in metrics.items()}
    c.mismatches = 0 if passed else max(c.mismatches, 1)


def _class(c: Comparison, fa: np.ndarray, fb: np.ndarray, softmax: bool, lim: Limits) -> Comparison:
    diff = np.abs(fa - fb)
    span = max(float(np.ptp(fa)), float(np.ptp(fb)))
    limit = lim.probability if softmax else lim.logit_share * span
    ia, ib = np.argmax(fa, axis=1), np.argmax(fb, axis=1)
    rows = np.arange(fa.shape[0])
    # a near-tie: b's winner is within the limit of a's best in a (and the other way round)
    agree = (ia == ib) | ((fa[rows, ia] - fa[rows, ib] <= limit) & (fb[rows, ib] - fb[rows, ia] <= limit))
    share = float(np.mean(agree))
    worst = float(diff.max())
    what = "max abs" if softmax else f"max abs {worst / span:.2%} of the range," if span else "max abs"
    _set(c, "class", share >= lim.argmax and worst <= limit,
         f"argmax agrees on {share:.0%} of {fa.shape[0]} row(s), {what} {worst:.3g} (need {lim.argmax:.0%}"
         f" and <= {limit:.3g})", argmax_agreement=share, max_abs=worst, limit=limit)
    return c


def _detections(c: Comparison, task: Task, a_out: dict, b_out: dict, lim: Limits,
                threshold: float) -> Comparison:
    def side(out):
        if task.boxes not in out or (task.labels and task.labels not in out) or (task.scores and task.scores not in out):
            return None
        return detections.rows(task.layout, out[task.boxes], out.get(task.labels) if task.labels else None,
                               out.get(task.scores) if task.scores else None, task.region)

    ra, rb = side(a_out), side(b_out)
    if ra is None or rb is None:
        return c
    m = detections.match(ra, rb, threshold, lim.score)
    c.reason = ""
    via = "" if task.boxes == c.output else f" (with '{task.boxes}')"
    _set(c, "detections", m.unmatched == 0 and m.score_error <= lim.score and m.box_error <= lim.box,
         f"{m.matched} matched, {m.unmatched} unmatched of {m.above[0]}/{m.above[1]} above {threshold:g}{via}; "
         f"worst score error {m.score_error:.3g} (<= {lim.score:g}), box error {m.box_error:.3g} "
         f"(<= {lim.box:g}), IoU >= {m.worst_iou:.3f}",
         matched=m.matched, unmatched=m.unmatched, above=list(m.above), score_error=m.score_error,
         box_error=m.box_error, worst_iou=m.worst_iou, score_threshold=threshold)
    c.mismatches = m.unmatched
    return c

