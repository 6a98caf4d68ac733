"""The regenerating counterfactual estimators against references written from the papers.

Given a fixed generator (a pure function of the context and of the sample path, so every branch is
its own sample), the batched player (sweepgen_trainer.debate.branching, one generate call per position) must
produce exactly the counterfactual transcripts of a plain one-path-at-a-time reference, and coma /
difference_rewards exactly the reference's values:

- COMA (Foerster et al. 2018, eq. 4): A_{i,t} = G(z_i) − (1/K)·Σ_k G(z_i[:t] + u'_k + regenerated rest),
  u'_k ~ π(·|τ) with τ = z_i's own history before t;
- difference rewards (Wolpert & Tumer 2002): D_{i,t} = G(z_i) − G(z_i[:t] + c + regenerated rest).
"""

from __future__ import annotations

import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen_trainer.debate.branching import Plan, play
from sweepgen_trainer.debate.group import ROLES, Group, Turn
from sweepgen_trainer.debate.shaping import shaped_values, turn_advantages
from sweepgen_trainer.debate.transcript import plain_turns

VOCAB = 7  # token ids 0..6; the answer checker reads the last token of the final turn


def fixed_generator(seed: int):
    """π as a fixed function: the turn generated for a context on a sample path (1-3 tokens)."""

    def one(context: list[int], key: tuple[int, int, int]) -> list[int]:
        digest = hashlib.sha256(repr((seed, context, key)).encode()).digest()
        return [b % VOCAB for b in digest[: 1 + digest[-1] % 3]]

    def generate(contexts, keys):
        return [one(c, k) for c, k in zip(contexts, keys, strict=True)]

    return one, generate


def decode(ids) -> str:
    return " ".join(map(str, ids))


def team_score(answer: int):
    """The trainer's G: the final (solver's last) turn's last token is the answer."""

    def score(turns) -> float:
        final = [t for t in turns if t.role == "solver"][-1].text.split()
        return 1.0 if final and final[-1] == str(answer) else 0.0

    return score


def schedule(n_turns: int) -> list[tuple[str, list[int]]]:
    return [(ROLES[t % 2], [100 + t]) for t in range(n_turns)]  # role prompts: one marker token each


# ---- the reference: one path at a time, written from the definitions ------------------------------


def ref_rest(history: list[int], turns: list[Turn], start: int, sched, one, key) -> tuple[Turn, ...]:
    """Play turns start.. of the debate on sample path ``key`` after ``history``."""
    turns = list(turns)
    for t in range(start, len(sched)):
        role, role_ids = sched[t]
        ids = one(history + role_ids, key)
        turns.append(Turn(role, decode(ids), len(ids)))
        history = history + role_ids + ids
    return tuple(turns)


def ref_histories(prompt: list[int], debate: tuple[Turn, ...], sched, one, row: int) -> list[list[int]]:
    """τ before each turn of the debate (replayed: the generator is a function)."""
    history, out = list(prompt), []
    for _, role_ids in sched:
        out.append(history)
        history = history + role_ids + one(history + role_ids, (row, -1, 0))
    return out


def reference(prompts, sched, one, plan: Plan, score):
    debates = [ref_rest(list(p), [], 0, sched, one, (i, -1, 0)) for i, p in enumerate(prompts)]
    branches, values = [], []
    for i, (prompt, z) in enumerate(zip(prompts, debates)):
        taus = ref_histories(prompt, z, sched, one, i)
        row_branches, row_values = [], []
        for t, (role, role_ids) in enumerate(sched):
            if plan.mode == "sample":  # u'_k ~ π(·|τ), then the rest of the debate
                alts = [ref_rest(taus[t], list(z[:t]), t, sched, one, (i, t, k)) for k in range(plan.k)]
                row_values.append(score(z) - sum(score(a) for a in alts) / plan.k)
            else:  # the default action c in turn t, then the rest of the debate
                given_turn = Turn(role, plan.default_text, 0)
                after = taus[t] + role_ids + list(plan.default_ids)
                alts = [ref_rest(after, [*z[:t], given_turn], t + 1, sched, one, (i, t, 0))]
                row_values.append(score(z) - score(alts[0]))
            row_branches.append(alts)
        branches.append(row_branches)
        values.append(row_values)
    return debates, branches, values


def as_group(played, score) -> Group:
    rollouts = tuple(plain_turns(d) for d in played.debates)
    cfs = tuple(tuple(tuple(plain_turns(z) for z in per_t) for per_t in row) for row in played.branches)
    return Group(rollouts, score, ROLES, cfs)


def strip(turns) -> tuple[tuple[str, str, int], ...]:
    return tuple((t.role, t.text, t.n_tokens) for t in turns)


