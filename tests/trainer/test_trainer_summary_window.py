"""The truncated fraction is a metric, in summary.json, with a warning above
50 %; summary_window counts generation steps (num_iterations k: the window spans k·N optimizer steps)."""

from __future__ import annotations

import pytest
from trainer_support import read_jsonl, tiny_dict

from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.run import run
from sweepgen_trainer.rundir.outputs import summarize, truncation_warning
from sweepgen_trainer.training.step_clock import KEYS

pytestmark = pytest.mark.train


def cfg(tmp_path, window: int, k: int) -> RunConfig:
    return RunConfig.model_validate(
        tiny_dict(
            tmp_path / "run",
            grpo={"num_iterations": k},
            logging={"summary_window": window, "save_steps": 1000},
        )
    )


def test_the_window_counts_generation_steps(tmp_path):
    # k = 2: steps 1, 3, 5 generate; 2, 4, 6 reuse their batch and log no reward.
    metrics = [
        {"step": s, "reward_mean": (0.1 * s if s % 2 else None), "truncated_fraction": (0.25 * (s % 4 == 1))}
        for s in range(1, 7)
    ]
    s = summarize(metrics, [], cfg(tmp_path, window=2, k=2))
    assert s["final_reward"] == pytest.approx((0.3 + 0.5) / 2)  # the last 2 generation steps, not 5 and None
    assert s["summary_window"] == 2 and s["summary_window_steps"] == 4  # steps 3..6
    assert s["truncated_fraction"] == pytest.approx((0.0 + 0.25) / 2)  # steps 3 and 5
    s1 = summarize(metrics, [], cfg(tmp_path, window=10, k=2))
    assert s1["summary_window_steps"] == 6 and s1["final_reward"] == pytest.approx(0.3)


def test_warning_above_half_truncated(tmp_path):
    plain = RunConfig.model_validate(tiny_dict(tmp_path / "run", grpo={"max_completion_length": 16}))
    assert truncation_warning({"truncated_fraction": 0.5}, plain) is None
    assert truncation_warning({"truncated_fraction": None}, plain) is None
    line = truncation_warning({"truncated_fraction": 0.97}, plain)
    assert line.startswith("warning: 97% of the completions") and "max_completion_length = 16" in line
    assert "max_turn_tokens" not in line


def debate_config(tmp_path, max_turn_tokens: int) -> RunConfig:
    return RunConfig.model_validate(
        tiny_dict(
            tmp_path / "run",
            data={"source": "builtin:arithmetic"},
            grpo={"num_generations": 4, "batch_size": 8, "max_completion_length": 64, "max_steps": 2},
            debate={"max_turns": 3, "max_turn_tokens": max_turn_tokens},
            reward_shaping={"strategy": "identity"},
        )
    )


def test_a_debates_warning_names_the_turn_limit_not_the_completion_length(tmp_path):
    # A debate's last token is its final turn's: it is cut by debate.max_turn_tokens; the transcript
    # never reaches grpo.max_completion_length (refused at start), so blaming it would send the user
    # to the wrong knob.
    line = truncation_warning({"truncated_fraction": 0.9}, debate_config(tmp_path, 5))
    assert line.startswith("warning: 90% of the completions")
    assert "debate.max_turn_tokens = 5" in line and "max_completion_length = 64" not in line


def test_a_real_debate_cut_by_its_turn_limit_is_warned_about_that_limit(tmp_path, tiny_cache):
    # The untrained tiny model babbles without EOS: 2 tokens a turn cut nearly every final turn.
    lines: list[str] = []
    summary = run(debate_config(tmp_path, 2), echo=lines.append)
    assert summary["truncated_fraction"] > 0.5
    cut = [line for line in lines if line.startswith("warning:") and "were cut" in line]
    assert len(cut) == 1 and "debate.max_turn_tokens = 2" in cut[0]


