"""ExtractImagePatches-3 on OpenVINO-written IR against the oracle and the OpenVINO runtime, bit
for bit: a sweep of sizes, strides, rates and auto_pad over odd and even image sizes, dynamic batch
and channels, element types (i16 has no onnxruntime Pad kernel: the padding is a Concat), and the
refusal of dynamic spatial dims."""
from __future__ import annotations

import itertools

import numpy as np
import openvino.opset3 as o3
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.testing import ov_parameter, ov_save

from util import bitexact_everywhere, iota

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


def test_dynamic_spatial_dims_refused(tmp_path):
    x = ov_parameter([1, 1, None, 8], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", o3.extract_image_patches(x, [2, 2], [1, 1], [1, 1], "valid"), [x])
    with pytest.raises(UnsupportedLayer, match="dynamic spatial dims"):
        convert(xml)
