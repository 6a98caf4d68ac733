"""Every shell command of README.md and docs/*.md is run by a test, or listed here with the reason it
cannot run on a CI machine (issue 35: documentation that cannot drift).

The commands are extracted from the docs' fenced blocks: every line of a `bash`/`sh`/`shell`/`console`
block, and the `sweepgen ...` or `$ ...` lines of a block without a language (a README walkthrough, a
transcript's command line). ``PLAN`` gives each one its fate: run by a named test, as written, in a
scratch project (``Run``), or not run, with the reason (``Skip``). A command added to the docs without
an entry here, or an entry whose command left the docs, fails the first test below in milliseconds.

Stand-ins, each marked where it is made: the TRL path runs a stand-in `trl`
(tests/test_first_hour.py's FAKE_TRL); the report walkthrough reads runs written by
tests/report_support.make_shaping; the diff examples compare two small scripts written here.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from report_support import make_shaping
from test_docs_run import readme_commands

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^[ \t]*```([a-z]*)\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
SHELL = {"bash", "sh", "shell", "console"}
DEADLINE_S = 900  # one command on a loaded 2-core machine (torch's first import included)


@dataclass(frozen=True)
class Run:
    test: str  # the test in this repository that runs the command as written


@dataclass(frozen=True)
class Skip:
    reason: str


def shell_commands() -> list[tuple[str, str]]:
    """(doc, command) for every documented shell command, continuation lines joined, comments and
    a leading `$ ` dropped, in document order."""
    out: list[tuple[str, str]] = []
    for doc in DOCS:
        for lang, body in FENCE.findall(doc.read_text(encoding="utf-8")):
            if lang not in SHELL and lang != "":
                continue
            for raw in body.replace("\\\n", " ").splitlines():
                line = raw.strip()
                if lang == "" and not line.startswith(("$ ", "sweepgen ")):
                    continue  # a file listing, a JSON shape or a command's printed output
                line = re.sub(r"\s+#.*$", "", line.removeprefix("$ ")).strip()
                if line and not line.startswith("#"):
                    out.append((doc.name, line))
    return list(dict.fromkeys(out))


DEMO = "tests/test_docs_shell.py::test_the_demo_and_run_md_commands_run_as_written"
TRL = "tests/test_docs_run.py::test_the_readme_trl_commands_run_as_written"
SLURM_DRY = "tests/test_docs_run.py::test_the_slurm_docs_dry_run_runs_as_written"
SHAPING = "tests/test_docs_shell.py::test_the_run_md_report_walkthrough_prints_its_table"
DIFF = "tests/test_docs_shell.py::test_the_diff_examples_run_as_written"
RAY = (
    "a line of ray_job.sh, a script the page shows for the user's own Slurm nodes (ray start/stop "
    "across nodes): saved and run by Slurm there, not a command line"
)
SLURM_SUBMIT = (
    "submits a real job array (sbatch): needs a Slurm cluster; the submission path runs against a "
    "real single-node slurmctld in tests/run/test_slurm_cluster.py (marker slurm)"
)
SYNOPSIS = "a synopsis ([optional] flags), not one command; its spelling is parsed by test_docs_commands.py"

PLAN: dict[tuple[str, str], Run | Skip] = {
    ("README.md", "bash scripts/demo.sh"): Skip(
        "creates .venv and pip-installs (scripts/setup.sh: network, minutes); the demo's sweepgen lines "
        f"are run as written by {DEMO}"
    ),
    ("README.md", "bash scripts/test.sh"): Skip("the whole suite itself: CI runs it"),
    ("README.md", "pip install -e ."): Skip(
        "installs into the environment; tests/test_packaging.py builds and installs the package"
    ),
    ("README.md", "pip install -e '.[train]'"): Skip("installs torch and trl: network, minutes"),
    ("README.md", "pip install -e '.[slurm]'"): Skip("installs submitit into the environment"),
    ("README.md", "pip install -e '.[diff]'"): Skip("installs omegaconf into the environment"),
    ("README.md", "sweepgen init --from configs/grpo.yaml --schema trl:grpo"): Run(TRL),
    (
        "README.md",
        "sweepgen init --from configs/grpo.yaml --name grpo_grid --grid beta=0.0,0.04 "
        "--grid loss_type=grpo,dr_grpo --seeds 3 --schema trl:grpo",
    ): Run(TRL),
    ("README.md", "sweepgen schema --export trl:grpo -o schemas/grpo.json"): Run(TRL),
    (
        "DIFF.md",
        "sweepgen diff a.sh b.sh --allow 'commands.*.actor_rollout_ref.actor.optim.lr' --allow 'env.LR'",
    ): Run(DIFF),
    ("DIFF.md", "sweepgen diff a.sh b.sh --allow '**.--learning_rate'"): Run(DIFF),
    ("RUN.md", "sweepgen render specs/happy_grpo_cpu.yaml"): Run(DEMO),
    ("RUN.md", "sweepgen run generated/happy_grpo_cpu --jobs 2"): Run(DEMO),
    ("RUN.md", "sweepgen report generated/happy_grpo_cpu"): Run(DEMO),
    ("RUN.md", "sweepgen report generated/happy_grpo_cpu --html"): Run(DEMO),
    (
        "RUN.md",
        'sweepgen run generated/ppo --gpus 0,1,2,3,4,5,6,7    --command "python -m my_rl.train_ppo '
        '--config {config} --save-dir {run_dir}"',
    ): Skip(
        "eight GPUs and the user's own my_rl package; --gpus packing runs with stand-in GPUs in "
        "tests/run/test_local.py"
    ),
    (
        "RUN.md",
        "sweepgen report generated/shaping --metric eval_acc --compare identity_lr1e-05 --no-plot",
    ): Run(SHAPING),
    (
        "RUN.md",
        "sweepgen run generated/shaping --metric eval_acc --until-decided --compare identity_lr1e-05",
    ): Skip(
        "trains the shaping sweep's runs in rounds until the sequential test decides (GPU-sized runs); "
        "the rounds run with stand-in runs in tests/run/test_run_until_decided.py"
    ),
    ("slurm.md", "sweepgen render specs/my_sweep.yaml"): Run(SLURM_DRY),
    ("slurm.md", "sweepgen run generated/my_sweep --executor slurm --dry-run"): Run(SLURM_DRY),
    ("slurm.md", "sweepgen run generated/my_sweep --executor slurm"): Skip(SLURM_SUBMIT),
    ("slurm.md", "sweepgen status generated/my_sweep [--wait] [--format json]"): Skip(SYNOPSIS),
    ("slurm.md", "sweepgen cancel generated/my_sweep [--only RUN]"): Skip(SYNOPSIS),
    ("slurm.md", "sweepgen run generated/my_sweep --executor slurm --rerun-failed"): Skip(SLURM_SUBMIT),
    ("slurm.md", "set -e"): Skip(RAY),
    ("slurm.md", 'if [ "$NODE_RANK" = 0 ]; then'): Skip(RAY),
    ("slurm.md", 'ray start --head --port="$MASTER_PORT"'): Skip(RAY),
    ("slurm.md", "sleep 60"): Skip(RAY),
    ("slurm.md", "ray stop"): Skip(RAY),
    ("slurm.md", "else"): Skip(RAY),
    ("slurm.md", 'ray start --address="$MASTER_ADDR:$MASTER_PORT" --block'): Skip(RAY),
    ("slurm.md", "fi"): Skip(RAY),
    (
        "slurm.md",
        'sweepgen run generated/verl_sweep --executor slurm --command "bash ray_job.sh {config}"',
    ): Skip(SLURM_SUBMIT),
    ("slurm.md", 'sweepgen run generated/rlhf_sweep --executor slurm --command "bash {config}"'): Skip(
        SLURM_SUBMIT
    ),
    ("slurm.md", "sweepgen run generated/grpo_sweep --executor slurm --dry-run"): Skip(
        "needs a 2-node x 4-GPU bundled-trainer sweep the page describes in prose only; the same dry "
        f"run (sbatch header, step, torchrun line) runs on my_sweep in {SLURM_DRY}"
    ),
    ("slurm.md", "sweepgen run generated/grpo_sweep --executor slurm"): Skip(SLURM_SUBMIT),
}
# ray_job.sh's long verl line: matched by its start (the whole line is 200+ characters of Hydra)
RAY_VERL = ("slurm.md", "python3 -m verl.trainer.main_ppo ")


def plan_of(doc: str, command: str) -> Run | Skip | None:
    if doc == RAY_VERL[0] and command.startswith(RAY_VERL[1]):
        return Skip(RAY)
    return PLAN.get((doc, command))


COMMANDS = shell_commands()


def test_every_documented_shell_command_is_run_or_listed_with_a_reason():
    unplanned = [f"{d}: {c}" for d, c in COMMANDS if plan_of(d, c) is None]
    assert not unplanned, "documented commands with no test and no reason (add them to PLAN):\n" + "\n".join(
        unplanned
    )
    stale = [f"{d}: {c}" for d, c in PLAN if (d, c) not in COMMANDS]
    assert not stale, "PLAN entries the docs no longer hold:\n" + "\n".join(stale)
    assert all(p.reason for p in PLAN.values() if isinstance(p, Skip))
    for test in {p.test for p in PLAN.values() if isinstance(p, Run)}:
        path, name = test.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), test


def test_the_readme_trl_commands_are_the_ones_test_docs_run_runs():
    planned = [c for d, c in COMMANDS if plan_of(d, c) == Run(TRL)]
    assert planned and set(planned) <= set(readme_commands()), (planned, readme_commands())


def planned_for(test: str) -> list[str]:
    return [c for d, c in COMMANDS if plan_of(d, c) == Run(test)]


def sweepgen(project: Path, line: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``line`` as written (`sweepgen ...` is this checkout's CLI under this interpreter)."""
    argv = [sys.executable, "-m", "sweepgen", *shlex.split(line)[1:]]
    env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=DEADLINE_S)


