"""Selftest cases of ExperimentalDetectronPriorGridGenerator-6 (priors a Parameter, the feature
map and the image Parameters whose sizes only are used, as in the Detectron heads) and
ExperimentalDetectronTopKROIs-6 (rois and probabilities Parameters, N >= max_rois) and
ExperimentalDetectronROIFeatureExtractor-6 (rois spread over the levels, two or three maps; aligned) and
ExperimentalDetectronGenerateProposalsSingleImage-6 (an RPN of 3 anchors on a 4x5 map) and
ExperimentalDetectronDetectionOutput-6 (overlapping rois, 3 classes, all inputs Parameters)."""
from __future__ import annotations

import numpy as np

from .cases import Case, iota, ov_build, param


def _grid(attrs, fm=(1, 4, 3, 2), image=(1, 3, 24, 20), n=3):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        pr, x, img = param(ops, [n, 4], name="priors"), param(ops, list(fm), name="fm"), \
            param(ops, list(image), name="img")
        node = NodeFactory("opset6").create("ExperimentalDetectronPriorGridGenerator",
                                            [pr.output(0), x.output(0), img.output(0)], attrs)
        return [(node, "rois")], [pr, x, img]
    return make


BASE = dict(flatten=True, h=0, w=0, stride_x=0.0, stride_y=0.0)
ONE = {"priors": np.array([[-2.0, -1.0, 2.0, 1.0]], np.float32)}


def _one_cell(feeds):
    """A 1x1 map on a 16x8 image: step 8 (x) and 16 (y), centre (4, 8)."""
    return np.array([[2.0, 7.0, 6.0, 9.0]], np.float32)


def _topk(max_rois, n=10):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        rois, probs = param(ops, [n, 4], name="rois"), param(ops, [None], name="probs")
        node = NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [rois.output(0), probs.output(0)],
                                            {"max_rois": max_rois})
        return [(node, "top")], [rois, probs]
    return make


TOPK_IN = {"rois": np.arange(16, dtype=np.float32).reshape(4, 4),
           "probs": np.array([0.2, 0.9, 0.1, 0.5], np.float32)}


def _extractor(attrs, sizes=((16, 16), (8, 8), (4, 4)), c=3):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        rois = param(ops, [None, 4], name="rois")
        maps = [param(ops, [1, c, h, w], name=f"p{i}") for i, (h, w) in enumerate(sizes)]
        node = NodeFactory("opset6").create("ExperimentalDetectronROIFeatureExtractor",
                                            [rois.output(0)] + [m.output(0) for m in maps], attrs)
        return [(node.output(0), "features"), (node.output(1), "rois_out")], [rois] + maps
    return make


def _pyramid_rois(rng):
    """ROIs of 64 * 2 ** level side (level 0..2 of a 64-pixel image at scales 4, 8, 16), some
    empty, some beyond the image."""
    centre = rng.random((9, 2)).astype(np.float32) * 64
    side = np.repeat(np.float32([30, 80, 200]), 3)[:, None] * np.float32(0.5)
    rois = np.concatenate([centre - side, centre + side], 1).astype(np.float32)
    rois[0, 2] = rois[0, 0]  # empty: no level, zeros
    return {"rois": rois}


EXTRACT = dict(output_size=3, sampling_ratio=2, pyramid_scales=[4, 8, 16], aligned=False)


ONE_LEVEL = {"rois": np.float32([[0, 0, 4, 4], [1, 1, 1, 3]]), "p0": iota((1, 1, 4, 4))}


def _one_level(feeds):
    """ROI (0, 0, 4, 4) at scale 1, one 1x1 bin, one sample at its centre (2, 2): 11; the empty
    ROI (no level) gives 0."""
    return np.float32([11, 0]).reshape(2, 1, 1, 1)


ONE_LEVEL_ALIGNED = {"rois": np.float32([[0, 0, 4, 4], [1, 1, 1.25, 3]]), "p0": iota((1, 1, 4, 4))}


