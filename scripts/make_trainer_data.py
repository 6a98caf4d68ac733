"""Regenerate the bundled trainer data in trainer/data/ (deterministic: fixed seed, no network).

Run from the repo root: ``python scripts/make_trainer_data.py``. The files are committed; this script
records how they were made. Stories imitate the SimpleStories style: short, simple sentences.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "trainer" / "data"
HELD_OUT = Path(__file__).resolve().parent.parent / "specs" / "data" / "stories_held_out.jsonl"
HELD_OUT_SEED = 20261128

CHARACTERS = [
    ("a little fox", "the fox"),
    ("a small bear", "the bear"),
    ("a girl named Lily", "Lily"),
    ("a boy named Tom", "Tom"),
    ("an old owl", "the owl"),
    ("a tiny mouse", "the mouse"),
    ("a brave rabbit", "the rabbit"),
    ("a shy turtle", "the turtle"),
    ("a girl named Mia", "Mia"),
    ("a boy named Sam", "Sam"),
    ("a kind dragon", "the dragon"),
    ("a curious cat", "the cat"),
    ("a young duck", "the duck"),
    ("a clever crow", "the crow"),
    ("a girl named Zoe", "Zoe"),
    ("a boy named Max", "Max"),
    ("a gentle whale", "the whale"),
    ("a busy ant", "the ant"),
]
PLACES = [
    "a quiet forest",
    "a big city",
    "a small village",
    "a sunny meadow",
    "a deep ocean",
    "a tall mountain",
    "a green garden",
    "a busy market",
    "an old castle",
    "a warm desert",
    "a snowy valley",
    "a little farm",
    "a bright school",
    "a dark cave",
    "a calm lake",
]
FEELINGS = ["happy", "sad", "excited", "scared", "curious", "tired", "proud", "lonely", "calm"]
OBJECTS = [
    "a red ball",
    "a shiny stone",
    "a lost key",
    "a blue kite",
    "a magic hat",
    "an old map",
    "a warm blanket",
    "a golden leaf",
    "a tiny boat",
    "a big box",
    "a sweet cake",
    "a paper star",
]
OPENINGS = [
    "Once upon a time, {c} lived in {p}.",
    "In {p}, there was {c}.",
    "One morning, {c} woke up in {p}.",
    "Long ago, {c} made a home in {p}.",
]
MIDDLES = [
    "Every day, {n} felt {f}.",
    "One day, {n} found {o}.",
    "{N} wanted to see the world.",
    "{N} had a friend who was very {f}.",
    "The sun was bright, and {n} was {f}.",
    "{N} looked at {o} and smiled.",
    "The wind was cold, but {n} was {f}.",
    "{N} ran to tell everyone about {o}.",
]
STEMS = [
    "One day, {n}",
    "Every morning, {n}",
    "Then {n}",
    "Suddenly, {n}",
    "After lunch, {n}",
    "That night, {n}",
    "{N} looked around and",
    "With a big smile, {n}",
    "{N} said that",
]


def _fill(template: str, rng: random.Random, char: tuple[str, str]) -> str:
    name = char[1]
    return template.format(
        c=char[0],
        n=name,
        N=name[0].upper() + name[1:],
        p=rng.choice(PLACES),
        f=rng.choice(FEELINGS),
        o=rng.choice(OBJECTS),
    )


def story(rng: random.Random) -> str:
    char = rng.choice(CHARACTERS)
    parts = [_fill(rng.choice(OPENINGS), rng, char)]
    parts += [_fill(rng.choice(MIDDLES), rng, char) for _ in range(rng.randint(3, 6))]
    parts.append(_fill("In the end, {n} was {f}.", rng, char))
    return " ".join(parts)


def opening(rng: random.Random) -> str:
    char = rng.choice(CHARACTERS)
    first = _fill(rng.choice(OPENINGS), rng, char)
    return f"{first} {_fill(rng.choice(STEMS), rng, char)}"


def arithmetic(rng: random.Random) -> dict:
    op = rng.choice("+-*")
    a, b = rng.randint(0, 20), rng.randint(0, 20)
    if op == "-" and b > a:
        a, b = b, a
    if op == "*":
        a, b = rng.randint(0, 9), rng.randint(0, 9)
    answer = {"+": a + b, "-": a - b, "*": a * b}[op]
    return {"prompt": f"Question: What is {a} {op} {b}? Answer:", "answer": answer}


def main() -> None:
    rng = random.Random(20261121)
    OUT.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    openings = []
    while len(openings) < 256:
        text = opening(rng)
        if text not in seen:
            seen.add(text)
            openings.append({"prompt": text})
    questions, qseen = [], set()
    while len(questions) < 256:
        row = arithmetic(rng)
        if row["prompt"] not in qseen:
            qseen.add(row["prompt"])
            questions.append(row)
    corpus = [story(rng) for _ in range(800)]
    corpus += [f"{q['prompt']} {q['answer']}." for q in (arithmetic(rng) for _ in range(300))]
    _write_jsonl(OUT / "stories.jsonl", openings)
    _write_jsonl(OUT / "arithmetic.jsonl", questions)
    (OUT / "tokenizer_corpus.txt").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    _write_jsonl(HELD_OUT, held_out_openings(seen))


def held_out_openings(training: set[str], n: int = 16) -> list[dict]:
    """``n`` story openings made like builtin:stories' but none of them: the routing spec's held-out
    eval prompts (specs/data/stories_held_out.jsonl). Their own seed, so the bundled files stay as
    they were."""
    rng = random.Random(HELD_OUT_SEED)
    rows: list[dict] = []
    while len(rows) < n:
        text = opening(rng)
        if text not in training and all(text != r["prompt"] for r in rows):
            rows.append({"prompt": text})
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
