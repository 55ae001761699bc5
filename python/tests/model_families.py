"""Tiny configurations of third-party model families.

Each factory returns ``(model, train_fn, inputs)`` like an export recipe
(``python -m joint_mlir.export --model python:model_families:NAME``), with
seeded weights and inputs. transformers is a project requirement; torchtitan
is not (see bench/README.md), so its factories raise ImportError without it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

Recipe = tuple[nn.Module, Any, dict[str, torch.Tensor]]

_VOCAB, _BATCH, _SEQ = 64, 2, 8


def _lm_loss(model: nn.Module, input_ids: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
    return model(input_ids=input_ids, labels=labels, use_cache=False).loss


def _ids() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _VOCAB, (_BATCH, _SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}


def olmo() -> Recipe:
    """OLMo: LayerNorm without affine weights on every block."""
    from transformers import OlmoConfig, OlmoForCausalLM

    return _decoder(OlmoConfig, OlmoForCausalLM)


def vit() -> Recipe:
    """ViT: a patch-embedding conv applied to the pixels."""
    from transformers import ViTConfig, ViTForImageClassification

    torch.manual_seed(0)
    cfg = ViTConfig(image_size=16, patch_size=4, num_channels=3,
                    hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                    num_attention_heads=4, num_labels=5)
    g = torch.Generator().manual_seed(1)

    def loss(model: nn.Module, pixel_values: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
        return model(pixel_values=pixel_values, labels=labels).loss

    return (ViTForImageClassification(cfg), loss,
            {"pixel_values": torch.randn(_BATCH, 3, 16, 16, generator=g),
             "labels": torch.randint(0, 5, (_BATCH,), generator=g)})


class _BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 conv-BN, a 1x1 conv-BN shortcut when
    the shape changes, ReLU after the residual add."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False),
                nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class _TinyResNet(nn.Module):
    """Stem conv-BN-ReLU, 3x3 max pool, two basic blocks (the second
    downsampling), adaptive average pooling to 2x2, a linear head."""

    def __init__(self, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        # Blocks layers.0 and layers.1, as torchvision's layerN.M.
        self.layers = nn.Sequential(_BasicBlock(8, 8, 1),
                                    _BasicBlock(8, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.fc = nn.Linear(16 * 4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.layers(self.stem(x))
        return self.fc(self.pool(y).flatten(1))


def resnet() -> Recipe:
    """A small ResNet-style conv net (conv, BatchNorm in training, ReLU,
    max pooling, residual adds, adaptive average pooling, linear head) on
    16x16 images, cross-entropy over 5 classes."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)

    def loss(model: nn.Module, images: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(model(images), labels)

    return (_TinyResNet(5), loss,
            {"images": torch.randn(_BATCH, 3, 16, 16, generator=g),
             "labels": torch.randint(0, 5, (_BATCH,), generator=g)})


def bert() -> Recipe:
    """BERT (masked LM, dropout off): token types gathered from a buffer."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=_VOCAB, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=64, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)

    def loss(model: nn.Module, input_ids: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, labels=labels).loss

    return BertForMaskedLM(cfg), loss, _ids()


def t5() -> Recipe:
    """T5 (dropout off): the decoder inputs shifted right by writes into
    views of a fresh tensor (copy_ into a slice, fill_ of a column,
    masked_fill_), relative position buckets, _safe_softmax attention."""
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    cfg = T5Config(vocab_size=_VOCAB, d_model=32, d_kv=8, d_ff=64,
                   num_layers=2, num_decoder_layers=2, num_heads=4,
                   dropout_rate=0.0, decoder_start_token_id=0,
                   pad_token_id=0)

    def loss(model: nn.Module, input_ids: torch.Tensor,
             labels: torch.Tensor) -> torch.Tensor:
        return model(input_ids=input_ids, labels=labels,
                     use_cache=False).loss

    return T5ForConditionalGeneration(cfg), loss, _ids()


def phi3() -> Recipe:
    """Phi3: a fused qkv projection split by slices, one of them empty."""
    from transformers import Phi3Config, Phi3ForCausalLM

    torch.manual_seed(0)
    cfg = Phi3Config(vocab_size=_VOCAB, hidden_size=32, intermediate_size=64,
                     num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=64,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2,
                     use_cache=False)
    return Phi3ForCausalLM(cfg), _lm_loss, _ids()


def _decoder(config_cls: Any, model_cls: Any, **extra: Any) -> Recipe:
    """A Llama-style causal LM: hidden 32, 2 layers, 4 heads, 2 kv heads."""
    torch.manual_seed(0)
    cfg = config_cls(vocab_size=_VOCAB, hidden_size=32, intermediate_size=64,
                     num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=64,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2,
                     use_cache=False, **extra)
    return model_cls(cfg), _lm_loss, _ids()


def llama() -> Recipe:
    """Llama: RMSNorm, rotary embeddings, grouped-query attention, SwiGLU."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return _decoder(LlamaConfig, LlamaForCausalLM)


def gemma() -> Recipe:
    """Gemma: RMSNorm scaled by (1 + weight), embeddings scaled by
    sqrt(hidden), GELU-tanh gating, tied embeddings; head_dim set to 8
    (its default is 256)."""
    from transformers import GemmaConfig, GemmaForCausalLM

    return _decoder(GemmaConfig, GemmaForCausalLM, head_dim=8)


def qwen2() -> Recipe:
    """Qwen2: Llama with biases on the q, k and v projections."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return _decoder(Qwen2Config, Qwen2ForCausalLM)


def qwen3() -> Recipe:
    """Qwen3: RMSNorm on the queries and keys per head (q_norm, k_norm);
    head_dim set to 8 (its default is 128)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return _decoder(Qwen3Config, Qwen3ForCausalLM, head_dim=8)


def mistral() -> Recipe:
    """Mistral: Llama with a sliding attention window (4096, wider than the
    sequence, so the mask is causal)."""
    from transformers import MistralConfig, MistralForCausalLM

    return _decoder(MistralConfig, MistralForCausalLM)


def gpt_neox() -> Recipe:
    """GPT-NeoX: a fused qkv projection, partial rotary embeddings (a
    quarter of each head), parallel attention and MLP residuals, LayerNorm
    with bias, GELU. No grouped-query attention (4 kv heads)."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(0)
    cfg = GPTNeoXConfig(vocab_size=_VOCAB, hidden_size=32,
                        intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, max_position_embeddings=64,
                        attention_dropout=0.0, hidden_dropout=0.0,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2,
                        use_cache=False)
    return GPTNeoXForCausalLM(cfg), _lm_loss, _ids()


def gpt2() -> Recipe:
    """GPT-2: learned positions, Conv1D projections (addmm), LayerNorm,
    GELU-tanh, tied embeddings. No grouped-query attention (4 kv heads)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=_VOCAB, n_positions=64, n_embd=32, n_layer=2,
                     n_head=4, n_inner=64, resid_pdrop=0.0, embd_pdrop=0.0,
                     attn_pdrop=0.0, pad_token_id=0, bos_token_id=1,
                     eos_token_id=2, use_cache=False)
    return GPT2LMHeadModel(cfg), _lm_loss, _ids()