def demo_lines() -> list[str]:
    """scripts/demo.sh's `sweepgen` lines, as written."""
    text = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith("sweepgen ")]


def demo_project(tmp_path: Path) -> Path:
    """A scratch project holding the repository's demo spec and templates, unchanged."""
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    shutil.copytree(ROOT / "templates", project / "templates")
    shutil.copy(ROOT / "specs" / "happy_grpo_cpu.yaml", project / "specs" / "happy_grpo_cpu.yaml")
    return project


def same_but_header(rendered: Path, committed: Path) -> bool:
    """The same file apart from its header line, which names the spec path relative to where
    render ran; `sweepgen check` in CI compares the committed bytes."""
    return rendered.read_text().splitlines()[1:] == committed.read_text().splitlines()[1:]


@pytest.mark.train
@pytest.mark.slow
def test_the_demo_and_run_md_commands_run_as_written(tmp_path: Path):
    """RUN.md's walkthrough and scripts/demo.sh's sweepgen lines, in order, in one scratch project,
    on the README demo as it is (specs/happy_grpo_cpu.yaml: 5 seeds x 2 betas x 60 steps): every
    line exits 0, none prints a traceback or a warning (the demo's happy path has none); the
    rendered configs are the committed ones; every run finishes and learns the happy reward; the
    report's --compare gives a verdict (5 seeds a side) and writes its table and plot. The demo's
    sweep is run once, here, for both the docs and the learning check."""
    project = demo_project(tmp_path)
    env = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "SWEEPGEN_CACHE": str(tmp_path / "cache")}
    lines = list(dict.fromkeys([*planned_for(DEMO), *demo_lines()]))
    assert "sweepgen run generated/happy_grpo_cpu --jobs 2" in lines and len(lines) >= 6, lines
    compare = "sweepgen report generated/happy_grpo_cpu --compare beta0.0 --html"
    assert compare in lines, lines
    printed = {}
    for line in lines:
        done = sweepgen(project, line, env)
        said = f"{line} -> {done.returncode}\n{done.stdout}{done.stderr}"
        assert done.returncode == 0, said
        assert "Traceback" not in said and "warning" not in said.lower(), said
        printed[line] = done.stdout
        if line == "sweepgen render specs/happy_grpo_cpu.yaml":
            rendered = sorted((project / "generated" / "happy_grpo_cpu").glob("*.yaml"))
            assert len(rendered) == 10, rendered
            for path in rendered:
                assert same_but_header(path, ROOT / "generated" / "happy_grpo_cpu" / path.name), path.name
    runs = project / "runs" / "happy_grpo_cpu"
    names = sorted(p.parent.name for p in runs.glob("*/summary.json"))
    assert names == sorted(f"happy_s{s}_b{b}" for s in range(5) for b in ("0.0", "0.02"))
    for name in names:
        summary = json.loads((runs / name / "summary.json").read_text())
        assert summary["steps"] == 60 and summary["final_reward"] > 0.7, (name, summary)
    # 5 seeds a side: Welch's test can decide, so the verdict is a verdict, never "cannot decide"
    verdicts = [ln for ln in printed[compare].splitlines() if ln.strip().startswith("beta0.02")]
    assert verdicts, printed[compare]
    assert verdicts[0].split()[1] in ("better", "worse", "no")
    with (runs / "report.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 10
    assert (runs / "report.html").is_file() and (runs / "report.png").stat().st_size > 0


def test_the_run_md_report_walkthrough_prints_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """RUN.md's `report generated/shaping` transcript: the command as written, against the runs
    make_shaping writes (the transcript says so); the rows the page prints are the rows it gets."""
    (line,) = planned_for(SHAPING)
    monkeypatch.chdir(tmp_path)  # make_shaping renders into the working folder's generated/
    make_shaping(tmp_path)
    done = sweepgen(tmp_path, line)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (ROOT / "docs" / "RUN.md").read_text(encoding="utf-8")
    row = re.compile(r"^\s*(identity|coma|noisy)_lr\S+\s{2,}(baseline|better|worse|no evidence)\s{2,}\d")
    shown = [ln for ln in text.splitlines() if row.match(ln)]
    assert len(shown) == 6, shown
    printed = [" ".join(ln.split()) for ln in done.stdout.splitlines()]
    for row in shown:
        assert " ".join(row.split()) in printed, f"RUN.md shows\n{row}\nbut report printed\n{done.stdout}"


# Stand-ins, made here: two launch scripts that differ where the docs' --allow globs allow.
VERL = """export LR={lr}
python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.optim.lr={lr} trainer.nnodes=1
"""
HF = "torchrun --nproc_per_node 8 train.py --learning_rate {lr} --per_device_train_batch_size 4\n"


def test_the_diff_examples_run_as_written(tmp_path: Path):
    """DIFF.md's two `diff a.sh b.sh --allow ...` lines: exit 0 when the scripts differ only where
    the globs allow, and exit 1 for the same scripts without the globs (the gate is what passed)."""
    lines = planned_for(DIFF)
    assert len(lines) == 2, lines
    for line, script in zip(lines, (VERL, HF)):
        (tmp_path / "a.sh").write_text(script.format(lr="1e-6"))
        (tmp_path / "b.sh").write_text(script.format(lr="2e-6"))
        done = sweepgen(tmp_path, line)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        ungated = sweepgen(tmp_path, "sweepgen diff a.sh b.sh")
        assert ungated.returncode == 1, ungated.stdout + ungated.stderr
