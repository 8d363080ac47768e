"""Compare ir2onnx's ONNX on onnxruntime with OpenVINO CPU (f32 hint) on Open Model Zoo IRs and
real images (run by hand: the IRs and images are downloads, not part of the repository; needs
Pillow).

    python samples/check_omz.py MODELS_DIR IMAGES_DIR [--images-count 8] [--precision f32] [--filter NAME]

MODELS_DIR is searched for */FP*/*.xml (the omz_downloader layout). Every image is resized to the
model's input size (bilinear), BGR, NCHW, 0..255 as the Open Model Zoo models expect. Prints, per
model and output, the largest |onnxruntime - OpenVINO| over the images divided by the largest
|OpenVINO| of that output (the output's scale). A DetectionOutput's low-score tail may swap rows
at near-equal scores, which this elementwise measure shows as a large difference: look at the
rows above the confidence threshold then. A model OpenVINO itself fails on is reported as such.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile

import numpy as np


def load_images(folder: str, count: int) -> list:
    from PIL import Image

    paths = sorted(p for p in glob.glob(os.path.join(folder, "*")) if p.lower().endswith((".jpg", ".png", ".jpeg")))
    step = max(1, len(paths) // count)
    return [Image.open(p).convert("RGB") for p in paths[::step][:count]]


def to_input(img, shape) -> np.ndarray:
    n, c, h, w = shape
    rgb = np.asarray(img.resize((w, h)), np.float32)
    return np.ascontiguousarray(rgb[:, :, ::-1].transpose(2, 0, 1)[None].repeat(n, 0))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("images")
    ap.add_argument("--images-count", type=int, default=8)
    ap.add_argument("--precision", default=None)
    ap.add_argument("--filter", default="")
    args = ap.parse_args(argv)

    import onnxruntime as ort
    import openvino as ov

    import ir2onnx

    core = ov.Core()
    images = load_images(args.images, args.images_count)
    worst = 0.0
    for xml in sorted(glob.glob(os.path.join(args.models, "*", "*", "*.xml"))):
        if args.filter not in xml or not os.path.exists(xml[:-4] + ".bin"):
            continue
        label = "/".join(xml.split(os.sep)[-3:-1])
        kw = {} if args.precision is None else {"precision": args.precision}
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.onnx")
            try:
                ir2onnx.convert_file(xml, out, **kw)
            except Exception as e:  # noqa: BLE001 - a report line per model
                print(f"{label:55s} REFUSED {str(e)[:150]}")
                continue
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            sess = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"])
            compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            inp = sess.get_inputs()[0]
            in_type = {"tensor(float16)": np.float16}.get(inp.type, np.float32)
            shape = [d if isinstance(d, int) else 1 for d in compiled.inputs[0].shape]
            errs: dict = {}
            for img in images:
                x = to_input(img, shape)
                ours = sess.run(None, {inp.name: x.astype(in_type)})
                try:
                    ref = compiled([x])
                except RuntimeError as e:  # OpenVINO's own failure on this model and image
                    errs["openvino fails: " + str(e).strip().splitlines()[-1][:80]] = float("nan")
                    break
                for i, o in enumerate(sess.get_outputs()):
                    r = np.asarray(list(ref.values())[i], np.float64)
                    a = np.asarray(ours[i], np.float64)
                    scale = max(np.abs(r).max(), 1e-30)
                    e = float(np.abs(a - r).max() / scale) if a.shape == r.shape else float("inf")
                    errs[o.name] = max(errs.get(o.name, 0.0), e)
            for name, e in errs.items():
                worst = max(worst, e) if e == e else worst
                print(f"{label:55s} in={inp.type[7:-1]:7s} {name[:30]:30s} rel {e:.2e}")
            sys.stdout.flush()
    print(f"worst {worst:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