def test_a_real_run_logs_and_summarizes_the_truncated_fraction(tmp_path, tiny_cache):
    # 4 new tokens from an untrained tiny model: nearly every completion is cut.
    config = RunConfig.model_validate(
        tiny_dict(tmp_path / "run", grpo={"max_steps": 2, "max_completion_length": 4})
    )
    lines: list[str] = []
    summary = run(config, echo=lines.append)
    rows = read_jsonl(tmp_path / "run" / "metrics.jsonl")
    assert all(0.0 <= r["truncated_fraction"] <= 1.0 for r in rows)
    assert summary["truncated_fraction"] == pytest.approx(sum(r["truncated_fraction"] for r in rows) / 2)
    assert summary["truncated_fraction"] > 0.5
    assert any(
        line.startswith("warning:") and "cut at grpo.max_completion_length = 4" in line for line in lines
    )
    # where each step's time went: every phase logged, together the whole step
    for row in rows:
        assert set(KEYS) <= set(row)
        phases = [row[k] for k in KEYS if k not in ("time/step_s", "time/logging_s")]
        assert all(v >= 0 for v in phases) and row["time/generation_s"] > 0
        assert sum(phases) <= row["time/step_s"] * 1.001
    assert rows[0]["time/logging_s"] is None and rows[1]["time/logging_s"] > 0


def test_the_debate_summary_uses_the_same_generation_step_window(tmp_path):
    import json
    from types import SimpleNamespace

    from sweepgen_trainer.debate.trainer import DebateGRPOTrainer

    metrics = tmp_path / "metrics.jsonl"
    rows = [
        {
            "step": s,
            "reward_mean": 0.1 * s if s % 2 else None,
            "debate/team_accuracy": 0.1 * s if s % 2 else None,
        }
        for s in range(1, 7)
    ]
    metrics.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fake = SimpleNamespace(
        run_dir=SimpleNamespace(metrics=metrics),
        run_config=SimpleNamespace(logging=SimpleNamespace(summary_window=2)),
        _strategy="identity",
    )
    debate = DebateGRPOTrainer.summary_extras(fake)["debate"]  # type: ignore[arg-type]
    assert debate["team_accuracy"] == pytest.approx((0.3 + 0.5) / 2)  # steps 3 and 5, as final_reward


def test_expected_truncation_is_no_warning_but_a_debates_cut_turn_still_is(tmp_path):
    # logging.truncation: expected says the task fills max_completion_length (the demo's "say happy as
    # often as fits"): no line, while the summary keeps the fraction; a debate's turns cut at
    # max_turn_tokens are scored on cut text whatever the config says, so that warning stays.
    fill = RunConfig.model_validate(
        tiny_dict(tmp_path / "run", grpo={"max_completion_length": 16}, logging={"truncation": "expected"})
    )
    assert truncation_warning({"truncated_fraction": 1.0}, fill) is None
    debate = debate_config(tmp_path, 5).model_copy(
        update={"logging": fill.logging.model_copy(update={"truncation": "expected"})}
    )
    assert "debate.max_turn_tokens = 5" in truncation_warning({"truncated_fraction": 0.9}, debate)


def test_truncation_takes_only_warn_or_expected(tmp_path):
    with pytest.raises(ValueError, match="truncation"):
        RunConfig.model_validate(tiny_dict(tmp_path / "run", logging={"truncation": "ignore"}))


def test_the_summary_records_expected_truncation_for_report(tmp_path):
    metrics = [{"step": 1, "reward_mean": 0.5, "truncated_fraction": 1.0}]
    plain = RunConfig.model_validate(tiny_dict(tmp_path / "run"))
    fill = RunConfig.model_validate(tiny_dict(tmp_path / "run", logging={"truncation": "expected"}))
    assert "truncation" not in summarize(metrics, [], plain)
    assert summarize(metrics, [], fill)["truncation"] == "expected"
    debate = debate_config(tmp_path, 5).model_copy(update={"logging": fill.logging})
    assert "truncation" not in summarize(metrics, [], debate)  # report still warns about a debate's cut
