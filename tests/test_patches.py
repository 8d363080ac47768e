"""ExtractImagePatches-3 and Col2Im-15 on OpenVINO-written IR against the oracle and the OpenVINO
runtime, bit for bit: a sweep of sizes, strides, rates and auto_pad over odd and even image sizes,
dynamic batch and channels, element types (i16 has no onnxruntime Pad kernel: the padding is a
Concat), dynamic spatial dims; Col2Im against a numpy torch-fold, f16 within
tolerance, run-time sizes through ONNX Col2Im, torch's fold round trip."""
from __future__ import annotations

import itertools

import numpy as np
import openvino.opset3 as o3
import openvino.opset15 as o15
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

from util import bitexact_everywhere, iota

RNG = np.random.default_rng(3)
SWEEP = list(itertools.product([(3, 3), (2, 4), (1, 1)], [(1, 1), (2, 3), (5, 5)], [(1, 1), (2, 1)],
                               ["valid", "same_upper", "same_lower"]))


@pytest.mark.parametrize("image", [(7, 10), (4, 5)])
@pytest.mark.parametrize("sizes, strides, rates, pad", SWEEP)
def test_sweep(tmp_path, image, sizes, strides, rates, pad):
    x = ov_parameter([None, None, *image], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", o3.extract_image_patches(x, list(sizes), list(strides), list(rates), pad), [x])
    bitexact_everywhere(xml, {"x": iota((2, 3, *image))})


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.uint8, np.int64])
def test_element_types(tmp_path, dtype):
    x = ov_parameter([1, 2, 6, 6], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", o3.extract_image_patches(x, [3, 2], [2, 3], [1, 2], "same_lower"), [x])
    got = bitexact_everywhere(xml, {"x": iota((1, 2, 6, 6), dtype)})
    assert got.dtype == dtype and got.shape == (1, 12, 3, 2)


@pytest.mark.parametrize("sizes, strides, rates, pad", SWEEP[::5])
def test_dynamic_spatial_dims(tmp_path, sizes, strides, rates, pad):
    """Every dim dynamic: padding and output size from Shape at run time; one model, several images.
    An image smaller than the dilated kernel (valid: no patch) is compared with the oracle only:
    OpenVINO 2026.4's CPU plugin raises "Can't clone desc if new dims are undefined" there."""
    x = ov_parameter([None, None, None, None], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", o3.extract_image_patches(x, list(sizes), list(strides), list(rates), pad), [x])
    for image in [(7, 10), (4, 5), (1, 2)]:
        too_small = pad == "valid" and any(d < (k - 1) * r + 1 for d, k, r in zip(image, sizes, rates))
        bitexact_everywhere(xml, {"x": iota((1, 2, *image))}, openvino=not too_small)


# -- Col2Im-15 ------------------------------------------------------------------------------------
def _fold(x, size, kernel, strides, dilations, begins, ends):
    """torch.nn.functional.fold in numpy: block (bh, bw) of column (c, ki, kj) adds at
    (bh * s - p + ki * d, bw * s - p + kj * d)."""
    (h, w), (kh, kw) = size, kernel
    nb = [(o + b + e - (d * (k - 1) + 1)) // s + 1 for o, b, e, d, k, s in zip(size, begins, ends, dilations, kernel, strides)]
    padded = np.zeros((x.shape[0], x.shape[1] // (kh * kw), h + begins[0] + ends[0] + 20, w + begins[1] + ends[1] + 20), x.dtype)
    cols = x.reshape(x.shape[0], -1, kh, kw, nb[0], nb[1])
    for ki, kj, bh, bw in itertools.product(range(kh), range(kw), range(nb[0]), range(nb[1])):
        padded[:, :, bh * strides[0] + ki * dilations[0], bw * strides[1] + kj * dilations[1]] += cols[:, :, ki, kj, bh, bw]
    return padded[:, :, begins[0]:begins[0] + h, begins[1]:begins[1] + w]


COL2IM = [  # output_size, kernel, strides, dilations, pads_begin, pads_end
    ((4, 5), (2, 2), (1, 1), (1, 1), (0, 0), (0, 0)),
    ((6, 6), (3, 2), (2, 1), (1, 2), (1, 0), (1, 2)),
    ((5, 7), (2, 3), (3, 2), (2, 1), (2, 1), (0, 1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
@pytest.mark.parametrize("case", range(len(COL2IM)))
def test_col2im_sweep(tmp_path, dtype, case):
    size, kernel, strides, dilations, begins, ends = COL2IM[case]
    nb = [(o + b + e - (d * (k - 1) + 1)) // s + 1 for o, b, e, d, k, s in zip(size, begins, ends, dilations, kernel, strides)]
    x = ov_parameter([None, None, nb[0] * nb[1]], dtype, "x")
    node = o15.col2im(x, o15.constant(np.array(size, np.int32)), o15.constant(np.array(kernel, np.int32)), list(strides),
                      list(dilations), list(begins), list(ends))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    data = RNG.integers(-9, 10, (2, 3 * kernel[0] * kernel[1], nb[0] * nb[1])).astype(dtype)
    bitexact_everywhere(xml, {"x": data}, _fold(data, size, kernel, strides, dilations, begins, ends))


def test_col2im_f16_adds_in_f32(tmp_path):
    x = ov_parameter([1, 8, 9], np.float16, "x")
    xml = ov_save(tmp_path / "m.xml", o15.col2im(x, o15.constant(np.array([4, 4])), o15.constant(np.array([2, 2]))), [x])
    data = RNG.standard_normal((1, 8, 9)).astype(np.float16)
    got = run_onnx(xml, {"x": data})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, _fold(data.astype(np.float32), (4, 4), (2, 2), (1, 1), (1, 1), (0, 0), (0, 0)),
                               rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("case", range(len(COL2IM)))
@pytest.mark.parametrize("batched", [True, False])
def test_col2im_runtime_sizes_onnx_col2im(tmp_path, case, batched):
    """Run-time output_size and kernel_size: ONNX Col2Im (opset 18), equal to the fold."""
    size, kernel, strides, dilations, begins, ends = COL2IM[case]
    nb = [(o + b + e - (d * (k - 1) + 1)) // s + 1 for o, b, e, d, k, s in zip(size, begins, ends, dilations, kernel, strides)]
    shape = [None, None, None] if batched else [None, None]
    x, s, k = ov_parameter(shape, np.float32, "x"), ov_parameter([2], np.int32, "s"), ov_parameter([2], np.int32, "k")
    node = o15.col2im(x, s, k, list(strides), list(dilations), list(begins), list(ends))
    xml = ov_save(tmp_path / "m.xml", node, [x, s, k])
    data = RNG.integers(-9, 10, (2, 2 * kernel[0] * kernel[1], nb[0] * nb[1])).astype(np.float32)
    want = _fold(data, size, kernel, strides, dilations, begins, ends)
    feeds = {"x": data if batched else data[0], "s": np.array(size, np.int32), "k": np.array(kernel, np.int32)}
    bitexact_everywhere(xml, feeds, want if batched else want[0], opset=18)
    with pytest.raises(UnsupportedLayer, match="opset >= 18"):
        convert(xml, opset=17)


def test_col2im_runtime_sizes_integer_refused(tmp_path):
    x, s = ov_parameter([1, 4, 4], np.int32, "x"), ov_parameter([2], np.int64, "s")
    xml = ov_save(tmp_path / "m.xml", o15.col2im(x, s, o15.constant(np.array([2, 2]))), [x, s])
    with pytest.raises(UnsupportedLayer, match="f32/f16 only"):
        convert(xml, opset=18)


def test_col2im_torch_fold_round_trip():
    """samples/make_col2im.py: torch.nn.functional.fold (dilation, padding, stride) through
    convert_model; onnxruntime on ours equals torch's saved output."""
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "samples" / "col2im"
    x, want = np.load(folder / "fold_x.npy"), np.load(folder / "fold_y.npy")
    np.testing.assert_allclose(run_onnx(folder / "fold.xml", {"x": x})[0], want, rtol=1e-6, atol=1e-6)
