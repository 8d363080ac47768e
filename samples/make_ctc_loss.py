"""Regenerate samples/ctc_loss/: CTCLoss-4 IRs written by openvino.opset4.ctc_loss (dynamic dims,
every input a Parameter; OpenVINO's PyTorch frontend has no conversion rule for aten::ctc_loss),
with torch.nn.functional.ctc_loss's losses (reduction "none", on the log-softmax of the logits)
beside them. tests/test_ctc_loss.py compares onnxruntime with them. Needs torch (not a test
dependency).

``<stem>_<input>.npy``: logits, logit_length, labels, label_length (blank_index for ``blank0``)
and torch's ``<stem>_loss.npy`` (`ir2onnx check` and tests/test_harness.py use them, OpenVINO
included). ``blank0_empty.npz``: a batch with a label_length 0 row (OpenVINO's CPU plugin
crashes on it; torch gives -log of the all-blank path).

    python samples/make_ctc_loss.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset4 as ops4
import torch

HERE = Path(__file__).resolve().parent / "ctc_loss"


def _param(shape, dtype, name):
    p = ops4.parameter(ov.PartialShape(shape), dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def _save(stem: str, with_blank: bool):
    ps = [_param([-1, -1, 5], np.float32, "logits"), _param([-1], np.int32, "logit_length"),
          _param([-1, -1], np.int32, "labels"), _param([-1], np.int32, "label_length")]
    if with_blank:
        ps.append(_param([], np.int32, "blank_index"))
    loss = ops4.ctc_loss(*ps, preprocess_collapse_repeated=False, ctc_merge_repeated=True, unique=False)
    model = ov.Model([loss], ps, stem)
    model.outputs[0].get_tensor().set_names({"loss"})
    ov.save_model(model, str(HERE / f"{stem}.xml"))


def _feeds(seed: int, blank: int, lengths, label_lengths, steps=7):
    rng = np.random.default_rng(seed)
    n = len(lengths)
    logits = (rng.standard_normal((n, steps, 5)) * 2).astype(np.float32)
    others = [c for c in range(5) if c != blank]
    labels = rng.choice(others, size=(n, steps)).astype(np.int32)
    labels[0, 1] = labels[0, 0]  # a repeated label: needs a blank between the two
    feeds = {"logits": logits, "logit_length": np.asarray(lengths, np.int32), "labels": labels,
             "label_length": np.asarray(label_lengths, np.int32)}
    log_probs = torch.from_numpy(logits).log_softmax(2).transpose(0, 1)  # [T, N, C]
    feeds["loss"] = torch.nn.functional.ctc_loss(
        log_probs, torch.from_numpy(labels).long(), torch.tensor(lengths), torch.tensor(label_lengths),
        blank=blank, reduction="none", zero_infinity=False).numpy()
    return feeds


def main():
    HERE.mkdir(exist_ok=True)
    _save("default_blank", False)
    _save("blank0", True)
    for stem, feeds in (("default_blank", _feeds(0, 4, [7, 6, 5, 7], [3, 2, 4, 7])),
                        ("blank0", dict(blank_index=np.array(0, np.int32), **_feeds(1, 0, [7, 4, 6], [4, 2, 1])))):
        for name, value in feeds.items():
            np.save(HERE / f"{stem}_{name}.npy", value)
    np.savez(HERE / "blank0_empty.npz", blank_index=np.array(0, np.int32), **_feeds(2, 0, [5, 7], [2, 0]))


if __name__ == "__main__":
    main()
