"""Every built-in selftest case: the explicit list of the case modules, one per op family (the same
names as ir2onnx/ops/ and ir2onnx/oracles/), in the order the cases run."""
from __future__ import annotations

from . import infrastructure
from . import conversion
from . import type_promotion
from . import batch_to_space
from . import depth_to_space
from . import reshape
from . import shape
from . import indexing
from . import convolution_backprop_data
from . import elementwise
from . import reduction
from . import convolution
from . import matmul
from . import inverse
from . import transpose
from . import slicing
from . import activations
from . import unary
from . import finiteness
from . import hard_sigmoid
from . import softmax
from . import pooling
from . import adaptive_pooling
from . import comparison
from . import logical
from . import bitwise
from . import normalization
from . import response_normalization
from . import split
from . import broadcast
from . import generation
from . import random_ops
from . import pad
from . import attention
from . import interpolate
from . import colour
from . import topk
from . import cumsum
from . import scatter
from . import one_hot
from . import embedding
from . import segment
from . import gather_tree
from . import patches
from . import bucketize
from . import quantization
from . import trigonometric
from . import reverse_roll
from . import recurrent
from . import non_max_suppression
from . import multiclass_nms
from . import matrix_nms
from . import nms_rotated
from . import prior_box
from . import region_yolo
from . import ctc
from . import detection_output
from . import control_flow
from . import state
from . import roi_align
from . import roi_pooling
from . import psroi_pooling
from . import deformable_psroi_pooling
from . import ctc_loss
from . import proposal
from . import experimental_detectron
from . import generate_proposals
from . import signal
from . import grid_sample
from . import unique
from .cases import Case

FAMILIES = (infrastructure, conversion, type_promotion, batch_to_space, depth_to_space, reshape, shape, indexing,
            convolution_backprop_data, elementwise, reduction, convolution, matmul, inverse, transpose,
            slicing, activations, unary, finiteness, hard_sigmoid, softmax, pooling, adaptive_pooling, comparison, logical,
            bitwise, normalization, response_normalization,
            split, broadcast, generation, random_ops, pad, attention, interpolate, colour, topk, cumsum,
            scatter, one_hot, embedding, segment, gather_tree, patches, bucketize,
            quantization, trigonometric, reverse_roll, recurrent, non_max_suppression, multiclass_nms, matrix_nms, nms_rotated,
            roi_align, roi_pooling, psroi_pooling, deformable_psroi_pooling, prior_box, region_yolo, ctc, ctc_loss,
            detection_output,
            proposal, experimental_detectron, generate_proposals,
            control_flow, state, signal, grid_sample, unique)


def all_cases() -> list[Case]:
    """Every built-in case, family by family."""
    cases = [case for family in FAMILIES for case in family.CASES]
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"selftest cases named twice: {sorted(dup)}")
    return cases
