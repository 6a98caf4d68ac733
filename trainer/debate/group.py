"""The data the reward-shaping strategies work on: debate transcripts grouped by prompt.

Everything here is plain Python (no torch), so the strategies can be tested on hand-built groups.
A *group* is the GRPO group of one prompt: ``n`` independent debates (rollouts) of the same question.
A *rollout* is a debate transcript: an ordered tuple of turns, each spoken by one role.

Two scores come from the transcript and nowhere else, so they can never disagree with it:

- the team reward ``G = team_score(turns)`` (correctness of the final answer in the trainer), and
- the individual reward ``I^role`` = mean of ``Turn.correct`` over that role's turns (did that role's
  turns state the correct answer); 0.0 for a role that did not speak.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# The roles a debate is played in, in speaking order. The trainer and the strategies share this tuple.
ROLES: tuple[str, ...] = ("solver", "critic")

TeamScore = Callable[[Sequence["Turn"]], float]
RoleValues = dict[str, float]
TurnValues = list[float]  # one value per turn of a transcript, in speaking order
Transcript = tuple["Turn", ...]


@dataclass(frozen=True)
class Turn:
    """One turn of a debate: who spoke, what they said, how many tokens they generated.

    ``correct`` is the answer checker's score of this turn's text alone (1.0 when the turn states
    the correct answer); ``n_tokens`` counts only tokens the policy generated (not role prompts).
    """

    role: str
    text: str = ""
    n_tokens: int = 0
    correct: float = 0.0


@dataclass(frozen=True)
class Group:
    """The rollouts of one prompt, the roles being played, and the team reward function.

    ``team_score`` must be a pure function of a transcript: the counterfactual strategies call it
    again on counterfactual transcripts. In the trainer it scores :func:`final_answer`, the solver's
    last turn.

    ``counterfactuals[i][t]`` are the regenerated counterfactual transcripts of rollout i's turn t
    (sweepgen_trainer.debate.branching: turn t replaced, every later turn generated again); empty when the
    strategy needs none. Their meaning (K policy samples, or the default action) is the strategy's.
    """

    rollouts: tuple[Transcript, ...]
    team_score: TeamScore
    roles: tuple[str, ...] = ROLES
    counterfactuals: tuple[tuple[tuple[Transcript, ...], ...], ...] = ()

    def __post_init__(self) -> None:
        if not self.rollouts:
            raise ValueError("a group needs at least one rollout")
        for i, turns in enumerate(self.rollouts):
            for turn in turns:
                if turn.role not in self.roles:
                    raise ValueError(
                        f"rollout {i} has a turn by role {turn.role!r}; the roles are {list(self.roles)}"
                    )
        if self.counterfactuals and len(self.counterfactuals) != len(self.rollouts):
            raise ValueError(
                f"{len(self.counterfactuals)} rows of counterfactuals for {len(self.rollouts)} rollouts"
            )
        for i, (turns, per_turn) in enumerate(zip(self.rollouts, self.counterfactuals, strict=False)):
            _check_counterfactuals(i, turns, per_turn)

    @property
    def size(self) -> int:
        return len(self.rollouts)

    def team_rewards(self) -> list[float]:
        """G for each rollout, checked finite: a NaN reward must stop training, not shape it."""
        rewards = [float(self.team_score(turns)) for turns in self.rollouts]
        for i, value in enumerate(rewards):
            if not math.isfinite(value):
                raise ValueError(f"team reward of rollout {i} is {value}; rewards must be finite")
        return rewards

    def individual_rewards(self) -> list[RoleValues]:
        """I^role for each rollout: the mean ``correct`` of that role's turns, 0.0 if it never spoke."""
        return [individual_rewards(turns, self.roles) for turns in self.rollouts]


def individual_rewards(turns: Sequence[Turn], roles: Sequence[str] = ROLES) -> RoleValues:
    """I^role of one transcript (see the module docstring)."""
    out: RoleValues = {}
    for role in roles:
        scores = [t.correct for t in turns if t.role == role]
        out[role] = sum(scores) / len(scores) if scores else 0.0
    return out


def final_answer(turns: Sequence[Turn], answerer: str = ROLES[0]) -> Turn:
    """The turn the team reward scores: the last turn of the answering role (the solver), wherever it
    stands; never another role's turn, so a counterfactual can never make the critic's text the answer."""
    for turn in reversed(turns):
        if turn.role == answerer:
            return turn
    raise ValueError(f"the transcript has no {answerer} turn, so it has no final answer")


def with_default_action(turns: Sequence[Turn], role: str, default_text: str) -> tuple[Turn, ...]:
    """The transcript with each of ``role``'s turns replaced by the declared default action: a turn by
    the same role, in the same place, saying ``default_text`` with no generated tokens (difference
    rewards' counterfactual; the other role's turns are kept as they were, not regenerated)."""
    return tuple(Turn(role, default_text, 0, 0.0) if t.role == role else t for t in turns)


