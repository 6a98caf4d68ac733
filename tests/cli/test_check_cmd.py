"""`sweepgen check` through the CLI: exit codes, default discovery, text/json/github formats."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.errors import UserError


@pytest.fixture
def rendered(project):
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    assert CliRunner().invoke(main, ["render", "specs/demo.yaml"]).exit_code == 0
    return project


def run(*args):
    return CliRunner().invoke(main, ["check", *args])


def test_ok_checks_every_spec_by_default(rendered):
    result = run()
    assert result.exit_code == 0, result.output
    assert "checked 1 spec(s), 2 generated file(s): ok" in result.output


def test_no_specs_found_is_a_usage_error(project):
    result = run()
    assert result.exit_code == 2 and "none found by the default globs (**/specs/**/*.yaml" in result.output


def test_hand_edit_exits_1_with_a_readable_diff(rendered):
    path = rendered / "generated/demo/seed1.yaml"
    path.write_text(path.read_text().replace("lr: 3.0e-06", "lr: 1.0e-05"))
    result = run()
    assert result.exit_code == 1
    assert "generated/demo/seed1.yaml:4: edited: edited by hand" in result.output
    assert "-  lr: 1.0e-05" not in result.output  # one line per problem; diffs on request
    shown = run("--diff")
    assert "-  lr: 1.0e-05\n+  lr: 3.0e-06\n" in shown.output


def test_invalid_spec_exits_2(rendered):
    write_project(rendered, "grid: {training.sed: [1, 2]}\n")
    result = run("specs/demo.yaml")
    assert result.exit_code == 2
    assert "specs/demo.yaml:8:23: error: override path `training.sed` does not exist" in result.output


def test_json_format(rendered):
    (rendered / "generated/demo/extra.txt").write_text("x")
    result = run("--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False and data["specs"] == 1 and data["files"] == 2
    assert (
        data["problems"][0]["kind"] == "orphan" and data["problems"][0]["path"] == "generated/demo/extra.txt"
    )


def test_github_format_prints_annotations(rendered):
    path = rendered / "generated/demo/seed2.yaml"
    path.write_text(path.read_text() + "extra: 1\n")
    write_project(
        rendered,
        "grid: {training.seed: [1, 2]}\n",
        name="bad.yaml",
        head="sweepgen: 1\nname: bad\ntemplate: ../templates/t.yaml.j2\noutput: x.yaml\nsweeps: 1\n",
    )
    result = run("--format", "github")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert (
        "::error file=specs/bad.yaml,line=5,col=1,title=sweepgen check%3A invalid::"
        "invalid: unknown key `sweeps`" in lines[0]
    )
    assert any(
        line.startswith(
            "::error file=generated/demo/seed2.yaml,line=10,title=sweepgen check%3A edited::"
            "edited: edited by hand"
        )
        for line in lines
    )


def test_pre_commit_hook_runs_check_with_no_arguments_like_ci(tmp_path, monkeypatch):
    """The hook runs `sweepgen check` alone (tests/cli/test_precommit_hook.py runs it through pre-commit),
    so it finds the specs the way CI does: [tool.sweepgen], else the default globs."""
    from pathlib import Path

    import yaml

    from sweepgen import settings

    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    check = next(h for h in hooks if h["id"] == "sweepgen-check")
    assert check["entry"] == "sweepgen check" and check["pass_filenames"] is False
    assert "files" not in check  # a template edit changes no spec file: the hook runs anyway
    specs = ("specs/a.yaml", "exp/specs/b.yml", "experiments/rl/c.sweep.yaml", "d.sweep.yml")
    others = ("templates/t.yaml.j2", "generated/x/a.yaml", "configs/base.yaml", "generated/specs/e.yaml")
    for rel in specs + others:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x: 1\n")
    monkeypatch.chdir(tmp_path)
    assert settings.load().spec_files() == sorted(specs)
    (tmp_path / "pyproject.toml").write_text('[tool.sweepgen]\nspecs = ["configs/*.yaml"]\noutput = "out"\n')
    found = settings.load()
    assert found.spec_files() == ["configs/base.yaml"] and found.output_root() == "out"
    monkeypatch.chdir(tmp_path / "experiments")  # from a subfolder: the same pyproject.toml
    assert settings.load().spec_files() == [str(tmp_path / "configs/base.yaml")]
    (tmp_path / "pyproject.toml").write_text("[tool.sweepgen]\nspec = []\n")
    with pytest.raises(UserError, match="unknown key"):
        settings.load()


def test_check_with_no_arguments_reads_tool_sweepgen(tmp_path, monkeypatch):
    """Symptom 4: specs under experiments/*.sweep.yaml, output under out/: `check` alone finds them
    (CI and the hook run exactly that), calls no folder of theirs an orphan, and flags a real one."""
    from pathlib import Path

    (tmp_path / "experiments").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = (
        "sweepgen: 1\nname: lr\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "base: {lr: 0.1}\ngrid: {lr: [0.1, 0.2]}\n"
    )
    (tmp_path / "experiments/lr.sweep.yaml").write_text(spec)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sweepgen]\nspecs = ["experiments/*.sweep.yaml"]\noutput = "out"\n'
    )
    monkeypatch.chdir(tmp_path)
    unrendered = run()  # found through [tool.sweepgen]: its files are missing under out/
    assert unrendered.exit_code == 1 and "out/lr/lr0.1.yaml: missing" in unrendered.output
    rendered = CliRunner().invoke(main, ["render"])
    assert rendered.exit_code == 0, rendered.output
    assert Path("out/lr/sweep.lock.json").exists() and not Path("generated").exists()
    ok = run()
    assert ok.exit_code == 0, ok.output
    Path("out/old_sweep").mkdir()
    orphan = run()
    assert orphan.exit_code == 1 and "out/old_sweep: orphan" in orphan.output


@pytest.mark.parametrize(
    ("pyproject", "at", "says"),
    [
        ('[tool.sweepgen]\nspecs = ["s/*.yaml"]\noutptu = "gen"\n', "3:1", "unknown key(s) outptu"),
        ('[tool.sweepgen]\n  output = "../x"\n', "2:3", "leads outside the project"),
        ('[tool.sweepgen]\noutput = ".git"\n', "2:1", "lies in git's own .git folder"),
        ('[tool.sweepgen]\noutput = "a/.GIT/b"\n', "2:1", "lies in git's own .git folder"),
        ('[tool.sweepgen]\nspecs = ["/etc/*.yaml"]\n', "2:1", "leads outside the project"),
        ("[project]\nname = 'p'\n[tool.sweepgen]\nspecs = 3\n", "4:1", "non-empty list of glob"),
        ("[tool.sweepgen]\nlimits = 3\n", "2:1", "limits must be a table"),
        ("[tool.sweepgen]\nlimits = {variantz = 3}\n", "2:11", "unknown limit 'variantz'"),
        ('[tool.sweepgen]\nlimits = {variants = "3"}\n', "2:11", "must be a number, not the string '3'"),
        ("[tool.sweepgen.limits]\nvariants = 1e99\n", "2:1", "above the hard maximum"),
        ("[tool]\nsweepgen = 3\n", "2:1", "must be a table"),
        ('[tool.sweepgen]\nspecs = ["a" "b"]\n', "2:14", "not valid TOML"),
    ],
)
def test_a_wrong_tool_sweepgen_is_exit_2_at_its_line_and_column(project, pyproject, at, says):
    """Every error in [tool.sweepgen] names pyproject.toml's line and column, as a spec's errors do;
    a limit written as a string is refused, never read as the number it spells."""
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    (project / "pyproject.toml").write_text(pyproject)
    result = run()
    assert result.exit_code == 2, result.output
    # a [tool.sweepgen] error ends the command (stderr); a limit's is the spec's problem (the report)
    first = [line for line in result.output.splitlines() if ": error: " in line][0]
    assert first.startswith(f"pyproject.toml:{at}: error: ") and says in first, result.output
    assert "Traceback" not in result.output
