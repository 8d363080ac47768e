"""Regenerate samples/llm/: tiny LLM IRs exported by optimum-intel, as people download them
(run by hand; needs torch, transformers and optimum-intel[openvino], which are not test
dependencies).

    python samples/make_llm.py [NAME ...]
    python samples/make_llm.py --bench OUT [fp32 int8 int4]   # the ~110M model of bench_llm.py
    python samples/make_llm.py --tied OUT    # a Llama-3.2-style tied int4 IR (docs/weight-storage.md)

The samples were generated with optimum-intel 2.2, transformers 4.57.6 (its Gemma 2 export
refuses transformers 5), torch 2.14 and OpenVINO 2026.4.

Each model is built from a transformers config with random weights (seed 0; the hub is not
needed) and a tiny offline WordLevel tokenizer, saved with ``save_pretrained``, then exported
with ``optimum-cli export openvino --task text-generation-with-past`` (stateful by default:
``beam_idx`` input, KV cache in ReadValue/Assign; ``--disable-stateful`` for the explicit form).
Every folder keeps what optimum writes beside the IR (config.json, generation_config.json, the
tokenizer files; the OpenVINO tokenizer models are dropped to keep the samples small) plus
``greedy.json``: OpenVINO's 16 greedy tokens for a fixed prompt with the exact settings
(INFERENCE_PRECISION_HINT f32, KV_CACHE_PRECISION f32, DYNAMIC_QUANTIZATION_GROUP_SIZE 0), driven
by the plain loop below (input_ids, attention_mask of ones, position_ids counted, beam_idx
arange(batch)), so tests need no OpenVINO generation.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "llm"
PROMPT = [1, 17, 42, 5, 230, 9, 77, 300]
NEW_TOKENS = 16
EXACT = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
         "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
VOCAB = 1000
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=256,
            bos_token_id=1, eos_token_id=2, pad_token_id=0, initializer_range=0.2)


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    return LlamaForCausalLM(LlamaConfig(**TINY, tie_word_embeddings=True))


def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    return Qwen2ForCausalLM(Qwen2Config(**TINY, tie_word_embeddings=True))


def _gemma2():
    """Gemma 2 scales its embeddings by sqrt(hidden): with random weights the residual stream
    is the prompt's last embedding and greedy decoding repeats that token. Its post-norms
    (initially 1 + 0) are set to 10 so that attention and MLP matter."""
    import torch
    from transformers import Gemma2Config, Gemma2ForCausalLM
    model = Gemma2ForCausalLM(Gemma2Config(**TINY, head_dim=16, sliding_window=128,
                                           tie_word_embeddings=True))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.post_attention_layernorm.weight.fill_(10.0)
            layer.post_feedforward_layernorm.weight.fill_(10.0)
    return model


def _mistral():
    """Mistral with a sliding window of 16 tokens, so that the 8-token prompt and 16 new tokens
    of greedy.json cross it."""
    from transformers import MistralConfig, MistralForCausalLM
    return MistralForCausalLM(MistralConfig(**TINY, sliding_window=16, tie_word_embeddings=False))


def _phi3():
    """Phi-3 (fused qkv_proj and gate_up_proj), no sliding window."""
    from transformers import Phi3Config, Phi3ForCausalLM
    return Phi3ForCausalLM(Phi3Config(**TINY, sliding_window=None, tie_word_embeddings=False))


def _mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM
    return MixtralForCausalLM(MixtralConfig(**TINY, num_local_experts=4, num_experts_per_tok=2,
                                            tie_word_embeddings=False))


# name -> (model factory, optimum-cli options)
MODELS = {
    "llama_fp32": (_llama, ["--weight-format", "fp32"]),
    "llama_int4": (_llama, ["--weight-format", "int4", "--group-size", "32", "--ratio", "1.0"]),
    "llama_stateless": (_llama, ["--weight-format", "fp32", "--disable-stateful"]),
    "qwen2_fp32": (_qwen2, ["--weight-format", "fp32"]),
    "qwen2_int4": (_qwen2, ["--weight-format", "int4", "--group-size", "32", "--ratio", "1.0"]),
    "gemma2_fp32": (_gemma2, ["--weight-format", "fp32"]),
    "gemma2_int4": (_gemma2, ["--weight-format", "int4", "--group-size", "32", "--ratio", "1.0"]),
    "mixtral_int8": (_mixtral, ["--weight-format", "int8"]),
    "mistral_fp32": (_mistral, ["--weight-format", "fp32"]),
    "phi3_int4": (_phi3, ["--weight-format", "int4", "--group-size", "32", "--ratio", "1.0"]),
}
KEEP = ("openvino_model.xml", "openvino_model.bin", "config.json", "generation_config.json",
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def tokenizer():
    """A WordLevel tokenizer over VOCAB made-up words, built offline."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
    vocab.update({f"w{i}": i for i in range(4, VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>")


def greedy(xml: Path, prompt: list[int], new_tokens: int) -> list[int]:
    """OpenVINO's greedy tokens at the exact settings (stateful or explicit KV cache)."""
    import openvino as ov

    compiled = ov.Core().compile_model(str(xml), "CPU", EXACT)
    request = compiled.create_infer_request()
    names = {p.get_any_name() for p in compiled.inputs}
    past_inputs = sorted(n for n in names if n.startswith("past_key_values"))
    past = {}
    for port in compiled.inputs:
        n = port.get_any_name()
        if n in past_inputs:
            shape = [1 if i == 0 else (0 if i == 2 else d.get_length())
                     for i, d in enumerate(port.get_partial_shape())]
            past[n] = np.zeros(shape, np.float32)
    request.reset_state()
    ids, tokens, total = list(prompt), [], 0
    for _ in range(new_tokens):
        n = len(ids)
        feeds = {"input_ids": np.array([ids], np.int64),
                 "attention_mask": np.ones((1, total + n), np.int64)}
        if "position_ids" in names:
            feeds["position_ids"] = np.arange(total, total + n, dtype=np.int64)[None]
        if "beam_idx" in names:
            feeds["beam_idx"] = np.arange(1, dtype=np.int32)
        feeds.update(past)
        res = request.infer(feeds)
        logits = next(v for k, v in res.items() if "logits" in k.get_names())
        for k, v in res.items():
            name = k.get_any_name()
            if name.startswith("present."):
                past[name.replace("present.", "past_key_values.")] = np.array(v)
        token = int(np.argmax(logits[0, -1]))
        tokens.append(token)
        total += n
        ids = [token]
    return tokens


def make(name: str) -> None:
    import torch

    factory, options = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    out = OUT / name
    with tempfile.TemporaryDirectory() as tmp:
        hf, ov_dir = Path(tmp) / "hf", Path(tmp) / "ov"
        model.save_pretrained(hf)
        tokenizer().save_pretrained(hf)
        subprocess.run([str(Path(sys.executable).with_name("optimum-cli")), "export", "openvino", "--model", str(hf), "--task",
                        "text-generation-with-past", *options, str(ov_dir)], check=True)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for f in KEEP:
            if (ov_dir / f).is_file():
                shutil.copy(ov_dir / f, out / f)
    tokens = greedy(out / "openvino_model.xml", PROMPT, NEW_TOKENS)
    (out / "greedy.json").write_text(json.dumps(
        {"prompt": PROMPT, "tokens": tokens, "openvino_config": EXACT}, indent=1) + "\n")
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"{name}: {size / 1e6:.2f} MB, greedy {tokens}")


def bench(out: Path, formats: list[str]) -> None:
    """A Llama-style model of ~110M parameters (hidden 768, 12 layers, vocab 32000, random
    weights) for benchmarks/bench_llm.py: OUT/hf (transformers), OUT/fp32, OUT/int8, OUT/int4
    (optimum-intel IRs). optimum's own ONNX export needs optimum-onnx, whose transformers pin
    conflicts with optimum-intel's; in a venv of its own run
    ``optimum-cli export onnx --model OUT/hf --task text-generation-with-past OUT/optimum_onnx``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                         num_key_value_heads=4, intermediate_size=2048, vocab_size=32000,
                         max_position_embeddings=2048, tie_word_embeddings=False,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    hf = out / "hf"
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # trained norms are not all ones (OpenVINO drops a product by ones)
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
    model.save_pretrained(hf)
    tokenizer().save_pretrained(hf)
    cli = str(Path(sys.executable).with_name("optimum-cli"))
    options = {"fp32": [], "int8": [], "int4": ["--group-size", "128", "--ratio", "1.0"]}
    for fmt in formats:
        extra = options[fmt]
        subprocess.run([cli, "export", "openvino", "--model", str(hf), "--task",
                        "text-generation-with-past", "--weight-format", fmt, *extra, str(out / fmt)],
                       check=True)


def tied(out: Path) -> None:
    """A Llama-3.2-style model with tied embeddings (hidden 512, 8 layers, vocabulary 32000, random
    weights) exported int4 by optimum-intel: NNCF keeps the table shared by the embedding Gather
    and the lm_head in int8 (its backup precision), the other MatMuls int4 (OUT/int4)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                         num_key_value_heads=2, intermediate_size=1536, vocab_size=32000,
                         max_position_embeddings=2048, tie_word_embeddings=True,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    hf = out / "hf"
    LlamaForCausalLM(config).eval().save_pretrained(hf)
    tokenizer().save_pretrained(hf)
    subprocess.run([str(Path(sys.executable).with_name("optimum-cli")), "export", "openvino", "--model", str(hf),
                    "--task", "text-generation-with-past", "--weight-format", "int4", "--group-size", "64",
                    "--ratio", "1.0", str(out / "int4")], check=True)


def main(names: list[str]) -> None:
    if names[:1] == ["--tied"]:
        return tied(Path(names[1]))
    if names[:1] == ["--bench"]:
        return bench(Path(names[1]), names[2:] or ["fp32", "int8", "int4"])
    for name in names or MODELS:
        make(name)


if __name__ == "__main__":
    main(sys.argv[1:])