def _mixtral(experts: str) -> Recipe:
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    cfg = MixtralConfig(vocab_size=_VOCAB, hidden_size=32,
                        intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2,
                        num_local_experts=4, num_experts_per_tok=2,
                        max_position_embeddings=64, use_cache=False)
    model = MixtralForCausalLM(cfg)
    model.set_experts_implementation(experts)
    return model, _lm_loss, _ids()


def mixtral_eager() -> Recipe:
    """Mixtral with the eager experts: a loop over ``nonzero`` hits."""
    return _mixtral("eager")


def mixtral_batched_mm() -> Recipe:
    """Mixtral with the static-shape ``batched_mm`` experts."""
    return _mixtral("batched_mm")


def mixtral_grouped_mm() -> Recipe:
    """Mixtral with the static-shape ``grouped_mm`` experts."""
    return _mixtral("grouped_mm")


def _torchtitan_loss(model: nn.Module, tokens: torch.Tensor,
                     labels: torch.Tensor) -> torch.Tensor:
    logits = model(tokens)
    return nn.functional.cross_entropy(logits.flatten(0, 1).float(),
                                       labels.flatten())


def _torchtitan_recipe(config: Any) -> Recipe:
    """Build a torchtitan Decoder config with SDPA attention (as torchtitan's
    graph_trainer tests do: no flex BlockMask) and seeded weights."""
    from torchtitan.models.common.attention import ScaledDotProductAttention

    for layer in config.layers:
        layer.attention.inner_attention = ScaledDotProductAttention.Config()
    torch.manual_seed(0)
    model = config.build()
    model.init_states(buffer_device=torch.device("cpu"))
    ids = _ids()
    return model, _torchtitan_loss, {"tokens": ids["input_ids"],
                                     "labels": ids["labels"]}


def deepseek_v3() -> Recipe:
    """torchtitan DeepSeek-V3 (MLA attention, routed and shared experts)."""
    import torchtitan.models.deepseek_v3 as ds
    from torchtitan.models.common import Embedding, Linear, RMSNorm
    from torchtitan.models.common.rope import ComplexRoPE

    dim, rope_dim = 32, 8
    layers = ds._build_dsv3_layers(
        n_layers=2, n_dense_layers=1, dim=dim, n_heads=2, q_lora_rank=0,
        kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=rope_dim,
        v_head_dim=8, mscale=0.70, dense_hidden_dim=64, moe_hidden_dim=16,
        num_experts=4, num_shared_experts=1, router_top_k=2,
        router_score_func="softmax", attn_backend="flex",
        moe_comm_backend="standard", non_blocking_capacity_factor=None,
        rope=ComplexRoPE.Config(dim=rope_dim, max_seq_len=64, theta=10000.0,
                                scaling="none"))
    config = ds.DeepSeekV3Model.Config(
        vocab_size=_VOCAB, dim=dim,
        tok_embeddings=Embedding.Config(num_embeddings=_VOCAB,
                                        embedding_dim=dim),
        norm=RMSNorm.Config(normalized_shape=dim),
        lm_head=Linear.Config(in_features=dim, out_features=_VOCAB),
        layers=layers)
    return _torchtitan_recipe(config)


def qwen3_moe() -> Recipe:
    """torchtitan Qwen3-MoE (fused QKV, routed experts)."""
    import torchtitan.models.qwen3 as qw
    from torchtitan.models.common import Embedding, Linear
    from torchtitan.models.common.rope import CosSinRoPE

    dim, head_dim = 32, 8
    config = qw.Qwen3Model.Config(
        vocab_size=_VOCAB, dim=dim, norm=qw._qwen3_norm(dim),
        tok_embeddings=Embedding.Config(num_embeddings=_VOCAB,
                                        embedding_dim=dim),
        lm_head=Linear.Config(in_features=dim, out_features=_VOCAB),
        layers=qw._build_qwen3_moe_layers(
            fuse_qkv=True, n_layers=2, dim=dim, n_heads=4, n_kv_heads=2,
            head_dim=head_dim, moe_hidden_dim=16, num_experts=4, top_k=2,
            attn_backend="flex",
            rope=CosSinRoPE.Config(dim=head_dim, max_seq_len=64,
                                   theta=1000000.0),
            moe_comm_backend="standard"))
    return _torchtitan_recipe(config)
