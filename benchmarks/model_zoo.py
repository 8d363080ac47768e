"""The models of bench_models.py: torchvision and `transformers` architectures with random weights
(seed 0, norms and biases moved off their initial values, rounded to f16 so that save_model's f16 compression loses nothing and every runtime
computes with the very same weights), each with its example inputs and the dims that are dynamic.

Transformers are small configs (4 layers, hidden 256, 4 heads), fed through a wrapper that returns
the last hidden state only, so that OpenVINO and both torch exporters convert the same function.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

VISION = ["resnet50", "mobilenet_v3_large", "efficientnet_b0", "densenet121", "convnext_tiny",
          "swin_t", "vit_b_16", "r3d_18"]
TRANSFORMERS = ["bert", "gpt2", "llama", "whisper_encoder", "wav2vec2"]
ALL = VISION + TRANSFORMERS
HIDDEN, LAYERS, HEADS, FFN, VOCAB = 256, 4, 4, 1024, 1000


@dataclass
class Spec:
    """A model to benchmark: the module, example inputs by name, the dims export may leave
    dynamic (name -> {axis: dim name}), and for transformers the onnxruntime.transformers
    optimizer's model type, heads and hidden size."""

    module: torch.nn.Module
    inputs: dict[str, torch.Tensor]
    dynamic: dict[str, dict[int, str]]
    tf_type: str | None = None
    heads: int = 0
    hidden: int = 0
    notes: list[str] = field(default_factory=list)


class LastHidden(torch.nn.Module):
    """``model(**inputs).last_hidden_state`` as a plain function of positional tensors."""

    def __init__(self, model: torch.nn.Module, names: list[str]):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args))).last_hidden_state


def _round_f16(module: torch.nn.Module) -> torch.nn.Module:
    """Every parameter and float buffer moved by a little noise (a freshly built model's norms
    have scale 1 and shift 0 and its biases are 0, which OpenVINO drops as no-ops and a trained
    model never has), then rounded to f16."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.02 * torch.randn(p.shape, generator=gen))
            p.copy_(p.half().float())
        for name, b in module.named_buffers():
            if b.dtype == torch.float32:
                if "running_var" in name:  # BatchNorm's variance stays positive
                    b.mul_(1 + 0.1 * torch.rand(b.shape, generator=gen))
                else:
                    b.add_(0.02 * torch.randn(b.shape, generator=gen))
                b.copy_(b.half().float())
    return module.eval()


def _vision(name: str) -> Spec:
    import torchvision

    torch.manual_seed(0)
    if name == "r3d_18":
        model = torchvision.models.video.r3d_18(weights=None)
        x = torch.randn(1, 3, 16, 112, 112)
        dyn = {"x": {0: "batch", 2: "time", 3: "height", 4: "width"}}
    else:
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(1, 3, 224, 224)
        # ViT asserts its image size; the others take any size
        dyn = {"x": {0: "batch"} if name == "vit_b_16" else {0: "batch", 2: "height", 3: "width"}}
    return Spec(_round_f16(model), {"x": x}, dyn)


def _text(name: str) -> Spec:
    import transformers as tf

    torch.manual_seed(0)
    seq = 128
    common = dict(vocab_size=VOCAB, use_cache=False)
    if name == "bert":
        cfg = tf.BertConfig(**common, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                            intermediate_size=FFN, max_position_embeddings=512)
        model, tf_type = tf.BertModel(cfg), "bert"
    elif name == "gpt2":
        cfg = tf.GPT2Config(**common, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=512)
        model, tf_type = tf.GPT2Model(cfg), "gpt2"
    else:
        cfg = tf.LlamaConfig(**common, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                             num_key_value_heads=2, intermediate_size=FFN // 3 * 2, max_position_embeddings=512)
        model, tf_type = tf.LlamaModel(cfg), "gpt2"
    names = ["input_ids", "attention_mask"]
    ids = torch.randint(1, VOCAB, (1, seq), generator=torch.Generator().manual_seed(0))
    inputs = {"input_ids": ids, "attention_mask": torch.ones(1, seq, dtype=torch.int64)}
    dyn = {n: {0: "batch", 1: "sequence"} for n in names}
    return Spec(_round_f16(LastHidden(model, names)), inputs, dyn, tf_type, HEADS, HIDDEN)


def _audio(name: str) -> Spec:
    import transformers as tf

    torch.manual_seed(0)
    if name == "whisper_encoder":
        cfg = tf.WhisperConfig(d_model=HIDDEN, encoder_layers=LAYERS, encoder_attention_heads=HEADS,
                               encoder_ffn_dim=FFN, decoder_layers=1, decoder_attention_heads=HEADS,
                               num_mel_bins=80, max_source_positions=250)
        model = tf.WhisperModel(cfg).get_encoder()
        names, x = ["input_features"], torch.randn(1, 80, 500)
        dyn = {"input_features": {0: "batch"}}  # Whisper checks the frame count against its positions
    else:
        cfg = tf.Wav2Vec2Config(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                intermediate_size=FFN)
        model = tf.Wav2Vec2Model(cfg)
        names, x = ["input_values"], torch.randn(1, 16000)
        dyn = {"input_values": {0: "batch", 1: "samples"}}
    return Spec(_round_f16(LastHidden(model, names)), {names[0]: x}, dyn, "bert", HEADS, HIDDEN)


def build(name: str) -> Spec:
    if name in VISION:
        return _vision(name)
    if name in ("bert", "gpt2", "llama"):
        return _text(name)
    if name in ("whisper_encoder", "wav2vec2"):
        return _audio(name)
    raise SystemExit(f"unknown model '{name}' (models: {', '.join(ALL)})")
