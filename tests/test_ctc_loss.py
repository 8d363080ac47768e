"""CTCLoss-4 on OpenVINO-written IR (opset4.ctc_loss; dynamic dims, every input at run time):
onnxruntime vs OpenVINO vs the path-enumerating oracle for every attribute combination and the
blank index absent, run-time and constant; infeasible targets (inf); f16 logits; i64 lengths;
a recognizer-sized batch (vs OpenVINO);
and vs torch.nn.functional.ctc_loss on samples/ctc_loss (samples/make_ctc_loss.py: OpenVINO's
PyTorch frontend has no rule for aten::ctc_loss). Tolerance rtol 1e-5 (measured <= 3e-7)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset4 as ops4
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "ctc_loss"
TOL = dict(rtol=1e-5, atol=1e-5)
# row 0: 0 1 0 0 2 (unique -> 0 1 2, collapse -> 0 1 0 2); row 1: 2 2 1 (-> 2 1); row 2: 1
LABELS = np.array([[0, 1, 0, 0, 2, 1, 1], [2, 2, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]], np.int64)


def _ir(tmp_path, blank, merge, collapse, unique, ftype=np.float32, itype=np.int32):
    ps = [ov_parameter((None, None, 4), ftype, "logits"), ov_parameter((None,), itype, "logit_length"),
          ov_parameter((None, None), itype, "labels"), ov_parameter((None,), itype, "label_length")]
    args = list(ps)
    if blank == "param":
        ps.append(ov_parameter((), itype, "blank_index"))
        args.append(ps[-1])
    elif blank is not None:
        args.append(ops4.constant(np.array(blank, itype)))
    loss = ops4.ctc_loss(*args, preprocess_collapse_repeated=collapse, ctc_merge_repeated=merge, unique=unique)
    return ov_save(tmp_path / "ctc.xml", loss, ps)


def _all_agree(xml, feeds, ov=True, tol=TOL):
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    assert got.dtype == feeds["logits"].dtype and got.shape == (len(feeds["logits"]),)
    np.testing.assert_allclose(got, want, **tol)
    if ov:
        np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **tol)
    return got


def _feeds(seed, labels, blank_to=None, itype=np.int32, ftype=np.float32):
    logits = np.random.default_rng(seed).standard_normal((3, 7, 4)).astype(ftype) * 2
    if blank_to is not None:  # labels must avoid the blank: class `blank_to` is spelled 3
        labels = np.where(labels == blank_to, 3, labels)
    return {"logits": logits, "logit_length": np.array([7, 6, 5], itype), "labels": labels.astype(itype),
            "label_length": np.array([5, 3, 2], itype)}


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("collapse, unique", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("blank", [None, "param", 1])
def test_ctc_loss(tmp_path, merge, collapse, unique, blank):
    xml = _ir(tmp_path, blank, merge, collapse, unique)
    feeds = _feeds(3, LABELS, None if blank is None else (0 if blank == "param" else 1))
    if blank == "param":
        feeds["blank_index"] = np.array(0, np.int32)
    got = _all_agree(xml, feeds)
    assert np.isfinite(got).all() and (got > 0).all()


def test_attributes_change_the_loss(tmp_path):
    """unique, collapse and merge each give a different loss on row 0 (0 1 0 0 2)."""
    feeds = _feeds(4, LABELS)
    losses = {key: run_onnx(_ir(tmp_path, None, *key), feeds)[0][0]
              for key in [(True, False, False), (True, True, False), (True, False, True), (False, False, False)]}
    assert len({round(float(v), 4) for v in losses.values()}) == 4


def test_infeasible_target_is_inf(tmp_path):
    """With merge, 1 1 1 needs 5 steps: over 4 steps no path decodes to it (inf everywhere);
    without merge 3 steps suffice."""
    feeds = {"logits": np.random.default_rng(5).standard_normal((2, 4, 4)).astype(np.float32),
             "logit_length": np.array([4, 4], np.int32), "labels": np.array([[1, 1, 1, 0], [1, 2, 0, 0]], np.int32),
             "label_length": np.array([3, 2], np.int32)}
    got = _all_agree(_ir(tmp_path, None, True, False, False), feeds)
    assert np.isinf(got[0]) and np.isfinite(got[1])
    assert np.isfinite(_all_agree(_ir(tmp_path, None, False, False, False), feeds)).all()


def test_f16_and_i64(tmp_path):
    xml = _ir(tmp_path, "param", True, False, False, np.float16, np.int64)
    feeds = _feeds(6, LABELS, 0, np.int64, np.float16)
    feeds["blank_index"] = np.array(0, np.int64)
    _all_agree(xml, feeds, tol=dict(rtol=2e-3, atol=2e-3))


@pytest.mark.parametrize("stem, data", [("default_blank", "default_blank"), ("blank0", "blank0"),
                                        ("blank0", "blank0_empty")])
def test_torch_samples(stem, data):
    """onnxruntime equals torch.nn.functional.ctc_loss (inf rows included). The batch with an
    empty label is not run on OpenVINO: its CPU plugin crashes (segfault) on label_length 0."""
    if data == "blank0_empty":
        saved = dict(np.load(SAMPLES / f"{data}.npz"))
    else:
        names = ["logits", "logit_length", "labels", "label_length", "loss"] + (["blank_index"] if stem == "blank0" else [])
        saved = {n: np.load(SAMPLES / f"{stem}_{n}.npy") for n in names}
    torch_loss = saved.pop("loss")
    got = _all_agree(SAMPLES / f"{stem}.xml", saved, ov=data != "blank0_empty")
    np.testing.assert_allclose(got, torch_loss, **TOL)
    assert np.isinf(torch_loss).any() or data != "default_blank"


def test_recognizer_sized(tmp_path):
    """A license-plate recognizer's shape (T 88, 71 classes, labels up to 30): onnxruntime vs
    OpenVINO only (the oracle enumerates paths; measured relative difference 6e-7)."""
    rng = np.random.default_rng(8)
    ps = [ov_parameter((None, None, 71), np.float32, "logits"), ov_parameter((None,), np.int32, "logit_length"),
          ov_parameter((None, None), np.int32, "labels"), ov_parameter((None,), np.int32, "label_length")]
    xml = ov_save(tmp_path / "ctc.xml", ops4.ctc_loss(*ps), ps)
    feeds = {"logits": (rng.standard_normal((4, 88, 71)) * 3).astype(np.float32),
             "logit_length": np.array([88, 80, 60, 88], np.int32),
             "labels": rng.integers(0, 70, (4, 88)).astype(np.int32), "label_length": np.array([10, 8, 20, 30], np.int32)}
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-5)
    assert (got > 100).all()


def test_f64_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="f16, f32"):
        convert(_ir(tmp_path, None, True, False, False, np.float64))
