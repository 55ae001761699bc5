"""Model recipes for the exporter CLI: a model, a train function and inputs.

Every recipe builds its model from a config on the ``meta`` device, so no
weights are downloaded or allocated; the tracer turns meta state into fake
tensors. Transformer recipes use Hugging Face ``transformers`` configs with
``attn_implementation="sdpa"`` by default (one fused attention op per layer,
as in real training); ``eager`` spells attention out as matmul/softmax.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import nn

from .errors import JointMlirError

__all__ = ["PRESETS", "MODELS", "Recipe", "RecipeError", "build_recipe",
           "ModelShape"]


class RecipeError(JointMlirError, ValueError):
    """Bad recipe options (unknown model or preset, impossible shape)."""


@dataclass(frozen=True)
class ModelShape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    head_dim: int | None = None
    tie_embeddings: bool = False
    rope_theta: float = 10000.0
    max_positions: int = 2048


@dataclass
class Recipe:
    name: str
    model: nn.Module
    train_fn: Callable[..., Any]
    inputs: dict[str, Any]
    dynamic_dims: dict[str, int] | None = None
    notes: dict[str, Any] = field(default_factory=dict)


# Real model shapes (from the published configs); presets pick the family too.
PRESETS: dict[str, tuple[str, ModelShape]] = {
    "llama3-8b": ("llama", ModelShape(32, 4096, 32, 8, 14336, 128256,
                                      rope_theta=500000.0, max_positions=8192)),
    "llama3-70b": ("llama", ModelShape(80, 8192, 64, 8, 28672, 128256,
                                       rope_theta=500000.0,
                                       max_positions=8192)),
    "llama3.2-1b": ("llama", ModelShape(16, 2048, 32, 8, 8192, 128256,
                                        head_dim=64, tie_embeddings=True,
                                        rope_theta=500000.0,
                                        max_positions=8192)),
    "llama2-7b": ("llama", ModelShape(32, 4096, 32, 32, 11008, 32000,
                                      max_positions=4096)),
    "qwen3-0.6b": ("qwen3", ModelShape(28, 1024, 16, 8, 3072, 151936,
                                       head_dim=128, tie_embeddings=True,
                                       rope_theta=1000000.0,
                                       max_positions=40960)),
    "qwen3-8b": ("qwen3", ModelShape(36, 4096, 32, 8, 12288, 151936,
                                     head_dim=128, rope_theta=1000000.0,
                                     max_positions=40960)),
    "qwen3-32b": ("qwen3", ModelShape(64, 5120, 64, 8, 25600, 151936,
                                      head_dim=128, rope_theta=1000000.0,
                                      max_positions=40960)),
    "qwen2.5-7b": ("qwen2", ModelShape(28, 3584, 28, 4, 18944, 152064,
                                       rope_theta=1000000.0,
                                       max_positions=32768)),
    "mistral-7b": ("mistral", ModelShape(32, 4096, 32, 8, 14336, 32768,
                                         rope_theta=1000000.0,
                                         max_positions=32768)),
    "gpt2": ("gpt2", ModelShape(12, 768, 12, 12, 3072, 50257,
                                tie_embeddings=True, max_positions=1024)),
    "gpt2-xl": ("gpt2", ModelShape(48, 1600, 25, 25, 6400, 50257,
                                   tie_embeddings=True, max_positions=1024)),
}

# Small defaults per family (what the examples use).
_TINY = ModelShape(2, 64, 4, 2, 128, 256)
MODELS = ("llama", "qwen2", "qwen3", "mistral", "gpt2", "mlp")

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def _hf_config(family: str, s: ModelShape, seq: int, attn: str) -> Any:
    try:
        import transformers as tf
    except ImportError as e:  # pragma: no cover - listed in requirements
        raise RecipeError("the transformers package is required for "
                          f"--model {family}") from e
    tf.utils.logging.set_verbosity_error()
    max_pos = max(s.max_positions, seq)
    common = dict(vocab_size=s.vocab, hidden_size=s.hidden,
                  intermediate_size=s.intermediate,
                  num_hidden_layers=s.layers, num_attention_heads=s.heads,
                  num_key_value_heads=s.kv_heads,
                  max_position_embeddings=max_pos,
                  tie_word_embeddings=s.tie_embeddings, use_cache=False)
    if s.head_dim is not None:
        common["head_dim"] = s.head_dim
    if family == "llama":
        cfg = tf.LlamaConfig(rope_theta=s.rope_theta, **common)
    elif family == "qwen2":
        cfg = tf.Qwen2Config(rope_theta=s.rope_theta, **common)
    elif family == "qwen3":
        cfg = tf.Qwen3Config(rope_theta=s.rope_theta, **common)
    elif family == "mistral":
        cfg = tf.MistralConfig(rope_theta=s.rope_theta, **common)
    elif family == "gpt2":
        cfg = tf.GPT2Config(vocab_size=s.vocab, n_embd=s.hidden,
                            n_layer=s.layers, n_head=s.heads,
                            n_inner=s.intermediate, n_positions=max_pos,
                            tie_word_embeddings=s.tie_embeddings,
                            bos_token_id=min(50256, s.vocab - 1),
                            eos_token_id=min(50256, s.vocab - 1),
                            loss_type="ForCausalLM", use_cache=False)
    else:  # pragma: no cover - guarded by caller
        raise RecipeError(f"unknown model {family!r}")
    # Zero dropout: the joint graph should not depend on training-time RNG
    # unless a model asks for it.
    for k in ("attention_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop"):
        if hasattr(cfg, k):
            setattr(cfg, k, 0.0)
    cfg._attn_implementation = attn
    return cfg


def _causal_lm_train(model: nn.Module, input_ids: torch.Tensor,
                     labels: torch.Tensor) -> torch.Tensor:
    return model(input_ids=input_ids, labels=labels, use_cache=False).loss


class MLPBlock(nn.Module):
    def __init__(self, hidden: int, intermediate: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(hidden, intermediate)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(intermediate, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class MLP(nn.Module):
    """``layers`` MLP blocks and a classifier head over ``classes`` outputs."""

    def __init__(self, hidden: int, intermediate: int, layers: int,
                 classes: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            MLPBlock(hidden, intermediate) for _ in range(layers))
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.layers:
            x = block(x)
        return self.head(x)


def _mlp_train(model: nn.Module, x: torch.Tensor,
               labels: torch.Tensor) -> torch.Tensor:
    logits = model(x)
    return nn.functional.cross_entropy(logits.flatten(0, -2), labels.flatten())


def _load_factory(spec: str) -> Recipe:
    """``python:package.module:function`` -> Recipe from the user's factory.

    The factory takes no arguments and returns ``(model, train_fn, inputs)``.
    """
    target = spec.removeprefix("python:")
    mod_name, _, fn_name = target.partition(":")
    if not mod_name or not fn_name:
        raise RecipeError(f"--model {spec!r}: expected python:MODULE:FUNCTION")
    try:
        fn = getattr(importlib.import_module(mod_name), fn_name)
    except (ImportError, AttributeError) as e:
        raise RecipeError(f"--model {spec!r}: {e}") from e
    got = fn()
    if not (isinstance(got, tuple) and len(got) == 3):
        raise RecipeError(f"--model {spec!r}: factory must return "
                          "(model, train_fn, inputs)")
    model, train_fn, inputs = got
    return Recipe(name=fn_name, model=model, train_fn=train_fn, inputs=inputs)


def build_recipe(model: str, *, preset: str | None = None,
                 layers: int | None = None, hidden: int | None = None,
                 heads: int | None = None, kv_heads: int | None = None,
                 intermediate: int | None = None, vocab: int | None = None,
                 batch: int = 2, seq: int = 16, dtype: str = "fp32",
                 dynamic_seq: bool = False, attn: str = "sdpa") -> Recipe:
    """Build a recipe; unset shape options come from the preset or tiny defaults."""
    if model.startswith("python:"):
        return _load_factory(model)
    if preset is not None:
        if preset not in PRESETS:
            raise RecipeError(f"unknown preset {preset!r}; choose one of "
                              f"{', '.join(sorted(PRESETS))}")
        family, shape = PRESETS[preset]
        if model not in (family, "auto"):
            raise RecipeError(f"preset {preset!r} is a {family} model, not "
                              f"{model}")
        model = family
    else:
        if model == "auto":
            raise RecipeError("--model auto needs --preset")
        shape = _TINY
    if model not in MODELS:
        raise RecipeError(f"unknown model {model!r}; choose one of "
                          f"{', '.join(MODELS)} or python:MODULE:FUNCTION")
    if dtype not in _DTYPES:
        raise RecipeError(f"unknown dtype {dtype!r}; choose fp32 or bf16")
    if attn not in ("sdpa", "eager"):
        raise RecipeError(f"unknown attention {attn!r}; choose sdpa or eager")
    over = {k: v for k, v in dict(layers=layers, hidden=hidden, heads=heads,
                                  kv_heads=kv_heads, intermediate=intermediate,
                                  vocab=vocab).items() if v is not None}
    if heads is not None and kv_heads is None and "kv_heads" not in over:
        over["kv_heads"] = min(shape.kv_heads, heads)
    shape = replace(shape, **over)
    if model == "gpt2":
        # GPT-2 has no grouped-query attention and always ties its embeddings.
        shape = replace(shape, kv_heads=shape.heads,
                        tie_embeddings=preset is None or shape.tie_embeddings)
    for k in ("layers", "hidden", "heads", "kv_heads", "intermediate",
              "vocab"):
        if getattr(shape, k) <= 0:
            raise RecipeError(f"--{k.replace('_', '-')} must be positive")
    if batch <= 0 or seq <= 0:
        raise RecipeError("--batch and --seq must be positive")
    if dynamic_seq and seq < 2:
        raise RecipeError("--dynamic-seq needs --seq >= 2 (0/1 specialize)")
    # Options a model family has no use for are errors, not silently ignored.
    if model == "mlp" and (heads is not None or kv_heads is not None):
        raise RecipeError("--model mlp has no attention: drop --heads/--kv-heads")
    if model == "gpt2" and kv_heads is not None:
        raise RecipeError("--model gpt2 has no grouped-query attention: drop "
                          "--kv-heads")
    # hidden/heads first: it is the constraint a user most often breaks.
    if model != "mlp" and shape.head_dim is None and shape.hidden % shape.heads:
        raise RecipeError(f"--hidden {shape.hidden} is not a multiple of "
                          f"--heads {shape.heads}")
    if shape.heads % shape.kv_heads:
        src = "--kv-heads" if kv_heads is not None else "the default --kv-heads"
        raise RecipeError(f"--heads {shape.heads} is not a multiple of "
                          f"{src} {shape.kv_heads}")
    dt = _DTYPES[dtype]
    name = preset or model

    if model == "mlp":
        with torch.device("meta"):
            m = MLP(shape.hidden, shape.intermediate, shape.layers,
                    shape.vocab).to(dt)
            inputs = {"x": torch.empty(batch, seq, shape.hidden, dtype=dt),
                      "labels": torch.empty(batch, seq, dtype=torch.long)}
        dyn = {"x": 1, "labels": 1} if dynamic_seq else None
        return Recipe(name=name, model=m, train_fn=_mlp_train, inputs=inputs,
                      dynamic_dims=dyn, notes={"shape": shape})

    from transformers import AutoModelForCausalLM

    cfg = _hf_config(model, shape, seq, attn)
    prev = torch.get_default_dtype()
    try:
        torch.set_default_dtype(dt)
        with torch.device("meta"):
            m = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    finally:
        torch.set_default_dtype(prev)
    m = m.to(dt)
    m.train()
    with torch.device("meta"):
        ids = torch.empty(batch, seq, dtype=torch.long)
        labels = torch.empty(batch, seq, dtype=torch.long)
    dyn = {"input_ids": 1, "labels": 1} if dynamic_seq else None
    return Recipe(name=name, model=m, train_fn=_causal_lm_train,
                  inputs={"input_ids": ids, "labels": labels},
                  dynamic_dims=dyn, notes={"shape": shape, "attn": attn})
