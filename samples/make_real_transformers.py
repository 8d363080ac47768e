"""Write the five `transformers` samples in samples/real/<name>/ (run by hand; needs torch,
transformers and openvino; CI reads the committed files only).

    python samples/make_real_transformers.py [name ...]

Each is a model of the `transformers` library built from its config with tiny dims and random
weights (seeded), converted as a new user would: ``openvino.convert_model(model,
example_input=...)`` and ``openvino.save_model`` with its defaults (f16-compressed weights,
dynamic batch and sequence dims); the random weights are rounded to f16 first, so that the
compression loses nothing and PyTorch's outputs are those of the very weights in the IR. The models: BERT, DistilBERT, GPT-2 (``use_cache=False``), a
2-layer Llama and a T5 encoder, each fed ``input_ids`` and an ``attention_mask`` with padding in
the second row (the mask goes through the models' BitwiseAnd, Gather and Select chains).

Each folder holds model.xml, model.bin, input_ids.npy, attention_mask.npy and torch_<output>.npy,
PyTorch's own outputs on those inputs (tests/test_real_transformers.py compares onnxruntime with
them and with OpenVINO).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import openvino as ov
import torch
import transformers as tf

ROOT = Path(__file__).resolve().parent / "real"
VOCAB, HIDDEN, HEADS, LAYERS, FFN, POSITIONS = 64, 16, 2, 2, 32, 32
BATCH, SEQ = 2, 7


def _configs():
    common = dict(vocab_size=VOCAB)
    return {
        "bert": (tf.BertConfig, tf.BertModel, dict(
            common, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            intermediate_size=FFN, max_position_embeddings=POSITIONS)),
        "distilbert": (tf.DistilBertConfig, tf.DistilBertModel, dict(
            common, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FFN, max_position_embeddings=POSITIONS)),
        "gpt2": (tf.GPT2Config, tf.GPT2Model, dict(
            common, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=POSITIONS, use_cache=False)),
        "llama": (tf.LlamaConfig, tf.LlamaModel, dict(
            common, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=HEADS, num_key_value_heads=1,
            intermediate_size=FFN, max_position_embeddings=POSITIONS, use_cache=False)),
        "t5_encoder": (tf.T5Config, tf.T5EncoderModel, dict(
            common, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=FFN, num_layers=LAYERS, num_heads=HEADS,
            relative_attention_num_buckets=8, relative_attention_max_distance=16, use_cache=False)),
    }


def inputs() -> dict[str, np.ndarray]:
    """Token ids and a padding mask (the second row's last three tokens are padding)."""
    rng = np.random.default_rng(0)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype(np.int64)
    mask = np.ones((BATCH, SEQ), np.int64)
    mask[1, -3:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def make(name: str, folder: Path) -> None:
    config_cls, model_cls, kwargs = _configs()[name]
    torch.manual_seed(0)
    model = model_cls(config_cls(**kwargs)).eval()
    with torch.no_grad():  # weights that f16 holds exactly: save_model's compression loses nothing
        for p in model.parameters():
            p.copy_(p.half().float())
    feeds = inputs()
    example = {k: torch.from_numpy(v) for k, v in feeds.items()}
    with torch.no_grad():
        ref = model(**example)
    ov_model = ov.convert_model(model, example_input=example)
    keys = list(ref.keys())  # the outputs, in the order OpenVINO keeps them: named like torch's
    assert len(keys) == len(ov_model.outputs), (keys, ov_model.outputs)
    for key, out in zip(keys, ov_model.outputs):
        out.get_tensor().set_names({key})
    folder.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov_model, str(folder / "model.xml"))
    for k, v in feeds.items():
        np.save(folder / f"{k}.npy", v)
    compiled = ov.Core().compile_model(str(folder / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled(feeds)
    for out in compiled.outputs:
        key = out.get_any_name()
        want = ref[key].numpy()
        assert want.shape == np.asarray(got[out]).shape, (key, want.shape)
        np.save(folder / f"torch_{key}.npy", want)
        err = np.abs(np.asarray(got[out]) - want).max()
        print(f"{name}/{key}: {list(want.shape)}, max |torch - openvino| = {err:.2e}")
    size = sum(p.stat().st_size for p in folder.iterdir())
    types = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id}" for op in ov_model.get_ordered_ops()})
    print(f"{folder}: {size} bytes; {', '.join(types)}")


def main(names: list[str]) -> None:
    for name in names or list(_configs()):
        make(name, ROOT / name)


if __name__ == "__main__":
    main(sys.argv[1:])
