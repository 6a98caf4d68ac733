"""`report` without --metric after `trl sft` / `trl dpo` runs: the trainer's natural objective from
what the runs logged (sweepgen/run/report/trl_objective.py), said on every output; never a guess for
a command that is not TRL's. The logs are TRL 1.16's own trainer_state.json from a 2-step run on the
tiny test model (tests/fixtures/trl_logs/make_logs.py wrote them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.fs import filenames
from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.report import trl_objective

LOGS = Path(__file__).parent.parent / "fixtures" / "trl_logs"


def runs(root: Path, trainer: str, command: list[str]) -> Path:
    """Four finished runs (two learning rates, two seeds) of ``command``, each with TRL's own
    trainer_state.json, every logged number scaled a little per run."""
    state = json.loads((LOGS / trainer / "trainer_state.json").read_text())
    folder = root / "runs" / trainer
    for i, (lr, seed) in enumerate([(1e-5, 0), (1e-5, 1), (1e-4, 0), (1e-4, 1)]):
        run = folder / f"lr{lr}_s{seed}"
        (run / "checkpoint-2").mkdir(parents=True)
        (run / filenames.CONFIG).write_text(f"learning_rate: {lr}\nseed: {seed}\n")
        scale = 1.0 - 0.05 * i  # accuracies stay in [0, 1]
        history = [
            {k: v * scale if k not in ("step", "epoch") else v for k, v in h.items()}
            for h in state["log_history"]
        ]
        (run / "checkpoint-2" / "trainer_state.json").write_text(
            json.dumps({**state, "log_history": history})
        )
        write_status(run, RunStatus(RunState.FINISHED, "local", exit_code=0, command=command, done_file=None))
    return folder


def report(folder: Path, *args: str):
    return CliRunner().invoke(main, ["report", str(folder), "--no-plot", *args])


@pytest.mark.parametrize(
    ("trainer", "command", "metric", "mode"),
    [
        ("sft", ["trl", "sft", "--config", "c.yaml"], "eval_loss", "min"),
        (
            "dpo",
            ["accelerate", "launch", "-m", "trl.scripts.dpo", "--config", "c.yaml"],
            "eval_rewards/accuracies",
            "max",
        ),
    ],
)
def test_a_trl_run_is_reported_by_its_trainers_objective_and_says_which(
    cli_cwd, trainer, command, metric, mode
):
    folder = runs(cli_cwd, trainer, command)
    text = report(folder)
    assert text.exit_code == 0, text.output
    said = " ".join(text.output.split())
    assert f"TRL `{trainer}` runs" in said and f"reporting `{metric}`, {mode} is better" in said
    assert "--metric NAME" in said
    assert f"({mode} is better (metric and direction chosen by sweepgen" in said  # the best-run line
    body = json.loads((folder / filenames.STATISTICS_JSON).read_text())
    assert body["metric"] == metric and "chosen by sweepgen" in body["direction"]
    assert f"TRL `{trainer}` runs" in body["chosen"]
    machine = report(folder, "--format", "json")
    assert machine.exit_code == 0 and f"reporting `{metric}`" in " ".join(machine.stderr.split())


def test_without_an_eval_the_training_loss_and_never_a_guess_for_another_command(cli_cwd):
    assert trl_objective.choose("sft", ["loss", "entropy"]) == "loss"
    assert trl_objective.choose("reward", ["loss", "accuracy"]) == "accuracy"
    assert trl_objective.choose("grpo", ["reward", "loss"]) is None  # GRPO: its reward, as before
    assert trl_objective.trainer([["trl", "sft"], ["trl", "dpo"]]) is None  # mixed: no guess
    from sweepgen.compile.schema.validate import _trl_named  # the spec's schema, where no command says

    assert [_trl_named(r) for r in ("trl:sft", "trl:SFTConfig", "trl.trainer.dpo_config:DPOConfig")] == [
        "sft",
        "sft",
        "dpo",
    ]
    assert _trl_named("mytrl:SFTConfig") is None and _trl_named("trainer.config:RunConfig") is None
    assert trl_objective.trainer([["bash", "-c", "cd x && trl kto --config c.yaml"]]) == "kto"
    assert trl_objective.trainer([["python", "/venv/lib/trl/scripts/sft.py", "--config", "c"]]) == "sft"
    folder = runs(cli_cwd, "sft", ["python", "train.py", "--config", "c.yaml"])
    plain = report(folder)
    assert plain.exit_code == 2, plain.output  # not TRL's command: still asks for --metric
    assert "no logged metric is a reward" in plain.stderr


SFT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "learning_rate": {"type": "number"},
        "seed": {"type": "integer"},
        "output_dir": {"type": "string"},
    },
}


@pytest.mark.parametrize("schema", ["trl:sft", "sft.json"])  # sft.json: exported from trl:sft (`init`)
def test_a_spec_naming_trl_sft_is_reported_by_sfts_objective_when_its_command_is_the_persons_own(
    cli_cwd, monkeypatch, schema
):
    """`schema: trl:sft` (or the file `init --schema trl:sft` exports) with `--command 'python my_sft.py
    --config {config}'`: the recorded command names no TRL trainer, so the lock's record of the
    schema says which (it once asked for --metric)."""
    from sweepgen.compile.schema import trl_cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(cli_cwd / "cache"))
    monkeypatch.setattr(trl_cli, "trl_version", lambda: "9.9.9")
    real = trl_cli.installed_version
    monkeypatch.setattr(trl_cli, "installed_version", lambda p: "9.9.9" if p == "trl" else real(p))
    stamp = {"source": "trl:sft", "format": trl_cli.CACHE_FORMAT, "package": "trl", "version": "9.9.9"}
    stamp |= {"accelerate": real("accelerate"), "transformers": real("transformers")}
    cache = cli_cwd / "cache" / "sweepgen" / "schemas" / "trl-9.9.9"
    cache.mkdir(parents=True)
    (cache / "sft.json").write_text(json.dumps({**SFT_SCHEMA, "x-sweepgen": stamp}))
    (cli_cwd / "sft.json").write_text(json.dumps({**SFT_SCHEMA, "x-sweepgen": stamp}))
    (cli_cwd / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (cli_cwd / "s.yaml").write_text(
        "sweepgen: 1\nname: s\ntemplate: t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        f"schema: {schema}\n"
        "base: {learning_rate: 1.0e-5, seed: 0, output_dir: x}\n"
        "run_name: 'lr{{ learning_rate }}_s{{ seed }}'\n"
        "derived: {output_dir: 'runs/lr{{ learning_rate }}_s{{ seed }}'}\n"
        "grid: {learning_rate: [1.0e-5, 1.0e-4], seed: [0, 1]}\n"
    )
    rendered = CliRunner().invoke(main, ["render", "s.yaml"])
    assert rendered.exit_code == 0, rendered.output
    lock = json.loads((cli_cwd / "generated" / "s" / filenames.LOCK).read_text())
    assert lock["report"]["trl"] == "sft"
    state = json.loads((LOGS / "sft" / "trainer_state.json").read_text())
    for i, entry in enumerate(lock["files"]):
        run = cli_cwd / entry["run_dir"]
        run.mkdir(parents=True)
        history = [
            {k: v * (1 - 0.05 * i) if k not in ("step", "epoch") else v for k, v in h.items()}
            for h in state["log_history"]
        ]
        (run / "trainer_state.json").write_text(json.dumps({**state, "log_history": history}))
        command = ["python", "my_sft.py", "--config", f"generated/s/{entry['path']}"]
        write_status(run, RunStatus(RunState.FINISHED, "local", exit_code=0, command=command, done_file=None))
    text = report(cli_cwd / "generated" / "s")
    assert text.exit_code == 0, text.output
    said = " ".join(text.output.split())
    assert "TRL `sft` runs (the spec's `schema: trl:X`)" in said and "reporting `eval_loss`, min" in said
