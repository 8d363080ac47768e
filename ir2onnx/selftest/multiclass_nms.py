"""Selftest cases of MulticlassNms-8/-9 (shared boxes). Compared bit for bit with the oracle."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, ov_build, param


def _mnms(version, shape=(2, 6, 3), **attrs):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        n, m, c = shape
        boxes, scores = param(ops, [n, None, 4], name="boxes"), param(ops, [n, c, None], name="scores")
        node = mod.multiclass_nms(boxes, scores, **attrs)
        return [(node.output(0), "selected_outputs"), (node.output(1), "selected_indices"),
                (node.output(2), "selected_num")], [boxes, scores]
    return make


def _boxes(shape=(2, 6, 3)):
    def feeds(rng):
        n, m, c = shape
        lo = rng.uniform(0, 10, (n, m, 2)).astype(np.float32)
        size = rng.uniform(1, 5, (n, m, 2)).astype(np.float32)
        scores = (rng.integers(0, 11, (n, c, m)) / 10).astype(np.float32)  # equal scores
        return {"boxes": np.concatenate([lo, lo + size], axis=2), "scores": scores}
    return feeds


# spec-style example: boxes 0 and 1 overlap with IoU exactly 0.5 (suppressed at >= 0.5),
# box 3 has a score equal to the threshold (kept: >=)
EDGE = {"boxes": np.array([[[0, 0, 2, 1], [0, 0, 1, 1], [5, 5, 6, 6], [8, 8, 9, 9]]], np.float32),
        "scores": np.array([[[0.9, 0.8, 0.1, 0.25]]], np.float32)}
# normalized=false at 3e7 (coordinates step by 2): OpenVINO's IoU (x2 - x1 + 1) is exactly the
# threshold, so box 1 is suppressed (x2 + 1 would round to another IoU)
FAR = {"boxes": np.array([[[30000054, 30000054, 30000080, 30000076], [30000050, 30000050, 30000072, 30000068]]],
                         np.float32), "scores": np.array([[[0.9, 0.8]]], np.float32)}

CASES = [
    Case("mnms9/score-keep-top-k", ("MulticlassNms", "opset9"),
         ov_build(_mnms("opset9", sort_result_type="score", iou_threshold=0.3, score_threshold=0.3, keep_top_k=4,
                        nms_top_k=4, background_class=0)), inputs=_boxes()),
    Case("mnms9/classid-across-batch-i32", ("MulticlassNms", "opset9"),
         ov_build(_mnms("opset9", sort_result_type="classid", sort_result_across_batch=True, output_type="i32",
                        iou_threshold=0.4, score_threshold=0.2, normalized=False)), inputs=_boxes()),
    Case("mnms8/score-across-batch", ("MulticlassNms", "opset8"),
         ov_build(_mnms("opset8", sort_result_type="score", sort_result_across_batch=True, iou_threshold=0.5,
                        score_threshold=0.1, keep_top_k=5)), inputs=_boxes()),
    Case("mnms8/thresholds-equal", ("MulticlassNms", "opset8"),
         ov_build(_mnms("opset8", shape=(1, 4, 1), sort_result_type="none", iou_threshold=0.5,
                        score_threshold=0.25)), inputs=EDGE,
         expect={"selected_indices": np.array([[0], [3]], np.int64)}),
    Case("mnms8/not-normalized-far", ("MulticlassNms", "opset8"),
         ov_build(_mnms("opset8", shape=(1, 2, 1), iou_threshold=0.36869341135025024, score_threshold=0.0,
                        normalized=False)), inputs=FAR, expect={"selected_indices": np.array([[0]], np.int64)}),
]


def _per_class(ops):
    import openvino.opset9 as o9

    boxes, scores = param(ops, [2, None, 4], name="boxes"), param(ops, [2, None], name="scores")
    roisnum = param(ops, [None], np.int32, name="roisnum")
    node = o9.multiclass_nms(boxes, scores, roisnum, sort_result_type="classid", iou_threshold=0.3,
                             score_threshold=0.2, keep_top_k=4)
    return [(node.output(0), "selected_outputs"), (node.output(1), "selected_indices"),
            (node.output(2), "selected_num")], [boxes, scores, roisnum]


def _per_class_feeds(rng):
    lo = rng.uniform(0, 10, (2, 9, 2)).astype(np.float32)
    boxes = np.concatenate([lo, lo + rng.uniform(1, 5, (2, 9, 2)).astype(np.float32)], axis=2)
    return {"boxes": boxes, "scores": (rng.integers(0, 11, (2, 9)) / 10).astype(np.float32),
            "roisnum": np.array([4, 0, 5], np.int32)}


CASES.append(Case("mnms9/roisnum-form", ("MulticlassNms", "opset9"), ov_build(_per_class), inputs=_per_class_feeds))
