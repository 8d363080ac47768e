"""PriorBox-1/-8 and PriorBoxClustered-1 on SSD-style heads that OpenVINO writes: the sizes are
ShapeOf of a feature map and of the image, sliced. Static shapes fold to one constant (no node
left); dynamic shapes compute the boxes at run time. onnxruntime is compared with the oracle and
with OpenVINO (whose CPU plugin runs PriorBox only when it can fold it, so the dynamic models are
reshaped to the fed shapes for OpenVINO). Tolerance: 1e-6 absolute (float32 arithmetic in the
same order; in practice bit for bit)."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

ATOL = 1e-6


def _hw(node):
    """[H, W] of a rank-4 tensor: ShapeOf, then StridedSlice [2:4] (the zoo's pattern)."""
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    return ops.strided_slice(ops.shape_of(node), c([2]), c([4]), c([1]), [0], [0])


def _ssd(tmp_path, make, maps=((3, 2),), image=(30, 20), dynamic=False, compress=True):
    """An SSD-like head: conv on the image per feature map (f16 weights), a prior-box op per map
    fed by ShapeOf of the map and the image, the priors of all maps concatenated (axis 1)."""
    img = ov_parameter([1, 3, None, None] if dynamic else [1, 3, *image], np.float32, "img")
    priors = []
    for i, (h, w) in enumerate(maps):
        rng = np.random.default_rng(i)
        k = ops.constant(rng.standard_normal((4, 3, 1, 1)).astype(np.float32))
        stride = [image[0] // h, image[1] // w]
        fm = ops.convolution(img, k, stride, [0, 0], [0, 0], [1, 1])
        priors.append(make(_hw(fm), _hw(img)))
    out = priors[0] if len(priors) == 1 else ops.concat(priors, 1)
    out.output(0).get_tensor().set_names({"priors"})
    return ov_save(tmp_path / "ssd.xml", [out], [img], compress_to_fp16=compress)


def _openvino_static(xml, feeds):
    core = ov.Core()
    model = core.read_model(str(xml))
    model.reshape({p.get_any_name(): feeds[p.get_any_name()].shape for p in model.inputs})
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.asarray(compiled([feeds[p.get_any_name()] for p in model.inputs])[compiled.outputs[0]])


def _check(xml, image=(30, 20), expect_nodes=None):
    feeds = {"img": np.random.default_rng(5).standard_normal((1, 3, *image)).astype(np.float32)}
    got = run_onnx(xml, feeds)[0]
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    ov_out = _openvino_static(xml, feeds)
    assert got.dtype == np.float32 and got.shape == want.shape == ov_out.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)
    np.testing.assert_allclose(got, ov_out, rtol=0, atol=ATOL)
    if expect_nodes is not None:
        assert [n.op_type for n in convert(xml).graph.node if n.op_type not in ("Conv", "Cast")] == expect_nodes
    return got


BASE = dict(min_size=[4.0, 6.0], max_size=[9.0, 12.0], aspect_ratio=[2.0, 3.0], flip=True, clip=False,
            step=0.0, offset=0.5, variance=[0.1, 0.1, 0.2, 0.2], scale_all_sizes=True)
VARIANTS = {
    "base": {},
    "clip-one-variance": dict(clip=True, variance=[0.1]),
    "step-offset": dict(step=8.0, offset=0.3),
    "no-flip-duplicate-ratios": dict(flip=False, aspect_ratio=[2.0, 2.0, 1.0, 0.5]),
    "no-max-no-variance": dict(max_size=[], variance=[]),
    "mxnet-scale": dict(scale_all_sizes=False, min_size=[0.2, 0.35], max_size=[], step=0.0, clip=True),
    "mxnet-step": dict(scale_all_sizes=False, min_size=[0.3], max_size=[], step=0.1),
    "fixed-density": dict(min_size=[], max_size=[], fixed_size=[8.0, 5.0], density=[2.0, 1.0],
                          aspect_ratio=[2.0], flip=False),
    "fixed-ratio": dict(min_size=[], max_size=[], fixed_size=[9.0], density=[3.0], fixed_ratio=[1.0, 2.0],
                        aspect_ratio=[2.0], flip=False, clip=True),
}


@pytest.mark.parametrize("version", ["opset1", "opset8"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_prior_box_static_folds(tmp_path, version, name):
    attrs = dict(BASE, **VARIANTS[name])
    builder = o1.prior_box if version == "opset1" else o8.prior_box
    xml = _ssd(tmp_path, lambda m, i: builder(m, i, attrs), maps=((3, 2), (2, 1)))
    _check(xml, expect_nodes=["Identity"])


@pytest.mark.parametrize("order", [True, False])
def test_prior_box8_order_and_dynamic_sizes(tmp_path, order):
    attrs = dict(BASE, min_max_aspect_ratios_order=order)
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs), maps=((3, 2),), dynamic=True)
    got = _check(xml)
    boxes = got[0].reshape(-1, 4)[:12] * [20, 30, 20, 30]  # the first cell: centre (5, 5)
    widths = np.round(boxes[:, 2] - boxes[:, 0], 4)
    sq = np.sqrt(4 * 9)  # the min/max box of min_size 4
    assert widths[1] == pytest.approx(sq if order else 4 * np.sqrt(2), abs=1e-3)
    _check(xml, image=(45, 28))  # other run-time sizes, the same converted model


@pytest.mark.parametrize("name", ["mxnet-scale", "fixed-density", "step-offset"])
def test_prior_box_dynamic_variants(tmp_path, name):
    attrs = dict(BASE, **VARIANTS[name])
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs), dynamic=True)
    assert "Range" in [n.op_type for n in convert(xml).graph.node]
    _check(xml, image=(33, 21))


