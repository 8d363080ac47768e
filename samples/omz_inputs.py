"""Write ``<stem>.inputs.npz`` beside every Open Model Zoo IR of a folder, from real images, so that
``ir2onnx check FOLDER`` feeds each model a real frame (run by hand: the IRs and images are
downloads, not part of the repository; needs Pillow).

    python samples/omz_inputs.py MODELS_DIR IMAGES_DIR

MODELS_DIR is searched for ``intel/<model>/<precision>/<model>.xml`` (the omz_downloader layout).
IMAGES_DIR holds images (.jpg, .png, the first frame of a .gif): a face (face-*.jpg, for the face
models), a street with people (face-demographics-walking.gif), one with a vehicle
(person-bicycle-car-detection.gif) and a traffic scene for super-resolution (car-detection.gif;
the sample-videos repository's previews and a face photo were used for docs/open-model-zoo.md).
Detectors, super-resolution and text super-resolution get the whole frame; the heads get the
crop the FP32/FP16 detector of the same folder finds (the best face, person, vehicle). Every
input is resized (bilinear) to the model's input, BGR, NCHW, 0..255 as the zoo's models expect
(text super-resolution: grey); a second input of single-image-super-resolution (the bicubic
upsampling it refines) is the frame resized to that input's size.
"""
from __future__ import annotations

import argparse
import glob
import os

import numpy as np


def load(path: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"))


def resize(img: np.ndarray, h: int, w: int) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR), np.float32)


def nchw(img: np.ndarray, h: int, w: int) -> np.ndarray:
    return np.ascontiguousarray(resize(img, h, w)[:, :, ::-1].transpose(2, 0, 1)[None])


def crop(core, xml: str, img: np.ndarray, threshold: float = 0.3) -> np.ndarray:
    """The best-scoring detection of ``xml`` on ``img``, cut out of it."""
    compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    _, _, h, w = compiled.inputs[0].shape
    out = compiled(nchw(img, h, w))
    det = out[compiled.outputs[0]]
    height, width = img.shape[:2]
    if det.shape[-1] == 7:  # DetectionOutput rows, normalized
        rows = det.reshape(-1, 7)
        best = rows[np.argmax(rows[:, 2])]
        box = best[3:7] * [width, height, width, height]
    else:  # [N, 5] boxes in input pixels
        rows = det.reshape(-1, 5)
        best = rows[np.argmax(rows[:, 4])]
        box = best[:4] * [width / w, height / h, width / w, height / h]
    if best[2 if det.shape[-1] == 7 else 4] < threshold:
        raise SystemExit(f"{xml}: nothing above {threshold} to crop")
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return img[max(y0, 0):min(y1, height), max(x0, 0):min(x1, width)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("images")
    args = ap.parse_args(argv)

    import openvino as ov

    core = ov.Core()
    first = lambda pattern: sorted(glob.glob(os.path.join(args.images, pattern)))[0]
    model = lambda name: sorted(glob.glob(os.path.join(args.models, "intel", name, "FP*", name + ".xml")))[-1]
    face_frame = load(first("face-*.jpg"))
    street = load(first("face-demographics-walking*"))
    vehicles = load(first("person-bicycle-car-detection*"))
    traffic = load(first("car-detection*"))
    face = crop(core, model("face-detection-retail-0004"), face_frame)
    person = crop(core, model("pedestrian-detection-adas-0002"), street)
    vehicle = crop(core, model("person-vehicle-bike-detection-2003"), vehicles)
    pick = {"face-detection": face_frame, "age-gender": face, "landmarks": face, "pedestrian": street,
            "person-vehicle-bike": street, "person-attributes": person, "person-reidentification": person,
            "vehicle-attributes": vehicle, "super-resolution": traffic}
    for xml in sorted(glob.glob(os.path.join(args.models, "**", "*.xml"), recursive=True)):
        img = next((v for k, v in pick.items() if k in os.path.basename(xml)), None)
        if img is None:
            print(f"{xml}: no image for it, left out")
            continue
        arrays = {}
        for port in core.read_model(xml).inputs:
            n, c, h, w = (d.get_length() for d in port.get_partial_shape())
            x = nchw(img, h, w)
            if c == 1:  # grey, from BGR
                x = 0.114 * x[:, 0:1] + 0.587 * x[:, 1:2] + 0.299 * x[:, 2:3]
            arrays[port.get_any_name()] = np.repeat(x, n, 0).astype(np.float32)
        np.savez(xml[:-4] + ".inputs.npz", **arrays)
        print(os.path.relpath(xml, args.models), {k: list(v.shape) for k, v in arrays.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