def _one_level_aligned(feeds):
    """aligned: roi (0, 0, 4, 4) becomes (-0.5, -0.5, 3.5, 3.5), its one sample (y, x) = (1.5, 1.5):
    1 + 4 * 1.5 + 1.5 = 8.5; roi (1, 1, 1.25, 3) becomes x 0.5 .. 0.75, widened to 1 (half_pixel
    would not: 7.625), y 0.5 .. 2.5, its sample (1.5, 1): 8."""
    return np.float32([8.5, 8]).reshape(2, 1, 1, 1)


def _rpn(attrs, a=3, h=4, w=5):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        ins = [param(ops, [3], name="im_info"), param(ops, [h * w * a, 4], name="anchors"),
               param(ops, [a * 4, h, w], name="deltas"), param(ops, [a, h, w], name="scores")]
        node = NodeFactory("opset6").create("ExperimentalDetectronGenerateProposalsSingleImage",
                                            [x.output(0) for x in ins], attrs)
        return [(node.output(0), "rois"), (node.output(1), "roi_scores")], ins
    return make


def _rpn_inputs(rng, a=3, h=4, w=5):
    """Anchors of sides 8, 16, 24 centred on a stride-8 grid; small deltas; distinct scores."""
    ys, xs = np.meshgrid(np.arange(h) * 8 + 4, np.arange(w) * 8 + 4, indexing="ij")
    half = np.float32([4, 8, 12])
    ctr = np.stack([xs, ys], -1).reshape(-1, 1, 2).astype(np.float32)
    anchors = np.concatenate([ctr - half[:, None], ctr + half[:, None]], -1).reshape(-1, 4)
    return {"im_info": np.float32([30, 38, 1]), "anchors": anchors.astype(np.float32),
            "deltas": (rng.standard_normal((a * 4, h, w)) * 0.3).astype(np.float32),
            "scores": rng.permutation(a * h * w).reshape(a, h, w).astype(np.float32) / np.float32(a * h * w)}


RPN = dict(min_size=4.0, nms_threshold=0.5, pre_nms_count=40, post_nms_count=12)
ONE_ANCHOR = {"im_info": np.float32([20, 20, 1]), "anchors": np.float32([[2, 2, 9, 9]]),
              "deltas": np.zeros((4, 1, 1), np.float32), "scores": np.float32([[[0.75]]])}


def _one_anchor(feeds):
    """Zero deltas give the anchor back (width 9 - 2 + 1 = 8 around centre 6); one row, then zeros."""
    return np.float32([[2, 2, 9, 9], [0, 0, 0, 0]])


def _detection(attrs, n=8):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        c = attrs["num_classes"]
        ins = [param(ops, [n, 4], name="rois"), param(ops, [n, 4 * c], name="deltas"),
               param(ops, [n, c], name="scores"), param(ops, [1, 3], name="im_info")]
        node = NodeFactory("opset6").create("ExperimentalDetectronDetectionOutput", [x.output(0) for x in ins], attrs)
        return [(node.output(0), "boxes"), (node.output(1), "classes"), (node.output(2), "det_scores")], ins
    return make


DETECT = dict(score_threshold=0.2, nms_threshold=0.5, max_delta_log_wh=4.0, num_classes=3, post_nms_count=4,
              max_detections_per_image=6, class_agnostic_box_regression=False, deltas_weights=[10.0, 10.0, 5.0, 5.0])


def _detection_inputs(rng, n=8, c=3):
    """Rois of sides 8..24 in a 40-pixel square (many overlaps), small deltas, distinct scores."""
    xy, wh = rng.random((n, 2)) * 32, 8 + rng.random((n, 2)) * 16
    return {"rois": np.concatenate([xy, xy + wh], 1).astype(np.float32),
            "deltas": (rng.standard_normal((n, 4 * c)) * 0.5).astype(np.float32),
            "scores": (rng.permutation(n * c).reshape(n, c) / np.float32(n * c)).astype(np.float32),
            "im_info": np.float32([[40, 40, 1]])}


ONE_ROI = {"rois": np.float32([[0, 0, 9, 9]]), "deltas": np.zeros((1, 12), np.float32),
           "scores": np.float32([[0.1, 0.8, 0.15]]), "im_info": np.float32([[20, 20, 1]])}