prompts_st = st.lists(st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=4), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(prompts_st, st.sampled_from([1, 3, 5]), st.integers(1, 4), st.integers(0, 10**6), st.integers(0, 6))
def test_coma_transcripts_and_baselines_are_the_references(prompts, n_turns, k, seed, answer):
    one, generate = fixed_generator(seed)
    calls = []
    sched = schedule(n_turns)
    played = play(
        prompts, sched, lambda c, keys: calls.append(len(c)) or generate(c, keys), decode, Plan("sample", k=k)
    )
    score = team_score(answer)
    debates, branches, values = reference(prompts, sched, one, Plan("sample", k=k), score)
    assert [strip(plain_turns(d)) for d in played.debates] == [strip(d) for d in debates]
    for row_played, row_ref in zip(played.branches, branches, strict=True):
        for per_t_played, per_t_ref in zip(row_played, row_ref, strict=True):
            assert [strip(plain_turns(z)) for z in per_t_played] == [strip(z) for z in per_t_ref]
    ours = shaped_values(as_group(played, score), "coma", {"counterfactuals": k})
    turn_values = _raw(as_group(played, score), "coma", {"counterfactuals": k})
    assert [v for row in turn_values for v in row] == pytest.approx(
        [v for row in values for v in row], abs=1e-12
    )
    # per role: the mean over the role's turns
    for row, raw in zip(ours, values, strict=True):
        for role in ROLES:
            own = [v for v, (r, _) in zip(raw, sched) if r == role]
            assert row[role] == pytest.approx(sum(own) / len(own) if own else 0.0, abs=1e-12)
    # batched: one generate call per position, holding every debate and every live branch
    n = len(prompts)
    assert calls == [n * (1 + k) + n * k * t for t in range(n_turns)]
    # the cost: tokens the branches generated (from the turn they replace on; earlier turns are z_i's)
    cost = [sum(x.n_tokens for t, per_t in enumerate(row) for z in per_t for x in z[t:]) for row in branches]
    assert played.counterfactual_tokens == cost


@settings(max_examples=60, deadline=None)
@given(
    prompts_st,
    st.sampled_from([1, 3, 5]),
    st.integers(0, 10**6),
    st.integers(0, 6),
    st.sampled_from(["", "4"]),
)
def test_difference_rewards_transcripts_and_values_are_the_references(prompts, n_turns, seed, answer, text):
    one, generate = fixed_generator(seed)
    sched = schedule(n_turns)
    plan = Plan("default", default_ids=tuple(int(x) for x in text.split()), default_text=text)
    played = play(prompts, sched, generate, decode, plan)
    score = team_score(answer)
    debates, branches, values = reference(prompts, sched, one, plan, score)
    for row_played, row_ref in zip(played.branches, branches, strict=True):
        for per_t_played, per_t_ref in zip(row_played, row_ref, strict=True):
            assert [strip(plain_turns(z)) for z in per_t_played] == [strip(z) for z in per_t_ref]
    assert _raw(as_group(played, score), "difference_rewards", {"default_text": text}) == values


def _raw(group: Group, name: str, params: dict):
    from sweepgen_trainer.debate.shaping import get, resolve

    return get(name).fn(group, **resolve(name, params))


def test_the_critic_is_credited_for_what_the_solver_says_after_it():
    """The audit's case: a re-scoring estimator gives the critic 0; regenerating ones do not.

    A fixed generator whose final answer repeats the critic's last token: the critic's turn decides G.
    """
    sched = schedule(3)
    answer = 5

    def generate(contexts, keys):
        out = []
        for context, (_row, turn, k) in zip(contexts, keys, strict=True):
            if context[-1] == 102:  # final answer: repeat the critic's last token
                critic_end = max(j for j, x in enumerate(context) if x == 101)
                out.append([context[-2] if context[-2] != 101 else 0] if critic_end else [0])
            elif context[-1] == 101:  # critic: right (5) on the debate, wrong (k) on the branches
                out.append([answer] if turn == -1 else [k])
            else:
                out.append([3])
        return out

    played = play([[1], [1]], sched, generate, decode, Plan("sample", k=2))
    group = as_group(played, team_score(answer))
    assert group.team_rewards() == [1.0, 1.0]
    coma = shaped_values(group, "coma", {"counterfactuals": 2})
    assert all(v["critic"] == 1.0 for v in coma)  # both sampled critiques (0, 1) lose the answer
    rescore = shaped_values(Group(group.rollouts, group.team_score), "coma_rescore", {})
    assert all(v["critic"] == 0.0 for v in rescore)
    default = play([[1], [1]], sched, generate, decode, Plan("default", default_ids=(), default_text=""))
    diff = shaped_values(as_group(default, team_score(answer)), "difference_rewards", {"default_text": ""})
    assert all(v["critic"] == 1.0 for v in diff)
    advantages = turn_advantages([group], "coma", {"counterfactuals": 2}, "none")[0]
    assert [a[1] for a in advantages] == [1.0, 1.0]
    assert all(math.isfinite(x) for a in advantages for x in a)


def test_a_strategy_without_its_counterfactuals_is_an_error():
    group = Group(((Turn("solver", "1"),),) * 2, team_score(1))
    with pytest.raises(ValueError, match="needs regenerated counterfactual transcripts"):
        shaped_values(group, "coma", {"counterfactuals": 2})


@settings(max_examples=60, deadline=None)
@given(prompts_st, st.sampled_from([1, 3]), st.integers(1, 3), st.integers(0, 10**6), st.integers(0, 6))
def test_scaled_coma_advantages_stay_bounded(prompts, n_turns, k, seed, answer):
    """Scaled by the pooled std of every team reward the estimate used, a binary reward's advantage is
    at most sqrt(N) in size (N rewards pooled), even when the debates themselves all scored alike."""
    _, generate = fixed_generator(seed)
    played = play(prompts, schedule(n_turns), generate, decode, Plan("sample", k=k))
    group = as_group(played, team_score(answer))
    pooled = len(prompts) * (1 + k * n_turns)
    for row in turn_advantages([group], "coma", {"counterfactuals": k}, "group")[0]:
        assert all(abs(a) <= math.sqrt(pooled) + 1e-9 for a in row)
