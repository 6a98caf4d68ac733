"""`run --command "trl grpo --config {config} --beta 0.1"` on a sweep over beta: the command line
wins over the config in TRL (and argparse, Hydra), so every run would train with 0.1 while the
report compares beta0.0 with beta0.04. Refused before any run starts, exit 2, nothing run."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main


def _sweep(root: Path) -> None:
    configs = {
        f"beta{b}-seed{s}": {"output_dir": f"runs/t/beta{b}-seed{s}", "trainer": {"beta": b}, "seed": s}
        for b in (0.0, 0.04)
        for s in (1, 2)
    }
    values = {n: {"trainer.beta": c["trainer"]["beta"], "seed": c["seed"]} for n, c in configs.items()}
    make_config_sweep(root, configs, sweep="t", values=values)


def _run(*extra: str, shell: bool = False) -> tuple[int, str]:
    touch = f'{shlex.quote(sys.executable)} -c \'import sys; open(sys.argv[1] + ".ran", "w")\' {{config}}'
    command = " ".join([touch, *extra])
    args = ["run", "generated/t", "--command", command, *(["--shell"] if shell else [])]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "extra",
    [("--beta", "0.1"), ("--beta=0.1",), ("--seed", "3"), ("trainer.beta=0.1",), ("+trainer.beta=0.1",)],
    ids=["flag", "flag=", "seed", "hydra", "hydra+"],
)
def test_a_command_setting_a_value_the_runs_differ_in_is_refused_before_any_run(tmp_path, monkeypatch, extra):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path)
    code, output = _run(*extra)
    assert code == 2, output
    assert f"--command sets `{extra[0]}` for every run" in output and "Traceback" not in output
    assert not list(Path("generated/t").glob("*.ran"))  # nothing ran


def test_a_shell_command_is_read_word_by_word_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path)
    code, output = _run("--learning_rate", "1e-5", "&&", "true", "--beta", "0", shell=True)
    assert code == 2 and "--command sets `--beta`" in output, output


def test_values_the_runs_share_or_fill_per_run_are_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path)
    code, output = _run(
        "--learning_rate", "1e-5", "--output_dir", "{run_dir}", "--run_name={name}", "beta=0.1"
    )
    assert code == 0, output  # `beta=0.1` is no path the runs differ in (theirs is trainer.beta)
    assert len(list(Path("generated/t").glob("*.ran"))) == 4


@pytest.mark.parametrize(
    "extra",
    [
        ("--output_dir", "runs/x"),
        ("--output-dir=runs/x",),
        ("--logging_dir", "tb"),
        ("trainer.output_dir=out",),
    ],
    ids=["flag", "flag=", "logging", "hydra"],
)
def test_a_command_giving_every_run_one_folder_is_refused_before_any_run(tmp_path, monkeypatch, extra):
    """`trl dpo --config {config} --output_dir runs/x`: the command line wins over each run's config,
    so all runs wrote their checkpoints into runs/x over each other's (and resumed from another run's);
    before, it started."""
    _refused_before_any_run(tmp_path, monkeypatch, extra, "all 4 runs would write their checkpoints")


def _refused_before_any_run(
    root: Path, monkeypatch: pytest.MonkeyPatch, extra: tuple[str, ...], why: str
) -> None:
    monkeypatch.chdir(root)
    _sweep(root)
    code, output = _run(*extra)
    assert code == 2, output
    said = " ".join(output.split())
    assert f"--command sets `{extra[0]}`" in said and why in said
    assert "Traceback" not in said and not list(Path("generated/t").glob("*.ran"))


def test_a_command_setting_a_searched_value_is_refused_before_any_trial(tmp_path):
    """`--x 0.3` on a search over x: every trial would train at 0.3 while the study records the
    points it sampled."""
    from search_support import COMMAND, sweepgen, write_search_project

    write_search_project(tmp_path, {"n": 2})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", f"{COMMAND} --x 0.3")
    assert done.returncode == 2, done.stderr
    assert "--command sets `--x` for every run" in done.stderr and "Traceback" not in done.stderr
    assert not Path(tmp_path / "runs").exists()  # no trial ran


def test_a_word_holding_spaces_is_one_value_not_flags(tmp_path, monkeypatch):
    """`--system_prompt "Answer, then --beta"` (one argv word) sets a prompt, not --beta."""
    from sweepgen.run.start import command_overrides

    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path)
    from sweepgen.run.core.plan.tasks import load_sweep

    tasks = load_sweep(Path("generated/t"), command=("x", "{config}")).tasks
    command_overrides.check(("python", "t.py", "{config}", "--system_prompt", "Answer, then --beta"), tasks)


def test_a_command_giving_every_trial_one_folder_is_refused_before_any_trial(tmp_path):
    from search_support import COMMAND, sweepgen, write_search_project

    write_search_project(tmp_path, {"n": 2})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", "generated/fake_search", "--command", f"{COMMAND} --output_dir out")
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert "every trial would write their checkpoints and logs into that one folder" in said
    assert not Path(tmp_path / "runs").exists() and "Traceback" not in said


@pytest.mark.parametrize(
    "extra", [("--resume_from_checkpoint", "runs/old/checkpoint-8"), ("--resume-from-checkpoint=runs/old",)]
)
def test_a_command_resuming_every_run_from_one_checkpoint_is_refused_before_any_run(
    tmp_path, monkeypatch, extra
):
    """`trl dpo --config {config} --resume_from_checkpoint X`: every run loads X's optimizer (its
    learning rate) and random state, so the runs' seeds and learning rates are not what they ran."""
    _refused_before_any_run(tmp_path, monkeypatch, extra, "all 4 runs would load that one checkpoint")


def test_a_command_resuming_each_run_from_its_own_folder_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _sweep(tmp_path)
    code, output = _run("--resume_from_checkpoint", "{run_dir}/checkpoint-8")
    assert code == 0, output


@pytest.mark.parametrize(
    "extra",
    [
        ("--beta", "{config_dir}"),
        ("--beta", "{{name}}"),
        ("--seed={{config}}",),
        ("--output_dir", "{{run_dir}}"),
    ],
    ids=["config_dir", "literal-braces", "literal-config", "literal-run-dir"],
)
def test_a_value_with_braces_but_no_per_run_placeholder_is_one_value_for_every_run(
    tmp_path, monkeypatch, extra
):
    """One rule for "filled per run" in both refusals: a placeholder run fills with each run's own
    value. `{config_dir}` is the sweep's folder and `{{...}}` literal braces (a JSON value): the
    same for every run. Before, any `{` in a value the runs differ in let it pass, and `{{run_dir}}`
    (a literal `{run_dir}`) passed as a folder per run."""
    _refused_before_any_run(tmp_path, monkeypatch, extra, "for every run")
