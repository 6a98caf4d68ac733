"""Build the two random-init model folders the GPU benchmarks train, loadable by ``from_pretrained``.

* ``simplestories``: SimpleStories-1.25M's shape: LlamaForCausalLM, 4 layers, hidden 128, 4 heads,
  vocabulary 4096, tied embeddings (1.6 M parameters with intermediate 512).
* ``smollm135m``: SmolLM-135M's shape: 30 layers, hidden 576, intermediate 1536, 9 heads, 3 KV
  heads, vocabulary 49152, tied embeddings.

Nothing is downloaded: the tokenizer is the bundled byte-level BPE (sweepgen_trainer.models.train_tokenizer)
padded with added tokens up to the model's vocabulary, so every id the random model samples decodes.
Weights are random (seeded), so throughput and memory match the real models; rewards do not.

Usage::

    python benchmarks/make_gpu_models.py OUT_DIR            # writes OUT_DIR/simplestories, OUT_DIR/smollm135m
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


def build(name: str, out: Path, seed: int = 0) -> Path:
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
    args = parser.parse_args()
    for name in [args.only] if args.only else SHAPES:
        build(name, args.out)


if __name__ == "__main__":
    main()
