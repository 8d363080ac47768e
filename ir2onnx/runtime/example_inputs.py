"""Example inputs kept beside a model: ``<stem>.inputs.npz``, one array per input name.

``ir2onnx check`` and ``ir2onnx run`` feed them to the inputs that ``--input`` and ``--shape``
leave open, instead of generated values. Some models' valid inputs cannot be guessed from their
declared shapes: a CNN with dynamic spatial dims needs them large enough for its pooling, an FFT
a complex last dim of 2, an embedding bag ascending offsets, a detector an image size that
matches its image. Such a model carries its inputs (every bundled sample that needs them does,
so that it passes its own check with default options), and the check names the file as the
inputs' origin. ``np.savez("model.inputs.npz", x=...)`` writes one.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .array_files import read_npz

SUFFIX = ".inputs.npz"


def path_for(model: str | os.PathLike | None) -> Path | None:
    """``<stem>.inputs.npz`` beside ``model`` (an .xml or .onnx path), or None without a path."""
    if not model:
        return None
    model = Path(model)
    return model.with_name(model.stem + SUFFIX)


def load(model: str | os.PathLike | None, names: list[str]) -> tuple[dict[str, np.ndarray], str]:
    """The example inputs of ``model`` (``names``: its input names) and the file's name; ({}, "")
    when there is no such file. An array for a name the model does not have is an error."""
    path = path_for(model)
    if path is None or not path.is_file():
        return {}, ""
    arrays = read_npz(path, names, f"the example inputs '{path}'")
    return arrays, path.name


def fill(model, names: list[str], given: dict | None, shapes: dict | None) -> tuple[dict, list[str], str]:
    """``given`` completed with the example inputs of ``model`` for the names that ``given`` and
    ``shapes`` leave open; also the names taken and the file's name."""
    given, shapes = dict(given or {}), dict(shapes or {})
    examples, file = load(model, names)
    taken = [k for k in examples if k not in given and k not in shapes]
    given.update({k: examples[k] for k in taken})
    return given, taken, file
