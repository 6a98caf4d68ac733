"""The ``debate_copy`` prior of the built-in tiny model: a task on which the critic can matter.

A randomly initialised tiny model answers single-digit arithmetic by chance, whatever the critic
says, so no shaping strategy can show the critic's influence on it. This prior is a short supervised
warm-up, on debates made here from a fixed seed, in the debate format of sweepgen_trainer.debate.config's
default role prompts, that teaches three habits and no arithmetic beyond what the model picks up:

- the solver's first answer is a random digit (so it is usually wrong);
- the critic names the right value in ``CRITIC_RIGHT`` of the debates, a random digit otherwise;
- the final answer repeats the critic's value.

So the team reward (the final answer) follows the critic: a correct critique makes the final answer
right, and the credit-assignment question (does the critic get the credit?) has a real answer.
Every turn is ``" <digit>"`` pieces followed by EOS, each character its own token.
"""

from __future__ import annotations

import random
from typing import Any

from sweepgen_trainer.debate.config import DebateConfig

CRITIC_RIGHT = 0.4
# 400 steps: the copy is learned by step ~200 (argmax final answer = critic in 100% of a batch of 32,
# seed 0, measured 2026-11-25); the margin covers a different floating-point trajectory elsewhere
STEPS, BATCH, LEARNING_RATE, EXAMPLES, SEED = 400, 32, 3e-3, 4000, 0


def questions() -> list[tuple[str, int]]:
    """Every a + b and a − b (a, b single digits) whose answer is a single digit: 110 questions."""
    out = []
    for a in range(10):
        for b in range(10):
            if a + b <= 9:
                out.append((f"Question: What is {a} + {b}? Answer:", a + b))
            if a - b >= 0:
                out.append((f"Question: What is {a} - {b}? Answer:", a - b))
    return out


def _debate_examples(rng: random.Random, n: int) -> list[tuple[str, list[str]]]:
    """(prompt, [solver, critic, final] turn texts) following the prior's three habits."""
    pool = questions()
    out = []
    for _ in range(n):
        prompt, answer = rng.choice(pool)
        critic = answer if rng.random() < CRITIC_RIGHT else rng.choice([d for d in range(10) if d != answer])
        out.append((prompt, [f" {rng.randrange(10)}", f" {critic}", f" {critic}"]))
    return out


def _turn_ids(tokenizer: Any, text: str) -> list[int]:
    """A turn as the prior generates it: one token per character (space, digit), then EOS; the critic's
    and the final turn are always three tokens, so the critic's digit sits at a fixed distance from
    the final answer."""
    pieces = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(c)[0]) for c in text]
    return [*pieces, tokenizer.eos_token_id]


def encode(tokenizer: Any, prompt: str, turns: list[str]) -> tuple[list[int], list[int]]:
    """Token ids and loss mask (1 on generated turn tokens) exactly as the rollout lays a debate out."""
    schedule = DebateConfig().schedule()
    ids = list(tokenizer(text=prompt)["input_ids"])
    mask = [0] * len(ids)
    for (_, role_prompt), text in zip(schedule, turns, strict=True):
        role_ids = (
            list(tokenizer(text=role_prompt, add_special_tokens=False)["input_ids"]) if role_prompt else []
        )
        turn_ids = _turn_ids(tokenizer, text)
        ids += role_ids + turn_ids
        mask += [0] * len(role_ids) + [1] * len(turn_ids)
    return ids, mask


def train_prior(model: Any, tokenizer: Any) -> Any:
    """Fit ``model`` to the prior's debates (deterministic: fixed seeds, CPU, fixed order)."""
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch (its debate data is built without it)

    rng = random.Random(SEED)
    examples = [encode(tokenizer, p, t) for p, t in _debate_examples(rng, EXAMPLES)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    model.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        for _ in range(STEPS):
            batch = rng.sample(examples, BATCH)
            width = max(len(ids) for ids, _ in batch)
            pad = tokenizer.pad_token_id
            input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch])
            attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
            labels = torch.tensor(
                [
                    [x if m else -100 for x, m in zip(ids, mask)] + [-100] * (width - len(ids))
                    for ids, mask in batch
                ]
            )
            loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return model
