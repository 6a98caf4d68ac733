"""The published pre-commit hook, installed by pre-commit itself from this repository
(`pre-commit try-repo`), on a project whose specs do not live in specs/. pre-commit's own pip installs
the hook (a plain `pip install .` of the hook repository) from the session's wheels of its
dependencies (`precommit_wheels`), never from an index."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from precommit_support import git as _git
from precommit_support import hook_env as _env
from precommit_support import hook_repo as _hook_repo

REPO = Path(__file__).resolve().parents[2]

SPEC = """\
sweepgen: 1
name: lr
template: ../../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {training: {lr: 0.1}}
grid: {training.lr: [0.1, 0.2]}
"""


@pytest.mark.slow  # pre-commit builds a virtualenv and pip-installs sweepgen into it
def test_try_repo_checks_specs_in_a_non_default_layout(tmp_path, precommit_wheels):
    project = tmp_path / "project"
    (project / "experiments" / "rl").mkdir(parents=True)
    (project / "templates").mkdir()
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = project / "experiments" / "rl" / "lr.sweep.yaml"
    spec.write_text(SPEC)
    env = _env(tmp_path, precommit_wheels)
    subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec)], cwd=project, check=True)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    hooks = _hook_repo(tmp_path, env)

    def try_repo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "sweepgen-check", "--all-files"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    ok = try_repo()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "sweepgen check" in ok.stdout and "Passed" in ok.stdout
    # a hand edit of a generated file caught through the hook: in the installed hook's test below,
    # whose environment is built once (each try-repo call installs the hook into a store of its own)


@pytest.fixture(scope="module")
def released_hooks(tmp_path_factory: pytest.TempPathFactory, precommit_wheels: Path) -> Path:
    """A throwaway hook repository tagged v0.1.0, beside the PRE_COMMIT_HOME (``_env(base)``) its
    tests share: pre-commit keeps one environment per repository and rev, a plain `pip install .`
    of the tag, so the tests naming the tag build it once, not once each (try-repo, above, always
    builds its own in a store of its own)."""
    base = tmp_path_factory.mktemp("released")
    _git(_hook_repo(base, _env(base, precommit_wheels)), "tag", "v0.1.0")
    return base


GRPO_SPEC = """\
sweepgen: 1
name: grpo
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
schema: ../schemas/grpo.json     # exported with `sweepgen schema --export trl:GRPOConfig`
base: {learning_rate: 1.0e-6, loss_type: dapo, scale_rewards: group, beta: 0.0}
grid: {beta: [0.0, 0.04]}
"""


@pytest.mark.slow  # pre-commit builds its own virtualenv and pip-installs sweepgen into it
def test_installed_hook_checks_an_exported_trl_schema_without_trl(tmp_path, precommit_wheels, released_hooks):
    """A fresh repository with pre-commit installed, a spec validated against the committed export of
    TRL's GRPOConfig: pre-commit's own environment has neither torch nor trl, yet a bad `loss_type`
    key is blocked and a good commit passes. [tool.sweepgen] says where specs and output live."""
    env = _env(released_hooks, precommit_wheels)
    hooks = released_hooks / "hooks"
    project = tmp_path / "project"
    for folder in ("experiments", "templates", "schemas"):
        (project / folder).mkdir(parents=True)
    shutil.copy(REPO / "schemas" / "trl_grpo_config.json", project / "schemas" / "grpo.json")
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = project / "experiments" / "grpo.sweep.yaml"
    spec.write_text(GRPO_SPEC)
    (project / "pyproject.toml").write_text(
        '[tool.sweepgen]\nspecs = ["experiments/*.sweep.yaml"]\noutput = "out"\n'
    )
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: v0.1.0\n    hooks:\n      - id: sweepgen-check\n"
    )
    subprocess.run([sys.executable, "-m", "sweepgen", "render"], cwd=project, check=True, env=env)
    assert (project / "out" / "grpo" / "sweep.lock.json").exists()
    _git(project, "init", "-q")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, check=True, env=env)

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        _git(project, "add", "-A")
        return subprocess.run(
            ["git", "commit", "-m", message],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    good = commit("good")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "sweepgen check" in good.stdout + good.stderr and "Passed" in good.stdout + good.stderr
    # a hand edit of a generated file is caught through the hook, and the commit blocked
    out_file = project / "out" / "grpo" / "beta0.04.yaml"
    rendered = out_file.read_text()
    out_file.write_text(rendered.replace("0.04", "0.05"))
    edited = commit("edited")
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "out/grpo/beta0.04.yaml:1: edited: edited by hand" in edited.stdout + edited.stderr, edited.stdout
    out_file.write_text(rendered)
    # pre-commit's environment for the hook: no torch, no trl
    [python] = (released_hooks / "pc-home").glob("repo*/py_env-*/bin/python")
    probe = "import importlib.util as u; print([m for m in ('torch', 'trl') if u.find_spec(m)])"
    assert (
        subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
        == "[]"
    )
    spec.write_text(GRPO_SPEC.replace("loss_type: dapo", "loss_typ: dapo"))
    bad = commit("bad")
    out = bad.stdout + bad.stderr
    assert bad.returncode != 0, out
    assert "experiments/grpo.sweep.yaml:6:" in out, out
    assert "`loss_typ`: key not allowed by the schema (did you mean `loss_type`?)" in out, out
    assert "cannot import" not in out


@pytest.mark.slow  # pre-commit builds a virtualenv and pip-installs sweepgen into it
def test_the_hook_s_plain_install_trusts_a_lock_the_editable_install_wrote(
    tmp_path, precommit_wheels, released_hooks
):
    """`schema: sweepgen_trainer.config:RunConfig` rendered here (this checkout, imported from source)
    and checked by the hook that pre-commit installs from a release tag (a plain, non-editable pip
    install): the lock names the module by its source digest in both, so the hook passes."""
    env = _env(released_hooks, precommit_wheels)
    hooks = released_hooks / "hooks"
    project = tmp_path / "project"
    for rel in ("specs/happy_grpo_cpu.yaml", "templates/trainer_config.yaml.j2"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, project / rel)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: v0.1.0\n    hooks:\n      - id: sweepgen-check\n"
    )
    subprocess.run([sys.executable, "-m", "sweepgen", "render"], cwd=project, check=True, env=env)
    lock = json.loads((project / "generated" / "happy_grpo_cpu" / "sweep.lock.json").read_text())
    digest = lock["inputs"]["module:sweepgen_trainer.config"]
    assert len(digest) == 64 and "==" not in digest  # a source digest, never `sweepgen==0.1.0`
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Passed" in out and "out of date" not in out
