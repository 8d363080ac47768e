"""``ir2onnx run FOLDER --steps N`` on an encoder-decoder model (Whisper): greedy decoding by
optimum's convention, on a ``--optimum`` folder (``encoder_model.onnx`` and
``decoder_model_merged.onnx``, or ``decoder_model.onnx`` + ``decoder_with_past_model.onnx``) or
on the optimum-intel IR folder it comes from (converted first, into a temporary folder;
:mod:`ir2onnx.llm.optimum`).

The encoder runs once on its inputs (``--input input_features=FILE.npy``, else random normals of
its shape, dynamic dims from ``--shape`` or 1); the first decoder step is ``decoder_model.onnx``
on the start token (config.json's ``decoder_start_token_id``, or ``--input
decoder_input_ids=FILE.npy`` [batch, tokens]) and ``encoder_hidden_states`` (the merged decoder:
``use_cache_branch`` False and an empty cache); every next step the with-past decoder
(``use_cache_branch`` True) on the previous argmax, fed the self-attention cache of the step
before (``present.N.decoder.*`` -> ``past_key_values.N.decoder.*``) and the cross-attention cache
of the first step (``present.N.encoder.*``).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..errors import Ir2OnnxError
from ..runtime.sessions import make_inputs, run, session
from .optimum import write_folder

ENCODER, MERGED = "encoder_model.onnx", "decoder_model_merged.onnx"
PAIR = ("decoder_model.onnx", "decoder_with_past_model.onnx")
_IRS = ("openvino_encoder_model.xml", "openvino_decoder_model.xml")


def onnx_files(folder: Path) -> list[str] | None:
    """The encoder and decoder file(s) of an ONNX encoder-decoder folder, None when it is not one."""
    if not (folder / ENCODER).is_file():
        return None
    if (folder / MERGED).is_file():
        return [ENCODER, MERGED]
    return [ENCODER, *PAIR] if all((folder / f).is_file() for f in PAIR) else None


def is_folder(path) -> bool:
    """An encoder-decoder folder: optimum's ONNX files, or optimum-intel's two IRs."""
    p = Path(path)
    return p.is_dir() and (onnx_files(p) is not None or all((p / f).is_file() for f in _IRS))


def _past(outputs: dict) -> dict:
    return {n.replace("present.", "past_key_values.", 1): v for n, v in outputs.items() if n.startswith("present.")}


def _empty_cache(sess, batch: int) -> dict:
    """Zeros [batch, heads, 0, head size] for each past_key_values.* input of ``sess``."""
    out = {}
    for i in sess.get_inputs():
        if i.name.startswith("past_key_values."):
            heads, size = i.shape[1], i.shape[3]
            if not isinstance(heads, int) or not isinstance(size, int):
                raise Ir2OnnxError(f"input '{i.name}' has no static heads and head size: {i.shape}")
            out[i.name] = np.zeros((batch, heads, 0, size), np.float32)
    return out


def greedy(sessions: list, encoder_feeds: dict, start: np.ndarray, steps: int):
    """(tokens [batch, steps], encoder_hidden_states) of greedy decoding (module docstring);
    ``sessions``: onnxruntime sessions of the encoder, then the merged decoder or the first-step
    and with-past decoders; ``start`` is [batch, tokens]."""
    encoder, decoders = sessions[0], sessions[1:]
    hidden = next(iter(run(encoder, encoder_feeds).values()))
    ids, cache, tokens = start.astype(np.int64), {}, []
    for k in range(steps):
        sess = decoders[min(k, len(decoders) - 1)]
        names = {i.name for i in sess.get_inputs()}
        feeds = {"input_ids": ids, "encoder_hidden_states": hidden, **(cache or _empty_cache(sess, ids.shape[0]))}
        if "use_cache_branch" in names:
            feeds["use_cache_branch"] = np.array([k > 0])
        got = run(sess, {n: v for n, v in feeds.items() if n in names})
        new = _past(got)
        cache.update(new if k == 0 else {n: v for n, v in new.items() if ".encoder." not in n})
        ids = np.argmax(got["logits"][:, -1], axis=-1)[:, None].astype(np.int64)
        tokens.append(ids[:, 0])
    return np.stack(tokens, axis=1), hidden


def _start(folder: Path, given: dict, batch: int) -> np.ndarray:
    if "decoder_input_ids" in given:
        ids = np.asarray(given["decoder_input_ids"])
        if ids.ndim != 2:
            raise Ir2OnnxError(f"decoder_input_ids must be [batch, tokens], the file holds shape {list(ids.shape)}")
        return ids
    config = folder / "config.json"
    try:
        start = json.loads(config.read_text()).get("decoder_start_token_id") if config.is_file() else None
    except ValueError:
        start = None
    if not isinstance(start, int):
        raise Ir2OnnxError(f"'{folder}' has no config.json with decoder_start_token_id: give the "
                           f"decoder's first tokens with --input decoder_input_ids=FILE.npy")
    return np.full((batch, 1), start, np.int64)


def run_folder(path, given: dict, shapes: dict, args) -> int:
    """``ir2onnx run FOLDER --steps N`` (module docstring): prints the tokens of each batch row;
    ``--save`` keeps them with ``encoder_hidden_states``."""
    if args.steps < 1:
        raise Ir2OnnxError(f"--steps must be at least 1, got {args.steps}")
    folder = Path(path)
    with tempfile.TemporaryDirectory(prefix="ir2onnx-") as tmp:
        onnx_dir = folder
        if onnx_files(folder) is None:
            onnx_dir = write_folder(folder, Path(tmp) / "onnx", verify=False)
        sessions = [session(onnx_dir / f, args.provider) for f in onnx_files(onnx_dir)]
        encoder = sessions[0]
        known = {i.name for i in encoder.get_inputs()}
        for name in given:
            if name not in known | {"decoder_input_ids"}:
                raise Ir2OnnxError(f"the encoder has no input '{name}' (inputs: {', '.join(sorted(known))}; "
                                   f"and decoder_input_ids)")
        feeds = make_inputs(encoder, {k: v for k, v in given.items() if k in known}, shapes, seed=args.seed)
        batch = next(iter(feeds.values())).shape[0]
        start = _start(folder, given, batch)
        tokens, hidden = greedy(sessions, feeds, start, args.steps)
    for row in range(tokens.shape[0]):
        print(f"tokens[{row}]: {' '.join(map(str, tokens[row]))}")
    if args.save:
        np.savez(args.save, tokens=tokens, start=start, encoder_hidden_states=hidden)
        print(f"saved the tokens and encoder_hidden_states to {args.save}", file=sys.stderr)
    return 0
