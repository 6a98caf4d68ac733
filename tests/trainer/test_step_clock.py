"""StepClock: the time/* columns of metrics.jsonl, on the CPU clock (no torch needed), driven by a
fake ``perf_counter`` so the expected seconds are exact on a loaded machine."""

from __future__ import annotations

import pytest

from sweepgen_trainer.training import step_clock
from sweepgen_trainer.training.step_clock import KEYS, StepClock

NOW = [0.0]


@pytest.fixture(autouse=True)
def fake_clock(monkeypatch):
    NOW[0] = 100.0
    monkeypatch.setattr(step_clock.time, "perf_counter", lambda: NOW[0])


def busy(seconds: float) -> None:
    NOW[0] += seconds


def one_step(clock: StepClock, *, generation: float, reward: float, loss: float) -> dict:
    """The order the trainer's hooks fire in during one optimizer step of one micro-batch."""
    clock.step_begin()
    clock.start("prepare")
    clock.timed("generation", busy)(generation)
    clock.timed("reward", busy)(reward)
    busy(0.01)  # TRL's own bookkeeping between them
    clock.stop("prepare")
    clock.start("loss_forward")
    busy(loss)
    clock.stop("loss_forward")
    clock.start("backward")
    busy(0.01)
    clock.stop("backward")
    clock.start("optimizer")
    clock.stop("optimizer")
    return clock.close()


def test_phases_are_measured_and_nested_phases_are_taken_out_of_scoring():
    clock = StepClock(cuda=False)
    row = one_step(clock, generation=0.05, reward=0.02, loss=0.03)
    assert set(row) == set(KEYS)
    assert row["time/generation_s"] == pytest.approx(0.05)
    assert row["time/reward_s"] == pytest.approx(0.02)
    assert row["time/loss_forward_s"] == pytest.approx(0.03)
    # what is left of input preparation: the bookkeeping, not generation or reward again
    assert row["time/scoring_other_s"] == pytest.approx(0.01)
    assert row["time/backward_s"] == pytest.approx(0.01)
    assert row["time/ref_logprobs_s"] == 0.0
    parts = sum(v for k, v in row.items() if k not in ("time/step_s", "time/logging_s"))
    assert parts == pytest.approx(row["time/step_s"])  # the phases cover the step
    assert row["time/logging_s"] is None  # no previous step in this session


def test_logging_is_the_previous_steps_and_a_new_step_starts_from_zero():
    clock = StepClock(cuda=False)
    one_step(clock, generation=0.05, reward=0.0, loss=0.0)
    busy(0.04)  # the first step's logging
    row = one_step(clock, generation=0.0, reward=0.0, loss=0.0)
    assert row["time/logging_s"] == pytest.approx(0.04)
    assert row["time/generation_s"] == 0.0  # the first step's 0.05 s is not carried over


def test_gradient_accumulation_sums_micro_steps_and_times_the_optimizer_from_the_last():
    clock = StepClock(cuda=False)
    clock.step_begin()
    for _ in range(3):
        clock.start("prepare")
        clock.stop("prepare")
        clock.start("loss_forward")
        busy(0.02)
        clock.stop("loss_forward")
        clock.start("optimizer")  # every micro-step's end restarts it
        busy(0.02)
    clock.stop("optimizer")
    row = clock.close()
    assert row["time/loss_forward_s"] == pytest.approx(0.06)
    assert row["time/optimizer_s"] == pytest.approx(0.02)


def test_a_stop_outside_a_step_is_ignored_and_the_wrapper_keeps_the_name():
    clock = StepClock(cuda=False)
    clock.stop("generation")  # e.g. an eval's generate before training starts

    def happy_count(completions: list[str]) -> list[float]:
        return [1.0 for _ in completions]

    timed = clock.timed("reward", happy_count)
    assert timed.__name__ == "happy_count"  # TRL names reward columns after it
    assert timed(["a", "b"]) == [1.0, 1.0]
