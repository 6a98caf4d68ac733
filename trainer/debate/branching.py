"""Debates and their counterfactual branches, played position by position (pure Python, no torch).

A counterfactual of turn t of debate z_i keeps z_i's history before t (the question and turns
0..t−1), puts another action in turn t, and **regenerates every later turn** (the solver's final
answer included), so a turn whose effect is downstream (the critic's, read by the solver) changes
what the team reward reads. Two kinds (``Plan.mode``):

- ``sample``: K alternative turns sampled from the same policy given z_i's own history before t
  (COMA's Monte-Carlo samples of π^a(·|τ^a), Foerster et al. 2018 eq. 4);
- ``default``: the turn replaced by the declared default action (difference rewards, Wolpert & Tumer).

Generation is batched: at each debate position one call to ``generate`` takes the contexts of every
debate and every branch that speaks there. A branch of turn t is created from z_i's state before z_i
generates turn t, so its history is exactly z_i's.

``generate(contexts, keys) -> continuations`` receives token-id lists (history + role prompt) and
returns the generated ids of each; ``keys[j]`` names the sample path of context j (the model ignores
it; a test's fixed generator uses it to make each path its own sample). ``decode(ids) -> text``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sweepgen_trainer.debate.transcript import TurnTokens

# (row, turn it branches at or −1 for the debate itself, k): which sample path a context belongs to
PathKey = tuple[int, int, int]
Generate = Callable[[list[list[int]], list[PathKey]], list[list[int]]]
Decode = Callable[[list[int]], str]
Schedule = Sequence[tuple[str, list[int]]]  # (role, role-prompt ids) of every turn, in order


@dataclass(frozen=True)
class Plan:
    """Which counterfactuals to play: none, K sampled alternatives per turn, or the default action."""

    mode: Literal["none", "sample", "default"] = "none"
    k: int = 0  # alternatives per turn (mode "sample")
    default_ids: tuple[int, ...] = ()  # the default action's token ids (mode "default")
    default_text: str = ""

    def per_turn(self) -> int:
        return {"none": 0, "sample": self.k, "default": 1}[self.mode]


@dataclass
class _Thread:
    """One transcript being played: a debate (turn = −1) or branch k of its turn ``turn``."""

    row: int
    turn: int
    k: int
    history: list[int]
    turns: list[TurnTokens] = field(default_factory=list)


@dataclass(frozen=True)
class Played:
    """The debates, and for debate i, turn t: its counterfactual transcripts (``branches[i][t][k]``)."""

    debates: list[list[TurnTokens]]
    branches: list[list[list[list[TurnTokens]]]]
    counterfactual_tokens: list[int]  # tokens generated in debate i's branches (the extra cost)
    generate_calls: int


def play(
    prompt_ids: Sequence[Sequence[int]], schedule: Schedule, generate: Generate, decode: Decode, plan: Plan
) -> Played:
    """Play every debate and the counterfactual branches ``plan`` asks for, one ``generate`` per position."""
    debates = [_Thread(i, -1, 0, list(p)) for i, p in enumerate(prompt_ids)]
    branches: list[list[list[_Thread]]] = [[[] for _ in schedule] for _ in prompt_ids]
    calls = 0
    for t, (role, role_ids) in enumerate(schedule):
        speaking = list(debates)
        for debate in debates:
            new = _branch(debate, t, role, role_ids, plan)
            branches[debate.row][t] = new
            # a default-action branch does not speak at t (its turn is given), only afterwards
            speaking += [b for b in new if plan.mode == "sample"]
        speaking += [b for i in range(len(debates)) for u in range(t) for b in branches[i][u]]
        contexts = [s.history + list(role_ids) for s in speaking]
        generated = generate(contexts, [(s.row, s.turn, s.k) for s in speaking])
        calls += 1
        if len(generated) != len(contexts):
            raise RuntimeError(f"the generator returned {len(generated)} turns for {len(contexts)} contexts")
        for thread, context, ids in zip(speaking, contexts, generated, strict=True):
            thread.turns.append(TurnTokens(role, tuple(role_ids), tuple(ids), decode(list(ids))))
            thread.history = context + list(ids)
    # a branch of turn t generated its turns t.. (the earlier ones are the debate's own)
    cost = [
        sum(len(x.generated_ids) for t, per_turn in enumerate(row) for b in per_turn for x in b.turns[t:])
        for row in branches
    ]
    return Played(
        [d.turns for d in debates],
        [[[b.turns for b in per_turn] for per_turn in row] for row in branches],
        cost,
        calls,
    )


def _branch(debate: _Thread, t: int, role: str, role_ids: list[int], plan: Plan) -> list[_Thread]:
    """The branches of ``debate``'s turn t, taken from its state before it speaks at t."""
    if plan.mode == "sample":
        return [_Thread(debate.row, t, k, list(debate.history), list(debate.turns)) for k in range(plan.k)]
    if plan.mode == "default":
        # The default action is given, not generated: its ids sit with the role prompt (no n_tokens,
        # no cost), and the turn's text is the declared text.
        turn = TurnTokens(role, (*role_ids, *plan.default_ids), (), plan.default_text)
        history = debate.history + list(role_ids) + list(plan.default_ids)
        return [_Thread(debate.row, t, 0, history, [*debate.turns, turn])]
    return []
