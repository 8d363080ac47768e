"""Regenerate samples/embedding/: a tiny random-weight BERT/BGE-style text-embedding model
exported by optimum-intel for feature extraction (run by hand; needs torch, transformers and
optimum-intel[openvino], which are not test dependencies).

    python samples/make_embedding.py

Generated with optimum-intel 2.2, transformers 5.5.4, torch 2.13 and OpenVINO 2026.4.

A ``BertModel`` without pooler (BGE and E5 pool the first token or the mean of
``last_hidden_state`` outside the model) of tiny sizes (hidden 32, 2 layers, 4 heads,
vocabulary 100; seed 0; the hub is not needed), beside a tiny offline WordPiece tokenizer,
exported with ``optimum-cli export openvino --task feature-extraction``: one
``openvino_model.xml``, inputs input_ids, attention_mask, token_type_ids, output
last_hidden_state. The OpenVINO tokenizer models optimum writes are dropped to keep it small.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "embedding"
VOCAB = 100
KEEP = ("openvino_model.xml", "openvino_model.bin", "config.json", "tokenizer.json",
        "tokenizer_config.json", "special_tokens_map.json")


def tokenizer():
    """A WordPiece tokenizer over VOCAB made-up words with BERT's special tokens, built offline."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
    vocab.update({f"w{i}": i for i in range(5, VOCAB)})
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def main() -> None:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=4, intermediate_size=64,
                                 max_position_embeddings=64, pad_token_id=0),
                      add_pooling_layer=False).eval()
    with tempfile.TemporaryDirectory() as tmp:
        hf, ov_dir = Path(tmp) / "hf", Path(tmp) / "ov"
        model.save_pretrained(hf)
        tokenizer().save_pretrained(hf)
        subprocess.run([str(Path(sys.executable).with_name("optimum-cli")), "export", "openvino",
                        "--model", str(hf), "--task", "feature-extraction", "--weight-format", "fp32",
                        str(ov_dir)], check=True)
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        for f in KEEP:
            if (ov_dir / f).is_file():
                shutil.copy(ov_dir / f, OUT / f)
    size = sum(f.stat().st_size for f in OUT.iterdir())
    print(f"embedding: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