def test_prior_box_density_without_fixed_size_refused(tmp_path):
    attrs = dict(BASE, density=[2.0])
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs))
    with pytest.raises(UnsupportedLayer, match="boxes per cell"):
        convert(xml)


CLUSTERED = dict(width=[4.0, 6.0, 13.5], height=[5.0, 7.0, 3.25], clip=False, step=0.0, step_w=0.0,
                 step_h=0.0, offset=0.5, variance=[0.1, 0.1, 0.2, 0.2])


@pytest.mark.parametrize("extra", [{}, dict(clip=True, variance=[0.2]), dict(step=6.0),
                                   dict(step_w=3.0, offset=0.25), dict(step_w=4.0, step_h=5.0, variance=[])])
@pytest.mark.parametrize("dynamic", [False, True])
def test_prior_box_clustered_ssd(tmp_path, extra, dynamic):
    attrs = dict(CLUSTERED, **extra)
    xml = _ssd(tmp_path, lambda m, i: o1.prior_box_clustered(m, i, attrs), maps=((3, 2), (2, 1)),
               dynamic=dynamic)
    _check(xml, expect_nodes=None if dynamic else ["Identity"])
    if dynamic:  # OpenVINO's CPU plugin runs PriorBoxClustered on run-time sizes too
        got = _check(xml, image=(36, 24))
        feeds = {"img": np.random.default_rng(5).standard_normal((1, 3, 36, 24)).astype(np.float32)}
        np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=0, atol=ATOL)


