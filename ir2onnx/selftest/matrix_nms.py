"""Selftest cases of MatrixNms-8 (boxes and scores at run time, dynamic box and class counts).
Continuous scores (no ties); decayed scores compared within tolerance (OpenVINO's CPU plugin
computes the linear decay in f32, the framework in f64: 1 ulp apart), classes and indices exactly."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _mnms(n=2, c=3, **attrs):
    def make(ops):
        import openvino.opset8 as o8

        boxes, scores = param(ops, [n, None, 4], name="boxes"), param(ops, [n, None, None], name="scores")
        node = o8.matrix_nms(boxes, scores, **attrs)
        return [(node.output(0), "selected_outputs"), (node.output(1), "selected_indices"),
                (node.output(2), "valid_outputs")], [boxes, scores]
    return make


def _boxes(n=2, m=8, c=3):
    def feeds(rng):
        lo = rng.uniform(0, 10, (n, m, 2)).astype(np.float32)
        size = rng.uniform(1, 5, (n, m, 2)).astype(np.float32)
        return {"boxes": np.concatenate([lo, lo + size], axis=2), "scores": rng.uniform(0, 1, (n, c, m)).astype(np.float32)}
    return feeds


# worked example: B overlaps A with IoU 0.5 (linear decay (1 - 0.5) / (1 - 0) -> 0.8 * 0.5 = 0.4),
# C overlaps nothing (decay 1); D's score equals score_threshold (not a candidate: >)
EXAMPLE = {"boxes": np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5], [2, 2, 3, 3], [5, 5, 6, 6]]], np.float32),
           "scores": np.array([[[0.9, 0.8, 0.7, 0.1]]], np.float32)}

CASES = [
    Case("matrix_nms8/linear-score-across-batch", ("MatrixNms", "opset8"),
         ov_build(_mnms(sort_result_type="score", sort_result_across_batch=True, score_threshold=0.1,
                        post_threshold=0.2, nms_top_k=6, keep_top_k=8, background_class=0)),
         inputs=_boxes(), exact=False),
    Case("matrix_nms8/gaussian-classid-i32", ("MatrixNms", "opset8"),
         ov_build(_mnms(sort_result_type="classid", sort_result_across_batch=True, output_type="i32",
                        decay_function="gaussian", gaussian_sigma=0.5, score_threshold=0.2, post_threshold=0.1,
                        normalized=False)),
         inputs=_boxes(), exact=False),
    Case("matrix_nms8/worked-example", ("MatrixNms", "opset8"),
         ov_build(_mnms(n=1, c=1, score_threshold=0.1, post_threshold=0.3)), inputs=EXAMPLE, exact=False,
         expect={"selected_indices": np.array([[0], [2], [1]], np.int64),
                 "valid_outputs": np.array([3], np.int64)}),
]