def with_turns_of(turns: Sequence[Turn], role: str, donor: Sequence[Turn]) -> tuple[Turn, ...]:
    """The transcript with ``role``'s turns swapped, in order, for ``donor``'s turns of that role (COMA's
    counterfactual: another sample of the role's actions on the same prompt, the other role's fixed).

    Both transcripts must give the role the same number of turns (the trainer's fixed schedule does)."""
    own = [i for i, t in enumerate(turns) if t.role == role]
    theirs = [t for t in donor if t.role == role]
    if len(own) != len(theirs):
        raise ValueError(
            f"cannot swap {role}'s turns: {len(own)} in one rollout, {len(theirs)} in the other; "
            "every rollout of a group must follow the same turn schedule"
        )
    out = list(turns)
    for i, turn in zip(own, theirs, strict=True):
        out[i] = turn
    return tuple(out)


def role_to_turns(values: Mapping[str, float], turns: Sequence[Turn]) -> TurnValues:
    """A role-level value spread over the turns: each turn gets its role's value."""
    return [float(values[t.role]) for t in turns]


def turns_to_roles(values: Sequence[float], turns: Sequence[Turn], roles: Sequence[str]) -> RoleValues:
    """A turn-level value summarized per role: the mean over the role's turns (0.0 if it never spoke)."""
    out: RoleValues = {}
    for role in roles:
        own = [v for v, t in zip(values, turns, strict=True) if t.role == role]
        out[role] = math.fsum(own) / len(own) if own else 0.0
    return out


def uniform(value: float, roles: Sequence[str]) -> RoleValues:
    """The same value for every role (team-level strategies)."""
    return dict.fromkeys(roles, value)


def group_normalize(
    values: Sequence[Mapping[str, float]], roles: Sequence[str], scale: str
) -> list[RoleValues]:
    """GRPO advantages of one group, computed per role, exactly as TRL computes them for one reward.

    For each role: ``A_i = v_i − mean(v)`` and, when ``scale == "group"``, divided by
    ``std(v) + 1e-4`` with Bessel's correction (TRL's ``nanstd``; a group of one has no spread and
    gets advantage 0). ``scale == "none"`` only subtracts the mean. Batch-level scaling is done by
    :func:`batch_normalize` because it needs every group at once.
    """
    if scale not in ("group", "none"):
        raise ValueError(f"unknown scale {scale!r}; use 'group' or 'none' (or batch_normalize)")
    n = len(values)
    out: list[RoleValues] = [{} for _ in range(n)]
    for role in roles:
        column = [float(v[role]) for v in values]
        mean = _mean(column)
        std = _std(column, mean)
        for i, v in enumerate(column):
            centred = v - mean
            out[i][role] = centred / (std + 1e-4) if scale == "group" else centred
    return out


def batch_normalize(
    groups: Sequence[Sequence[Mapping[str, float]]], roles: Sequence[str]
) -> list[list[RoleValues]]:
    """TRL's ``scale_rewards="batch"``: group mean subtracted, divided by the whole batch's std (per role)."""
    centred = [group_normalize(g, roles, "none") for g in groups]
    out = [[dict(v) for v in g] for g in centred]
    for role in roles:
        column = [float(v[role]) for g in groups for v in g]
        std = _std(column, _mean(column))
        for g in out:
            for v in g:
                v[role] = v[role] / (std + 1e-4)
    return out


def sample_std(column: Sequence[float]) -> float:
    """TRL's std of a reward column (Bessel-corrected; 0.0 for fewer than two values)."""
    return _std(column, _mean(column)) if column else 0.0


def _mean(column: Sequence[float]) -> float:
    # Relative to the first value and with fsum: a constant column has exactly its value as mean,
    # so a group with no spread gets advantage 0.0, not rounding noise divided by 1e-4.
    first = column[0]
    return first + math.fsum(v - first for v in column) / len(column)


def _std(column: Sequence[float], mean: float) -> float:
    if len(column) < 2:
        return 0.0
    return math.sqrt(math.fsum((v - mean) ** 2 for v in column) / (len(column) - 1))


def _check_counterfactuals(i: int, turns: Transcript, per_turn: tuple[tuple[Transcript, ...], ...]) -> None:
    """Rollout ``i``'s counterfactuals: one slot per turn, each keeping the earlier turns and the length."""
    if len(per_turn) != len(turns):
        raise ValueError(f"rollout {i} has {len(turns)} turns but {len(per_turn)} counterfactual slots")
    for t, transcripts in enumerate(per_turn):
        for z in transcripts:
            if tuple(x.text for x in z[:t]) != tuple(x.text for x in turns[:t]) or len(z) != len(turns):
                raise ValueError(
                    f"a counterfactual of rollout {i}, turn {t} does not keep the rollout's "
                    "earlier turns or its length"
                )
