"""Selftest cases of ConvolutionBackpropData and GroupConvolutionBackpropData (version 1 unless -N
says otherwise). Compared with the oracle within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, ov_compressed, param

CBD, GCBD = ("ConvolutionBackpropData", "opset1"), ("GroupConvolutionBackpropData", "opset1")
W3 = np.array([0.5, -1.0, 2.0], np.float32)


def _filters(shape, seed=7, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _cbd(x_shape, w_shape, strides, out_shape=None, group=False, dtype=np.float32, w=None, **attrs):
    def make(ops):
        x = param(ops, x_shape, dtype)
        filters = ops.constant(_filters(w_shape, dtype=dtype) if w is None else np.asarray(w, dtype))
        o = None if out_shape is None else const(ops, out_shape)
        fn = ops.group_convolution_backprop_data if group else ops.convolution_backprop_data
        return [(fn(x, filters, strides, o, **attrs), "y")], [x]
    return make


def _cbd_compressed(ops):
    """Real-IR surroundings: f16-compressed weights (Const f16 -> Convert) and a bias Add."""
    x = param(ops, [1, 4, 5, 5], np.float32)
    y = ops.convolution_backprop_data(x, ops.constant(_filters((4, 2, 3, 3))), [2, 2], None, [1, 1], [1, 1])
    return [(ops.add(y, ops.constant(_filters((1, 2, 1, 1), 3))), "y")], [x]


def _cbd_shape_from_skip(ops):
    """output_shape computed from another tensor (an encoder/decoder skip connection)."""
    x, skip = param(ops, [1, 2, 4, 4], np.float32), param(ops, [1, 3, 9, 8], np.float32, "skip")
    out_shape = ops.gather(ops.shape_of(skip), const(ops, [2, 3]), const(ops, 0))
    y = ops.convolution_backprop_data(x, ops.constant(_filters((2, 3, 3, 3))), [2, 2], out_shape)
    return [(ops.add(y, skip), "y")], [x, skip]


def _clamp(auto_pad):
    """specs: 1-D input 4, kernel 3, stride 1, output_shape 7 -> the natural 6 then one zero."""
    return Case(f"cbd/output-shape-beyond-natural-{auto_pad}", CBD,
                ov_build(_cbd([1, 1, 4], [1, 1, 3], [1], [7], w=W3.reshape(1, 1, 3), auto_pad=auto_pad)),
                exact=False, expect={"y": lambda f: np.append(np.convolve(f["x"][0, 0], W3), 0).reshape(1, 1, 7)},
                source="ConvolutionBackpropData.md: measured OpenVINO behaviour")


def _crop(auto_pad, begin):
    """specs (decision of 2026-11-23, OpenVINO's runtime rule): with output_shape the crop at the
    start is pads_begin for explicit, 0 for valid, the split of the total for same_*. Input 3,
    kernel 3, stride 1 (natural 5), pads_begin 2, output_shape 3: total 2."""
    return Case(f"cbd/output-shape-crop-{auto_pad}", CBD,
                ov_build(_cbd([1, 1, 3], [1, 1, 3], [1], [3], w=W3.reshape(1, 1, 3), auto_pad=auto_pad,
                              pads_begin=[2], pads_end=[0])),
                exact=False, expect={"y": lambda f: np.convolve(f["x"][0, 0], W3)[begin:begin + 3].reshape(1, 1, 3)},
                source="ConvolutionBackpropData.md: output_shape, the crop OpenVINO's frontends rely on")


CASES = [
    # ConvolutionBackpropData-1: the spec's worked examples first
    Case("cbd/spec-example-1", CBD, ov_build(_cbd([1, 20, 224, 224], [20, 10, 3, 3], [2, 2], pads_begin=[1, 1],
                                                  pads_end=[1, 1])),
         exact=False, expect={"y": (1, 10, 447, 447)}, source="ConvolutionBackpropData.md example 1"),
    Case("cbd/spec-example-2", CBD, ov_build(_cbd([1, 20, 2, 2], [20, 10, 3, 3], [3, 3], output_padding=[2, 2])),
         exact=False, expect={"y": (1, 10, 8, 8)}, source="ConvolutionBackpropData.md example 2"),
    Case("cbd/spec-example-3", CBD, ov_build(_cbd([1, 20, 224, 224], [20, 10, 3, 3], [1, 1], [450, 450],
                                                  auto_pad="valid")),
         exact=False, expect={"y": (1, 10, 450, 450)}, source="ConvolutionBackpropData.md example 3"),
    *[_clamp(p) for p in ("explicit", "valid", "same_upper", "same_lower")],
    _crop("explicit", 2), _crop("valid", 0), _crop("same_lower", 1), _crop("same_upper", 1),
    Case("cbd/output-padding-zeros", CBD, ov_build(_cbd([1, 1, 2], [1, 1, 3], [2], w=np.ones((1, 1, 3)),
                                                       output_padding=[1])),
         inputs={"x": np.array([[[1, 2]]], np.float32)}, exact=False,
         expect={"y": np.array([[[1, 1, 3, 2, 2, 0]]], np.float32)},
         source="ConvolutionBackpropData.md: output_padding elements are zeros"),
    Case("cbd/same-upper-odd-total", CBD, ov_build(_cbd([1, 1, 5], [1, 1, 3], [2], [8], auto_pad="same_upper")),
         exact=False, expect={"y": (1, 1, 8)}, source="ConvolutionBackpropData.md: same_upper crops the start"),
    Case("cbd/same-lower-odd-total", CBD, ov_build(_cbd([1, 2, 5], [2, 1, 3], [2], [8], auto_pad="same_lower")),
         exact=False, expect={"y": (1, 1, 8)}),
    Case("cbd/stride2-pads1-8x8", CBD, ov_build(_cbd([1, 2, 8, 8], [2, 3, 3, 3], [2, 2], pads_begin=[1, 1],
                                                     pads_end=[1, 1])),
         exact=False, expect={"y": (1, 3, 15, 15)}, source="toolchain-facts.md: 15x15, not 16x16"),
    Case("cbd/asymmetric-pads-dilation", CBD, ov_build(_cbd([1, 2, 4, 5], [2, 2, 3, 2], [2, 1], pads_begin=[1, 0],
                                                            pads_end=[0, 1], dilations=[2, 2])),
         exact=False, expect={"y": (1, 2, 10, 6)}),
    Case("cbd/3d", CBD, ov_build(_cbd([1, 2, 3, 3, 3], [2, 3, 2, 2, 2], [2, 2, 2])), exact=False,
         expect={"y": (1, 3, 6, 6, 6)}),
    Case("cbd/f16", CBD, ov_build(_cbd([1, 3, 4, 4], [3, 2, 3, 3], [2, 2], dtype=np.float16)), exact=False,
         expect={"y": (1, 2, 9, 9)}),
    Case("cbd/f16-weights-and-bias", CBD, ov_compressed(_cbd_compressed), exact=False, expect={"y": (1, 2, 9, 9)}),
    Case("cbd/output-shape-from-skip", CBD, ov_build(_cbd_shape_from_skip), exact=False, expect={"y": (1, 3, 9, 8)}),
    # the stride-phase forms (convolution_backprop_forms.py): Conv -> GatherElements, one Conv per
    # residue where residues have unequal taps, the DepthToSpace chain for a dynamic batch
    Case("cbd/phase-k4-s2", CBD, ov_build(_cbd([1, 3, 5, 6], [3, 2, 4, 4], [2, 2], pads_begin=[1, 1],
                                               pads_end=[1, 1])),
         exact=False, expect={"y": (1, 2, 10, 12)}),
    Case("cbd/phase-3d-k3-s2-split", CBD, ov_build(_cbd([1, 2, 3, 4, 3], [2, 3, 3, 3, 3], [2, 2, 2],
                                                        pads_begin=[1, 0, 1], pads_end=[0, 1, 1],
                                                        output_padding=[1, 0, 1])),
         exact=False, expect={"y": (1, 3, 7, 8, 6)}),
    Case("cbd/phase-3d-dynamic-batch", CBD, ov_build(_cbd([-1, 2, 3, 3, 3], [2, 3, 4, 4, 4], [2, 2, 2],
                                                          pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
         inputs={"x": _filters((2, 2, 3, 3, 3), seed=3)}, exact=False, expect={"y": (2, 3, 6, 6, 6)}),
    Case("gcbd/groups-2", GCBD, ov_build(_cbd([1, 4, 3, 3], [2, 2, 3, 3, 3], [2, 2], group=True,
                                              pads_begin=[1, 1], pads_end=[1, 1])),
         exact=False, expect={"y": (1, 6, 5, 5)}),
    Case("gcbd/depthwise", GCBD, ov_build(_cbd([1, 3, 4, 4], [3, 1, 1, 3, 3], [1, 1], group=True)),
         exact=False, expect={"y": (1, 3, 6, 6)}),
    Case("gcbd/output-shape", GCBD, ov_build(_cbd([1, 2, 3], [2, 1, 2, 3], [2], [6], group=True,
                                                  auto_pad="same_upper")),
         exact=False, expect={"y": (1, 4, 6)}),
]
