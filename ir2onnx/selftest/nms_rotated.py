"""Selftest cases of NMSRotated-13. All are compared bit for bit with the oracle (indices exact,
scores gathered); the inputs keep every IoU away from iou_threshold."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

DEVIATES = ("OpenVINO 2026.4's CPU plugin computes the IoU of boxes with collinear edges far too small "
            "(0.185 for 5/11: intersection corners on the other box's edge are rounded outside)")


def _nmsr(clockwise=True, srt=True, otype="i64", iou=0.3, st=0.15, shape=(2, 6, 3), mob=3, run_time=False):
    def make(ops):
        import openvino.opset13 as o13

        b, n, c = shape
        boxes, scores = param(ops, [b, None, 5], name="boxes"), param(ops, [b, c, None], name="scores")
        params = [boxes, scores]
        if run_time:
            extra = [param(ops, [], np.int64, "mob"), param(ops, [], np.float32, "iou"), param(ops, [], np.float32, "st")]
            params += extra
        else:
            extra = [const(ops, mob), const(ops, iou, np.float32), const(ops, st, np.float32)]
        node = o13.nms_rotated(boxes, scores, *extra, sort_result_descending=srt, output_type=otype,
                               clockwise=clockwise)
        return [(node.output(0), "selected_indices"), (node.output(1), "selected_scores"),
                (node.output(2), "valid_outputs")], params
    return make


def _boxes(shape=(2, 6, 3), **thresholds):
    def feeds(rng):
        b, n, c = shape
        xy = rng.uniform(0, 4, (b, n, 2))
        wh = rng.uniform(1, 4, (b, n, 2))
        angle = rng.uniform(-np.pi, np.pi, (b, n, 1))
        scores = rng.integers(0, 11, (b, c, n)) / 10  # equal scores
        out = {"boxes": np.concatenate([xy, wh, angle], axis=2).astype(np.float32),
               "scores": scores.astype(np.float32)}
        return out | {k: np.array(v, np.int64 if k == "mob" else np.float32) for k, v in thresholds.items()}
    return feeds


# the spec's picture: box 1 inside box 0 (IoU 1/4), box 2 is box 0 turned by pi/2 with w, h swapped
NESTED = {"boxes": np.array([[[0, 0, 4, 2, 0.5], [0, 0, 2, 1, 0.5], [0, 0, 2, 4, 0.5 + np.pi / 2],
                              [6, 6, 2, 2, 0.0]]], np.float32),
          "scores": np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)}
a = 0.6
COLLINEAR = {"boxes": np.array([[[0, 0, 8, 1, a], [3 * np.cos(a), 3 * np.sin(a), 8, 1, a]]], np.float32),
             "scores": np.array([[[0.9, 0.8]]], np.float32)}

CASES = [
    Case("nmsr/clockwise-sorted", ("NMSRotated", "opset13"), ov_build(_nmsr()), inputs=_boxes()),
    Case("nmsr/counterclockwise-per-class-i32", ("NMSRotated", "opset13"),
         ov_build(_nmsr(clockwise=False, srt=False, otype="i32")), inputs=_boxes()),
    Case("nmsr/run-time-thresholds", ("NMSRotated", "opset13"), ov_build(_nmsr(run_time=True)),
         inputs=_boxes(mob=2, iou=0.4123, st=0.35)),
    Case("nmsr/nested", ("NMSRotated", "opset13"), ov_build(_nmsr(iou=0.26, st=0.0, shape=(1, 4, 1), mob=10)),
         inputs=NESTED, expect={"selected_indices": np.array([[0, 0, 0], [0, 0, 1], [0, 0, 3]], np.int64)}),
    Case("nmsr/collinear-edges", ("NMSRotated", "opset13"),
         ov_build(_nmsr(iou=0.3, st=0.0, shape=(1, 2, 1), mob=10)), inputs=COLLINEAR,
         expect={"selected_indices": np.array([[0, 0, 0]], np.int64)}, openvino_deviates=DEVIATES),
]
