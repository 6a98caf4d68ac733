"""Every file a spec reads lies inside its project: templates, includes, `{% include %}`, schema files.

The project is the git work tree holding the spec; outside git, the folder holding both the spec and
the output root (never the filesystem root or the home folder), else the spec's folder. Symlinks are
resolved before the test, so a link inside the project that points out of it is refused too. Each
refusal is exit 2 naming the spec line, and nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.compile.spec import project as project_mod
from sweepgen.compile.spec.model import load_spec

SECRET = "API_TOKEN=hunter2\n"


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the project holding a secret the spec must not be able to read."""
    folder = tmp_path_factory.mktemp("outside")
    (folder / "creds.yaml").write_text("training: {seed: 1}\n# " + SECRET)
    (folder / "secret.j2").write_text(SECRET)
    (folder / "schema.json").write_text('{"type": "object"}')
    return folder


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _fails(args: list[str], root: Path, where: str, message: str) -> str:
    before = _snapshot(root)
    result = CliRunner().invoke(main, args)
    out = result.output
    assert result.exit_code == 2, out
    assert f"{where}: error: " in out and message in out, out
    assert "Traceback" not in out and SECRET.strip() not in out, out
    assert _snapshot(root) == before, "a refused spec must not write anything"
    return out


def test_a_symlinked_template_pointing_outside_is_refused(project, outside):
    spec = write_project(project)
    link = project / "templates" / "t.yaml.j2"
    link.unlink()
    link.symlink_to(outside / "secret.j2")
    for command in ("render", "check"):
        _fails(
            [command, str(spec.relative_to(project))],
            project,
            "specs/demo.yaml:3:11",
            "lies outside the project",
        )


def test_jinja_include_through_a_symlink_is_refused(project, outside):
    write_project(project, template="a: 1\n{% include 'inc.j2' %}\n")
    (project / "templates" / "inc.j2").symlink_to(outside / "secret.j2")
    _fails(
        ["render", "specs/demo.yaml"],
        project,
        "specs/demo.yaml:3:11",
        "template 'inc.j2' lies outside the project",
    )


def test_jinja_include_inside_the_project_still_works(project):
    write_project(project, template="a: 1\n{% include 'inc.j2' %}\n")
    (project / "templates" / "inc.j2").write_text("b: {{ training.seed }}\n")
    result = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert result.exit_code == 0, result.output
    assert "b: 42" in (project / "generated/demo/base.yaml").read_text()


def test_includes_and_schema_files_outside_are_refused(project, outside):
    rel = os.path.relpath(outside / "creds.yaml", project / "specs")
    write_project(project, base=f"base:\n  include: [{rel}]\n")
    _fails(["check", "specs/demo.yaml"], project, "specs/demo.yaml:6:13", "included file")
    rel_schema = os.path.relpath(outside / "schema.json", project / "specs")
    write_project(project, f"schema: {rel_schema}\n")
    _fails(["render", "specs/demo.yaml"], project, "specs/demo.yaml:8:9", "schema file")


def test_an_include_symlinked_out_of_the_project_is_refused(project, outside):
    (project / "configs").mkdir()
    (project / "configs" / "model.yaml").symlink_to(outside / "creds.yaml")
    write_project(project, base="base:\n  include: [../configs/model.yaml]\n")
    _fails(["render", "specs/demo.yaml"], project, "specs/demo.yaml:6:13", "lies outside the project")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_template_or_include_is_an_error_not_a_hang(project):
    spec = write_project(project)
    fifo = project / "templates" / "t.yaml.j2"
    fifo.unlink()
    os.mkfifo(fifo)
    _fails(
        ["render", str(spec.relative_to(project))], project, "templates/t.yaml.j2", "is not a regular file"
    )
    (project / "configs").mkdir()
    os.mkfifo(project / "configs" / "fifo.yaml")
    fifo.unlink()  # before write_project writes the template: opening a FIFO to write would block
    write_project(project, base="base:\n  include: [../configs/fifo.yaml]\n")
    _fails(["render", "specs/demo.yaml"], project, "specs/demo.yaml:6:13", "included file")


def test_the_git_work_tree_is_the_project(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sweeps" / "specs").mkdir(parents=True)
    (repo / "shared").mkdir()
    (repo / "shared" / "t.j2").write_text("{{ config | to_yaml }}\n")
    spec = repo / "sweeps" / "specs" / "s.yaml"
    spec.write_text("sweepgen: 1\nname: s\ntemplate: ../../shared/t.j2\noutput: o.yaml\nbase: {a: 1}\n")
    # the output root elsewhere does not matter: the work tree decides
    assert load_spec(str(spec), str(tmp_path / "elsewhere" / "generated")).project == str(repo.resolve())
    assert project_mod.find_root(str(spec), "/generated") == str(repo.resolve())


def test_outside_git_the_folder_holding_spec_and_output_root_is_the_project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "p" / "specs").mkdir(parents=True)
    spec = str(tmp_path / "p" / "specs" / "s.yaml")
    real = str(tmp_path.resolve())
    assert project_mod.find_root(spec, str(tmp_path / "p" / "generated")) == real + "/p"
    assert project_mod.find_root(spec, str(tmp_path / "p" / "out" / "gen")) == real + "/p"
    # an output root at the filesystem root or the home folder does not widen the project
    assert project_mod.find_root(spec, "/generated") == real + "/p/specs"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert project_mod.find_root(spec, str(tmp_path / "generated")) == real + "/p/specs"
