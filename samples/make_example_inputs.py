"""Write ``<stem>.inputs.npz`` beside the bundled samples whose generated inputs do not fit them.

``ir2onnx check`` and ``run`` feed a model's example inputs (``ir2onnx/runtime/example_inputs.py``) to the
inputs no option gives. The samples below cannot be checked on generated inputs (dynamic dims
generated as 1, random values the operation rejects), so each gets the inputs its own tests
feed, which the sample folder already holds as ``<stem>_<input>.npy`` or ``<input>.npy``:

    python samples/make_example_inputs.py          # (re)write them all
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

NEED = {  # sample -> why generated inputs do not fit it
    "ctc_loss/blank0.xml": "label lengths within the logit lengths",
    "ctc_loss/default_blank.xml": "label lengths within the logit lengths",
    "dynamic/googlenet/model.xml": "an image large enough for its pooling (dynamic dims)",
    "dynamic/squeezenet/model.xml": "an image large enough for its convolutions",
    "dynamic/swin/model.xml": "an image large enough for its patch embedding",
    "dynamic/topk/model.xml": "a last dim of at least K",
    "embedding_bag/mean.xml": "indices within the table, ascending offsets",
    "embedding_bag/sum_weighted.xml": "indices within the table, ascending offsets",
    "framework/integer_power/uint8.xml": "its framework inputs wrap (below)",
    "framework/scatter_mean/floor.xml": "indices within the data (the framework's, made non-negative: below)",
    "grid_sample/framework/ties.xml": "an image and a grid of sizes that fit (off the ties: below)",
    "grid_sample/random.xml": "an image and a grid of sizes that fit",
    "rcnn/faster_rcnn.xml": "an image and its im_info",
    "rcnn/faster_rcnn_tf.xml": "an image and its im_info",
    "rcnn/rfcn.xml": "an image and its im_info",
    "rcnn/rfcn_tf.xml": "an image and its im_info",
    "signal/fft2_pad_trim.xml": "a complex last dim of 2",
    "signal/ifft.xml": "a complex last dim of 2",
    "signal/ifft_ortho.xml": "a complex last dim of 2",
    "signal/irfft.xml": "a complex last dim of 2",
    "signal/irfft2.xml": "a complex last dim of 2",
    "signal/irfft_n7.xml": "a complex last dim of 2",
    "signal/rfft2_trim.xml": "a signal long enough for its trim",
    "signal/stft.xml": "a signal longer than its frame",
}


# Three framework samples exist to pin a documented deviation (docs/deviations.md): their
# framework inputs make OpenVINO differ from the framework, which ir2onnx follows, so their own
# check would compare against the deviation. Their example inputs stay off it; the tests still
# compare ir2onnx with the framework on the framework inputs.
OFF_THE_DEVIATION = {
    # u8 powers: OpenVINO saturates where torch wraps; these stay below 256
    "framework/integer_power/uint8.xml": lambda x: {"in0": np.array([3, 2, 0, 1, 15, 2, 5, 7, 1, 16], np.uint8),
                                                     "in1": np.array([5, 7, 0, 200, 2, 7, 3, 2, 9, 1], np.uint8)},
    # integer mean: OpenVINO truncates, torch floors; equal on non-negative values
    "framework/scatter_mean/floor.xml": lambda x: {k: np.abs(v) for k, v in x.items()},
    # nearest on rounding ties: OpenVINO and torch break them differently; the random sample's grid
    "grid_sample/framework/ties.xml": lambda x: {**x, "in1": np.load(ROOT / "grid_sample" / "random_in1.npy")},
}


def inputs_of(xml: Path) -> dict[str, np.ndarray]:
    from ir2onnx.ir.reader import load_ir
    from ir2onnx.oracles.interpreter import input_name, parameters

    out = {}
    for p in parameters(load_ir(xml)):
        name = input_name(p)
        found = [f for f in (xml.with_name(f"{xml.stem}_{name}.npy"), xml.with_name(f"{name}.npy")) if f.exists()]
        if not found:
            raise SystemExit(f"{xml}: no {xml.stem}_{name}.npy or {name}.npy beside it")
        out[name] = np.load(found[0])
    return out


def main() -> None:
    from ir2onnx.runtime.example_inputs import path_for

    for rel in NEED:
        xml = ROOT / rel
        path = path_for(xml)
        inputs = inputs_of(xml)
        np.savez_compressed(path, **OFF_THE_DEVIATION.get(rel, lambda x: x)(inputs))
        print(f"{path.relative_to(ROOT)}: {NEED[rel]}")


if __name__ == "__main__":
    main()
