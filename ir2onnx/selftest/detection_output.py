"""Selftest cases of DetectionOutput-1/-8: box decoding is arithmetic (compared within the f32
tolerance), the selection (which rows, labels, order, the -1 row) must agree exactly."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, ov_build, param

V8, V1 = ("DetectionOutput", "opset8"), ("DetectionOutput", "opset1")
CENTER, CORNER = "caffe.PriorBoxParameter.CENTER_SIZE", "caffe.PriorBoxParameter.CORNER"


def priors(p: int, normalized: bool = True, variances: bool = True, seed: int = 7) -> np.ndarray:
    """``[1, 1 | 2, P * 4 | 5]`` prior boxes inside the unit square (300 x 200 when not normalized)."""
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, 0.7, (p, 2))
    box = np.concatenate([lo, lo + rng.uniform(0.1, 0.3, (p, 2))], 1)
    if not normalized:
        box = np.concatenate([np.zeros((p, 1)), box * [300, 200, 300, 200]], 1)
    rows = [box.reshape(-1)]
    if variances:
        rows.append(np.pad(np.tile([0.1, 0.1, 0.2, 0.2], p), (0, box.size - 4 * p)))
    return np.stack(rows)[None].astype(np.float32)


def tied_scores(rng, n: int, p: int, c: int, grid: int = 8) -> np.ndarray:
    """``[n, p * c]`` scores on a grid of ``grid + 1`` levels: many equal scores across priors, but
    the classes of one prior differ (OpenVINO orders equal (score, prior) pairs of different
    classes arbitrarily when keep_top_k cuts between them)."""
    levels = np.stack([rng.permutation(grid + 1)[:c] for _ in range(n * p)]) / grid
    return levels.reshape(n, p * c).astype(np.float32)


def _head(version="opset8", p=8, c=3, arm=False, n=1, prior=None, **attrs):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        num_loc = 1 if attrs.get("share_location", True) else c
        loc, conf = param(ops, [n, p * num_loc * 4], name="loc"), param(ops, [n, p * c], name="conf")
        params = [loc, conf]
        if arm:
            params += [param(ops, [n, p * 2], name="arm_conf"), param(ops, [n, p * num_loc * 4], name="arm_loc")]
        full = dict(dict(keep_top_k=[6], nms_threshold=0.45, confidence_threshold=0.2, code_type=CENTER,
                         normalized=True), **attrs)
        if version == "opset1":
            full["num_classes"] = c
        pri = prior if prior is not None else priors(p, full["normalized"], not full.get("variance_encoded_in_target"))
        node = mod.detection_output(loc, conf, ops.constant(pri), full, *params[2:])
        return [(node, "det")], params
    return make


def _feeds(p=8, c=3, n=1, num_loc=1, arm=False, grid=8):
    def feeds(rng):
        out = {"loc": rng.normal(0, 1, (n, p * num_loc * 4)).astype(np.float32),
               "conf": tied_scores(rng, n, p, c, grid)}  # equal scores
        if arm:
            out["arm_conf"] = rng.uniform(0, 1, (n, p * 2)).astype(np.float32)
            out["arm_loc"] = rng.normal(0, 1, (n, p * num_loc * 4)).astype(np.float32)
        return out
    return feeds


# Two equal boxes with equal scores: the smaller prior stays; IoU 0.5 == nms_threshold keeps the
# third box; a score equal to confidence_threshold (0.3) is dropped.
TIES_PRIORS = np.array([[[0, 0, .5, .5, 0, 0, .5, .5, 0, 0, .25, .5, .6, .6, .9, .9]]], np.float32)
TIES = {"loc": np.zeros((1, 16), np.float32),
        "conf": np.array([[0.1, 0.5, 0.1, 0.5, 0.1, 0.4, 0.1, 0.3]], np.float32)}
TIES_OUT = np.zeros((1, 1, 4, 7), np.float32)
TIES_OUT[0, 0, :3] = [[0, 1, .5, 0, 0, .5, .5], [0, 1, .4, 0, 0, .25, .5], [-1, 0, 0, 0, 0, 0, 0]]

CASES = [
    Case("detection_output/center-size-shared", V8, ov_build(_head()), inputs=_feeds(), exact=False),
    Case("detection_output/corner-per-class-clip", V8,
         ov_build(_head(code_type=CORNER, share_location=False, clip_before_nms=True, top_k=4, n=2)),
         inputs=_feeds(num_loc=3, n=2), exact=False),
    Case("detection_output/not-normalized-clip-after", V8,
         ov_build(_head(normalized=False, input_width=300, input_height=200, clip_after_nms=True, keep_top_k=[-1],
                        top_k=5)), inputs=_feeds(), exact=False),
    Case("detection_output/mxnet-style", V8, ov_build(_head(decrease_label_id=True, keep_top_k=[-1], top_k=5)),
         inputs=_feeds(), exact=False),
    Case("detection_output/arm-inputs", V8, ov_build(_head(arm=True, objectness_score=0.4)),
         inputs=_feeds(arm=True), exact=False),
    Case("detection_output/opset1-variance-in-target", V1,
         ov_build(_head("opset1", variance_encoded_in_target=True, background_label_id=-1)),
         inputs=_feeds(), exact=False),
    Case("detection_output/ties-and-thresholds", V8,
         ov_build(_head(p=4, c=2, prior=TIES_PRIORS, code_type=CORNER, variance_encoded_in_target=True,
                        keep_top_k=[4], nms_threshold=0.5, confidence_threshold=0.3)),
         inputs=TIES, expect={"det": TIES_OUT}, exact=False),
]
