"""A stand-in for `python -m rm.train`: a Bradley-Terry reward model in pure Python, CPU, seconds.

It takes every flag the sbatch scripts of specs/rm_ablation.yaml pass, so the ladder runs as written,
and honours the ones the ladder changes:

- ``--scheduler constant|cosine`` with ``--warmup_steps`` of linear warm-up;
- ``--label_smoothing``: the loss is ``-(1-e) log s(d) - e log s(-d)`` for a score margin ``d``;
- ``--early_stopping_patience N``: stop after N evaluations without a lower eval loss (0: off);
- ``--finetune full|lora``: full trains every weight; lora trains ``lora_rank`` coordinates along a
  fixed random basis, scaled by ``lora_alpha / lora_rank`` (rank below the feature size limits it).

What it stands in for and what it does not: ``--model`` and ``--dataset`` only seed the synthetic
data (no download, no GPU). The data are pairs of feature vectors whose preference follows a hidden
linear reward, with 15% of the labels flipped (so label smoothing has something to do). The model is
linear; its optimiser is AdamW; because a linear model on 32 features needs far larger steps than a
7B transformer, the learning rate used is ``--lr`` times ``LR_SCALE``.

Output in ``--output_dir``: ``metrics.csv`` (``step, train_loss, train_acc, eval_loss, eval_acc``, one
row per evaluation and one at the last step; train_* are means over the batches since the previous
row), rewritten atomically at every evaluation, with ``checkpoint.json`` beside it: a run started
again resumes from its last evaluation, and a finished run (``done`` in the checkpoint) exits 0 at
once without training again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

FEATURES = 32
FLIP = 0.15  # share of preference labels that disagree with the hidden reward
LR_SCALE = 1.0e4
BETAS = (0.9, 0.999)
COLUMNS = ("step", "train_loss", "train_acc", "eval_loss", "eval_acc")

Pair = tuple[list[float], list[float]]  # (chosen, rejected) features


def parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rm.train", description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--limit", type=int, required=True)
    p.add_argument("--eval_split", required=True)
    p.add_argument("--eval_limit", type=int, required=True)
    p.add_argument("--eval_every", type=int, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--batch_size", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--weight_decay", type=float, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--scheduler", choices=("constant", "cosine"), required=True)
    p.add_argument("--warmup_steps", type=int, required=True)
    p.add_argument("--label_smoothing", type=float, required=True)
    p.add_argument("--early_stopping_patience", type=int, required=True)
    p.add_argument("--finetune", choices=("full", "lora"), required=True)
    p.add_argument("--lora_rank", type=int)
    p.add_argument("--lora_alpha", type=float)
    p.add_argument("--output_dir", required=True)
    args = p.parse_args(argv)
    if (args.finetune == "lora") != (args.lora_rank is not None and args.lora_alpha is not None):
        p.error("--finetune lora needs --lora_rank and --lora_alpha, and full takes neither")
    if args.lora_rank is not None and args.lora_rank < 1:
        p.error("--lora_rank must be at least 1")
    for name in ("limit", "eval_limit", "eval_every", "steps", "batch_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if not 0.0 <= args.label_smoothing < 0.5:
        p.error("--label_smoothing must be in [0, 0.5)")
    if args.warmup_steps < 0 or args.early_stopping_patience < 0:
        p.error("--warmup_steps and --early_stopping_patience must not be negative")
    return args


def make_data(args: argparse.Namespace) -> tuple[list[Pair], list[Pair]]:
    # the model and dataset names only seed the synthetic data, so two arms see the same pairs
    digest = hashlib.sha256(f"{args.model}|{args.dataset}|{args.seed}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    hidden = [rng.gauss(0.0, 1.0) for _ in range(FEATURES)]

    def pairs(n: int) -> list[Pair]:
        out = []
        for _ in range(n):
            a = [rng.gauss(0.0, 1.0) for _ in range(FEATURES)]
            b = [rng.gauss(0.0, 1.0) for _ in range(FEATURES)]
            a_better = sum(h * (x - y) for h, x, y in zip(hidden, a, b)) > 0
            if rng.random() < FLIP:
                a_better = not a_better
            out.append((a, b) if a_better else (b, a))
        return out

    return pairs(args.limit), pairs(args.eval_limit)


class Model:
    """score(x) = w . x with w = basis @ v * scale (lora) or w = v (full); v is what trains."""

    def __init__(self, args: argparse.Namespace) -> None:
        rng = random.Random(args.seed)
        if args.finetune == "lora":
            rank = args.lora_rank
            self.basis: list[list[float]] | None = [
                [rng.gauss(0.0, 1.0 / math.sqrt(FEATURES)) for _ in range(rank)] for _ in range(FEATURES)
            ]
            self.scale = args.lora_alpha / rank
            self.v = [0.0] * rank
        else:
            self.basis, self.scale = None, 1.0
            self.v = [0.0] * FEATURES

    def weights(self) -> list[float]:
        if self.basis is None:
            return list(self.v)
        return [self.scale * sum(b * v for b, v in zip(row, self.v)) for row in self.basis]

    def grad_v(self, grad_w: list[float]) -> list[float]:
        if self.basis is None:
            return grad_w
        basis = self.basis
        rank = range(len(self.v))
        return [self.scale * sum(basis[i][j] * grad_w[i] for i in range(FEATURES)) for j in rank]


def margin(w: list[float], pair: Pair) -> float:
    chosen, rejected = pair
    return sum(wi * (c - r) for wi, c, r in zip(w, chosen, rejected))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def loss_of(d: float, smoothing: float) -> float:
    # -log s(d) = softplus(-d), computed stably
    def softplus(x: float) -> float:
        return max(x, 0.0) + math.log1p(math.exp(-abs(x)))

    return (1.0 - smoothing) * softplus(-d) + smoothing * softplus(d)


def evaluate(w: list[float], data: list[Pair], smoothing: float) -> tuple[float, float]:
    margins = [margin(w, p) for p in data]
    loss = sum(loss_of(d, smoothing) for d in margins) / len(margins)
    return loss, sum(d > 0 for d in margins) / len(margins)


def lr_at(step: int, args: argparse.Namespace) -> float:
    """Learning rate for optimiser step ``step`` (0-based): linear warm-up, then constant or cosine."""
    base = args.lr * LR_SCALE
    if step < args.warmup_steps:
        return base * (step + 1) / args.warmup_steps
    if args.scheduler == "constant":
        return base
    progress = (step - args.warmup_steps) / max(1, args.steps - args.warmup_steps)
    return base * 0.5 * (1.0 + math.cos(math.pi * progress))


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_metrics(out: Path, rows: list[dict[str, float]]) -> None:
    lines = [",".join(COLUMNS)]
    lines += [",".join(repr(row[c]) if c != "step" else str(int(row[c])) for c in COLUMNS) for row in rows]
    write_atomic(out / "metrics.csv", "\n".join(lines) + "\n")


def adamw_step(
    v: list[float],
    g: list[float],
    m: list[float],
    s: list[float],
    *,
    step: int,
    lr: float,
    weight_decay: float,
) -> None:
    """One AdamW update of the parameters ``v`` in place (``m``, ``s``: its moment estimates)."""
    for i in range(len(v)):
        m[i] = BETAS[0] * m[i] + (1 - BETAS[0]) * g[i]
        s[i] = BETAS[1] * s[i] + (1 - BETAS[1]) * g[i] * g[i]
        m_hat, s_hat = m[i] / (1 - BETAS[0] ** step), s[i] / (1 - BETAS[1] ** step)
        v[i] -= lr * (m_hat / (math.sqrt(s_hat) + 1e-8) + weight_decay * v[i])


def train(args: argparse.Namespace) -> int:  # noqa: PLR0915 - a stand-in trainer, top to bottom like the real ones
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_path = out / "checkpoint.json"
    model = Model(args)
    m, s = [0.0] * len(model.v), [0.0] * len(model.v)
    rows: list[dict[str, float]] = []
    step, best, bad_evals = 0, math.inf, 0
    if ckpt_path.is_file():
        ckpt = json.loads(ckpt_path.read_text(encoding="utf-8"))
        if ckpt.get("done"):
            print(f"rm.train: {out} already finished at step {ckpt['step']}; nothing to do")
            return 0
        model.v, m, s = ckpt["v"], ckpt["m"], ckpt["s"]
        rows, step, best, bad_evals = ckpt["rows"], ckpt["step"], ckpt["best"], ckpt["bad_evals"]
        print(f"rm.train: resuming {out} from step {step}")
    train_data, eval_data = make_data(args)
    print(
        f"rm.train (stand-in): {args.finetune} fine-tuning, {len(train_data)} train / {len(eval_data)} "
        f"eval pairs, {args.steps} steps, scheduler {args.scheduler} (warm-up {args.warmup_steps}), "
        f"label smoothing {args.label_smoothing}, early-stopping patience {args.early_stopping_patience}"
    )
    batches = random.Random(args.seed + 1)
    for _ in range(step * args.batch_size):
        batches.randrange(len(train_data))  # the same batches as an uninterrupted run
    window_loss, window_acc, window_n = 0.0, 0.0, 0
    stop = False
    while step < args.steps and not stop:
        w = model.weights()
        grad_w = [0.0] * FEATURES
        for _ in range(args.batch_size):
            pair = train_data[batches.randrange(len(train_data))]
            d = margin(w, pair)
            window_loss += loss_of(d, args.label_smoothing)
            window_acc += d > 0
            window_n += 1
            coef = sigmoid(d) - (1.0 - args.label_smoothing)  # dloss/dd
            for i, (c, r) in enumerate(zip(*pair)):
                grad_w[i] += coef * (c - r) / args.batch_size
        g = model.grad_v(grad_w)
        lr = lr_at(step, args)
        step += 1
        adamw_step(model.v, g, m, s, step=step, lr=lr, weight_decay=args.weight_decay)
        if step % args.eval_every == 0 or step == args.steps:
            eval_loss, eval_acc = evaluate(model.weights(), eval_data, args.label_smoothing)
            rows.append(
                {
                    "step": step,
                    "train_loss": window_loss / window_n,
                    "train_acc": window_acc / window_n,
                    "eval_loss": eval_loss,
                    "eval_acc": eval_acc,
                }
            )
            window_loss, window_acc, window_n = 0.0, 0.0, 0
            if eval_loss < best - 1e-6:
                best, bad_evals = eval_loss, 0
            else:
                bad_evals += 1
            patience = args.early_stopping_patience
            if patience and bad_evals >= patience:
                print(f"rm.train: early stop at step {step}: no better eval loss for {patience} evaluations")
                stop = True
            done = stop or step == args.steps
            write_metrics(out, rows)
            state = {"v": model.v, "m": m, "s": s, "rows": rows, "step": step}
            state.update({"best": best, "bad_evals": bad_evals, "done": done})
            write_atomic(ckpt_path, json.dumps(state) + "\n")
            print(f"step {step}: eval_loss {eval_loss:.4f} eval_acc {eval_acc:.4f}", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return train(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