def test_prior_box_parameter_sizes(tmp_path):
    """Sizes fed as inputs (i32): computed at run time, OpenVINO cannot run it (compared with
    the oracle only)."""
    size = ov_parameter([2], np.int32, "size")
    image = ov_parameter([2], np.int32, "image")
    pb = o1.prior_box_clustered(size, image, CLUSTERED)
    xml = ov_save(tmp_path / "p.xml", [pb], [size, image])
    feeds = {"size": np.array([2, 3], np.int32), "image": np.array([17, 29], np.int32)}
    got = run_onnx(xml, feeds)[0]
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    assert got.shape == (2, 4 * 2 * 3 * 3)
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@pytest.mark.parametrize("dynamic", [False, True])
def test_prior_box_mxnet_step_minus_one(tmp_path, dynamic):
    """step -1 with scale_all_sizes=false means IH / H (OpenVINO's Python builder refuses a
    negative step, so the saved IR is edited)."""
    attrs = dict(BASE, **dict(VARIANTS["mxnet-scale"], step=2.0))
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs), dynamic=dynamic)
    xml.write_text(xml.read_text().replace('step="2"', 'step="-1"'))
    assert 'step="-1"' in xml.read_text()
    got = _check(xml, image=(30, 20))
    first = got[0, :4] * [20, 30, 20, 30]  # centre (0.5 * 10, 0.5 * 10), half size 0.2 * 30 / 2
    np.testing.assert_allclose(first, [5 - 3, 5 - 3, 5 + 3, 5 + 3], atol=1e-4)


def test_prior_box_mxnet_with_max_size_refused(tmp_path):
    """scale_all_sizes=false with max_size: OpenVINO declares 3 boxes per cell here but writes 4
    (measured: the cells run into each other and the variances overwrite the last boxes)."""
    attrs = dict(BASE, **dict(VARIANTS["mxnet-step"], max_size=[0.9], aspect_ratio=[2.0]))
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs))
    with pytest.raises(UnsupportedLayer, match="make 4 boxes per cell, but OpenVINO declares 3"):
        convert(xml)


def test_prior_box_fixed_ratio_count_mismatch_refused(tmp_path):
    """fixed_ratio with another count than the aspect ratios: OpenVINO declares fewer boxes than
    its reference writes; refused."""
    attrs = dict(BASE, **dict(VARIANTS["fixed-ratio"], aspect_ratio=[]))
    xml = _ssd(tmp_path, lambda m, i: o8.prior_box(m, i, attrs))
    with pytest.raises(UnsupportedLayer, match="make 18 boxes per cell, but OpenVINO declares 17"):
        convert(xml)


def _random_attrs(rng):
    ratios = [float(r) for r in rng.choice([0.5, 1.0, 2.0, 3.0, 1.5, 2.0], size=rng.integers(0, 4))]
    mins = [float(m) for m in np.round(rng.uniform(2, 12, rng.integers(1, 4)), 2)]
    scale_all = bool(rng.integers(0, 2))
    maxs = [m + float(np.round(rng.uniform(1, 6), 2)) for m in mins] if scale_all and rng.integers(0, 2) else []
    if not scale_all:
        mins = [m / 40 for m in mins]
    return dict(min_size=mins, max_size=maxs, aspect_ratio=ratios, flip=bool(rng.integers(0, 2)),
                clip=bool(rng.integers(0, 2)), step=float(rng.choice([0.0, 4.0, 7.5])),
                offset=float(rng.choice([0.5, 0.25, 0.0])), variance=[[], [0.1], [0.1, 0.1, 0.2, 0.2]][rng.integers(0, 3)],
                scale_all_sizes=scale_all, min_max_aspect_ratios_order=bool(rng.integers(0, 2)))


@pytest.mark.parametrize("seed", range(8))
def test_prior_box_random_attributes(tmp_path, seed):
    """Random attribute sets (sizes, ratios with duplicates and 1, flip, clip, step, offset,
    variances, scale_all_sizes, order), folded and run-time, against the oracle and OpenVINO."""
    rng = np.random.default_rng(seed)
    attrs = _random_attrs(rng)
    for dynamic in (False, True):
        folder = tmp_path / str(dynamic)
        folder.mkdir()
        xml = _ssd(folder, lambda m, i: o8.prior_box(m, i, attrs), maps=((3, 2), (1, 1)), dynamic=dynamic)
        _check(xml, image=(30, 20))
