"""The routing overhead in the model alone: CPU time of a training forward+backward and of sampling.

Usage: OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_routing_layers.py [WIDTH] [ROUNDS]

bench_routing.py times whole GRPO steps, whose wall clock on a shared machine mostly measures the
neighbours, and whose routed and unrouted runs sample different completions after the first update.
This one feeds the same fixed batch to four models built from the same tiny model (WIDTH wide,
default 64; adapters on all seven Llama linear layers) and measures the process CPU time (torch on
one thread), best of ROUNDS interleaved rounds of the median of 10 repeats:

  off             no adapters (the frozen-or-not base model's own cost)
  baseline16      one LoRA of rank 16 (routing.mode baseline)
  routed_nomask   retain 8 + forget 8, no masks installed (as in generation and eval)
  routed_classic  retain 8 + forget 8, classic masks on a half-hacked batch (the masked path)

train: forward + backward of 16 sequences x 40 tokens (a GRPO loss forward's shape);
sample: generate 16 new tokens for 16 prompts of 24 tokens with the KV cache (GRPO's generation).
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

from sweepgen_trainer import models
from sweepgen_trainer.config import ModelConfig
from sweepgen_trainer.routing.config import LLAMA_LINEARS
from sweepgen_trainer.routing.dual_lora import inject_adapters, routed_masks
from sweepgen_trainer.routing.masks import masks_for

CASES = {
    "off": (None, False),
    "baseline16": ({"retain": 16, "forget": 0}, False),
    "routed_nomask": ({"retain": 8, "forget": 8}, False),
    "routed_classic": ({"retain": 8, "forget": 8}, True),
}


def build(model_dir, ranks):
    model, _ = models.load_model_and_tokenizer(model_dir, "float32")
    if ranks:
        inject_adapters(
            model, target_modules=LLAMA_LINEARS, ranks=ranks, alphas={"retain": 16.0, "forget": 16.0}, seed=0
        )
        # non-zero B, as after training (a zero B is the same cost, but keep it realistic)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith("_B"):
                    p.normal_(0, 0.01)
    return model


def cpu_ms(fn, repeats: int = 10) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(1)
    tiny = {"hidden_size": width, "intermediate_size": 2 * width if width == 64 else width}
    model_dir = models.ensure_model_dir(ModelConfig.model_validate({"tiny": tiny}))
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 500, (16, 40), generator=gen)
    prompts = ids[:, :24]
    hack = torch.tensor([True, False] * 8)

    def train(model, masked):
        masks = masks_for("classic", hack) if masked else None
        with routed_masks(model, masks) if masks is not None else torch.enable_grad():
            model(input_ids=ids).logits.pow(2).mean().backward()  # backward inside, as the trainer does
        model.zero_grad(set_to_none=True)

    def sample(model):
        with torch.no_grad():
            torch.manual_seed(0)
            model.generate(
                input_ids=prompts,
                attention_mask=torch.ones_like(prompts),
                do_sample=True,
                max_new_tokens=16,
                min_new_tokens=16,
                pad_token_id=1,
            )

    built = {name: (build(model_dir, ranks), masked) for name, (ranks, masked) in CASES.items()}
    results = {name: ([], []) for name in CASES}
    for _ in range(rounds):
        for name, (model, masked) in built.items():
            results[name][0].append(cpu_ms(lambda model=model, masked=masked: train(model, masked)))
            results[name][1].append(cpu_ms(lambda model=model: sample(model), repeats=5))
    print(f"tiny model {width} wide; CPU ms, best of {rounds} rounds of the median")
    best = {name: (min(t), min(s)) for name, (t, s) in results.items()}
    for name, (t, s) in best.items():
        print(
            f"{name:15s} train {t:7.2f} ms ({t / best['baseline16'][0]:.2f}x baseline)   "
            f"sample {s:7.2f} ms ({s / best['baseline16'][1]:.2f}x baseline)"
        )


if __name__ == "__main__":
    main()
