"""A debate transcript as token ids, with every token attributed to the role and turn that produced it.

Pure Python (no torch). The rollout builds a transcript turn by turn; this module turns it into what
TRL trains on: the completion ids after the question, an ``env_mask`` (1 for tokens the policy
generated, 0 for inserted role prompts, which are never trained on), a role and a turn index per
token, and finally the per-token advantages: each generated token gets its turn's shaped advantage
(a role-level strategy gives every turn of a role the role's value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sweepgen_trainer.debate.group import ROLES, Turn

PROMPT_TOKEN = -1  # role index of an inserted role-prompt token (no role generated it)


@dataclass(frozen=True)
class TurnTokens:
    """One turn: the inserted role-prompt ids, then the ids the policy generated as ``role``."""

    role: str
    prompt_ids: tuple[int, ...]
    generated_ids: tuple[int, ...]
    text: str  # decoded generated text (what the answer checker reads)


@dataclass(frozen=True)
class Transcript:
    completion_ids: list[int]
    env_mask: list[int]
    token_roles: list[int]  # index into ROLES, or PROMPT_TOKEN
    token_turns: list[int]  # index of the turn that generated the token, or PROMPT_TOKEN
    turns: tuple[Turn, ...]  # without correctness yet: scoring needs the dataset row


def assemble(turns: Sequence[TurnTokens], roles: Sequence[str] = ROLES) -> Transcript:
    """Concatenate the turns into one completion and attribute every token."""
    ids: list[int] = []
    mask: list[int] = []
    owner: list[int] = []
    position: list[int] = []
    for index, turn in enumerate(turns):
        ids += turn.prompt_ids
        mask += [0] * len(turn.prompt_ids)
        owner += [PROMPT_TOKEN] * len(turn.prompt_ids)
        position += [PROMPT_TOKEN] * len(turn.prompt_ids)
        ids += turn.generated_ids
        mask += [1] * len(turn.generated_ids)
        owner += [roles.index(turn.role)] * len(turn.generated_ids)
        position += [index] * len(turn.generated_ids)
    return Transcript(ids, mask, owner, position, plain_turns(turns))


def plain_turns(turns: Sequence[TurnTokens]) -> tuple[Turn, ...]:
    """The turns as the strategies see them (role, text, generated-token count; scored later)."""
    return tuple(Turn(role=t.role, text=t.text, n_tokens=len(t.generated_ids)) for t in turns)


def turn_token_advantages(token_turns: Sequence[int], turn_advantages: Sequence[float]) -> list[float]:
    """The advantage of each completion token: its turn's value; 0.0 for role-prompt tokens."""
    return [float(turn_advantages[t]) if t != PROMPT_TOKEN else 0.0 for t in token_turns]
