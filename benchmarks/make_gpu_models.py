"""Build the two random-init model folders the GPU benchmarks train, loadable by ``from_pretrained``.

* ``simplestories``: SimpleStories-1.25M's shape: LlamaForCausalLM, 4 layers, hidden 128, 4 heads,
  vocabulary 4096, tied embeddings (1.6 M parameters with intermediate 512).
* ``smollm135m``: SmolLM-135M's shape: 30 layers, hidden 576, intermediate 1536, 9 heads, 3 KV
  heads, vocabulary 49152, tied embeddings.

Nothing is downloaded: the tokenizer is the bundled byte-level BPE (sweepgen_trainer.models.train_tokenizer)
padded with added tokens up to the model's vocabulary, so every id the random model samples decodes.
Weights are random (seeded), so throughput and memory match the real models; rewards do not.

A random model almost never samples EOS (1 in the vocabulary size), so every completion runs to
``max_completion_length``, where a trained model stops. ``--eos-rate P`` gives the model a
per-token EOS probability of about P (a geometric completion length, mean about 1/P before the cap)
without changing its shape: every token's embedding gets the same constant in one hidden dimension
(a shift every logit shares, so it changes no probability) and EOS's embedding a larger one there,
calibrated on the model's own hidden states (the function ``calibrate_eos``). The runs report the
completion lengths they got.

Usage::

    python benchmarks/make_gpu_models.py OUT_DIR            # writes OUT_DIR/simplestories, OUT_DIR/smollm135m
    python benchmarks/make_gpu_models.py OUT --only simplestories --eos-rate 0.02  # OUT/simplestories-eos0.02
"""

from __future__ import annotations

import argparse
from pathlib import Path

SHAPES = {
    "simplestories": {
        "vocab_size": 4096,
        "hidden_size": 128,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "tie_word_embeddings": True,
    },
    "smollm135m": {
        "vocab_size": 49152,
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "tie_word_embeddings": True,
    },
}


STOP_DIM = 0  # the hidden dimension that carries the shared constant
SHARED = 1.0  # that constant: large against the random embeddings (std 0.02), so it dominates h[STOP_DIM]


def eos_probability(model, eos_id: int, extra: float, hidden) -> float:
    """Mean P(EOS) over ``hidden`` (final-norm states) if EOS's embedding had ``extra`` more in STOP_DIM."""
    import torch

    weight = model.get_output_embeddings().weight.float()
    logits = hidden @ weight.T
    logits[..., eos_id] += extra * hidden[..., STOP_DIM]
    return float(torch.softmax(logits, dim=-1)[..., eos_id].mean())


def calibrate_eos(model, eos_id: int, rate: float, seed: int = 0) -> float:
    """Set the shared constant, then bisect EOS's extra so that the mean P(EOS) is ``rate``."""
    import torch

    embed = model.get_input_embeddings().weight
    with torch.no_grad():
        embed[:, STOP_DIM] = SHARED
        gen = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, embed.shape[0], (8, 64), generator=gen)
        hidden = model(tokens, output_hidden_states=True).hidden_states[-1].float()
        low, high = 0.0, 50.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if eos_probability(model, eos_id, mid, hidden) < rate else (low, mid)
        embed[eos_id, STOP_DIM] += low  # tied: this is the output embedding too
        return eos_probability(model, eos_id, 0.0, hidden)


def build(name: str, out: Path, seed: int = 0, eos_rate: float = 0.0) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from sweepgen_trainer.models import train_tokenizer

    shape = SHAPES[name]
    tokenizer = train_tokenizer(512)
    missing = shape["vocab_size"] - len(tokenizer)
    tokenizer.add_tokens([f"<pad_{i}>" for i in range(missing)])
    assert len(tokenizer) == shape["vocab_size"], (len(tokenizer), shape["vocab_size"])
    config = LlamaConfig(
        **shape,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    folder = out / name
    if eos_rate:
        assert shape["tie_word_embeddings"], "calibrate_eos edits the tied embedding"
        folder = out / f"{name}-eos{eos_rate:g}"
        got = calibrate_eos(model, tokenizer.eos_token_id, eos_rate, seed)
        print(f"{folder}: mean P(EOS) per token {got:.4f} on random-token contexts (asked {eos_rate})")
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    params = sum(p.numel() for p in model.parameters())
    print(f"{folder}: {params / 1e6:.2f} M parameters")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", choices=sorted(SHAPES), default=None)
    parser.add_argument("--eos-rate", type=float, default=0.0, help="per-token EOS probability (0: random)")
    args = parser.parse_args()
    for name in [args.only] if args.only else SHAPES:
        build(name, args.out, eos_rate=args.eos_rate)


if __name__ == "__main__":
    main()