def _one_roi_boxes(feeds):
    """Zero deltas give the roi back (width 10 around centre 5): class 1 above 0.2, class 2 not."""
    return np.float32([[0, 0, 9, 9], [0, 0, 0, 0]])


CASES = [
    Case("detection_output/overlapping", ("ExperimentalDetectronDetectionOutput", "opset6"),
         ov_build(_detection(DETECT)), inputs=_detection_inputs, exact=False),
    Case("detection_output/many-per-class", ("ExperimentalDetectronDetectionOutput", "opset6"),
         ov_build(_detection(dict(DETECT, post_nms_count=-1, max_detections_per_image=20, score_threshold=0.0))),
         inputs=_detection_inputs, exact=False),
    Case("detection_output/one-roi", ("ExperimentalDetectronDetectionOutput", "opset6"),
         ov_build(_detection(dict(DETECT, max_detections_per_image=2, deltas_weights=[1.0] * 4), n=1)),
         inputs=ONE_ROI, exact=False, expect={"boxes": _one_roi_boxes, "classes": np.int32([1, 0]),
                                              "det_scores": np.float32([0.8, 0])}),
    Case("generate_proposals_single_image/rpn", ("ExperimentalDetectronGenerateProposalsSingleImage", "opset6"),
         ov_build(_rpn(RPN)), inputs=_rpn_inputs, exact=False),
    Case("generate_proposals_single_image/one-anchor", ("ExperimentalDetectronGenerateProposalsSingleImage", "opset6"),
         ov_build(_rpn(dict(RPN, post_nms_count=2), a=1, h=1, w=1)), inputs=ONE_ANCHOR, exact=False,
         expect={"rois": _one_anchor, "roi_scores": np.float32([0.75, 0])}),
    Case("roi_feature_extractor/worked", ("ExperimentalDetectronROIFeatureExtractor", "opset6"),
         ov_build(_extractor(dict(EXTRACT, output_size=1, sampling_ratio=1, pyramid_scales=[1]),
                             sizes=((4, 4),), c=1)), inputs=ONE_LEVEL, exact=False,
         expect={"features": _one_level}),
    Case("roi_feature_extractor/three-levels", ("ExperimentalDetectronROIFeatureExtractor", "opset6"),
         ov_build(_extractor(EXTRACT)), inputs=_pyramid_rois, exact=False),
    Case("roi_feature_extractor/aligned", ("ExperimentalDetectronROIFeatureExtractor", "opset6"),
         ov_build(_extractor(dict(EXTRACT, aligned=True))), inputs=_pyramid_rois, exact=False),
    Case("roi_feature_extractor/aligned-worked", ("ExperimentalDetectronROIFeatureExtractor", "opset6"),
         ov_build(_extractor(dict(EXTRACT, output_size=1, sampling_ratio=1, pyramid_scales=[1], aligned=True),
                             sizes=((4, 4),), c=1)), inputs=ONE_LEVEL_ALIGNED, exact=False,
         expect={"features": _one_level_aligned}),
    Case("roi_feature_extractor/adaptive-grid", ("ExperimentalDetectronROIFeatureExtractor", "opset6"),
         ov_build(_extractor(dict(EXTRACT, sampling_ratio=0, output_size=2, pyramid_scales=[4, 8]),
                             sizes=((16, 16), (8, 8)))), inputs=_pyramid_rois, exact=False),
    Case("topk_rois/random", ("ExperimentalDetectronTopKROIs", "opset6"), ov_build(_topk(4)),
         shapes={"probs": (10,)}),
    Case("topk_rois/worked", ("ExperimentalDetectronTopKROIs", "opset6"), ov_build(_topk(2, n=4)),
         inputs=TOPK_IN, expect={"top": np.array([[4, 5, 6, 7], [12, 13, 14, 15]], np.float32)}),
    Case("prior_grid/default-steps", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(BASE)), exact=False),
    Case("prior_grid/strides-4d", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(dict(BASE, flatten=False, stride_x=4.0, stride_y=8.0))), exact=False),
    Case("prior_grid/one-cell", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(BASE, fm=(1, 2, 1, 1), image=(1, 3, 16, 8), n=1)), inputs=ONE, exact=False,
         expect={"rois": _one_cell}),
]
