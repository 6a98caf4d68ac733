"""`check`: invalid specs, and generated files that are stale, edited, missing or orphaned."""

from __future__ import annotations

import pytest
from spec_support import write_project

from sweepgen.compile import api


@pytest.fixture
def rendered(project):
    spec = write_project(project, "grid: {training.seed: [1, 2]}\n")
    api.render([str(spec)])
    return spec


def kinds(report):
    return sorted((p.kind, p.path) for p in report.problems)


def test_clean_after_render(rendered):
    report = api.check([str(rendered)])
    assert report.problems == [] and report.files == 2 and report.specs == 1


def test_hand_edit_is_reported_with_a_diff(rendered, project):
    path = project / "generated/demo/seed2.yaml"
    path.write_text(path.read_text().replace("seed: 2", "seed: 3"))
    [problem] = api.check([str(rendered)]).problems
    assert (problem.kind, problem.path, problem.line) == ("edited", "generated/demo/seed2.yaml", 3)
    assert "-  seed: 3\n+  seed: 2\n" in problem.diff
    assert "(on disk)" in problem.diff and "(rendered)" in problem.diff


def test_spec_change_without_rerender_is_stale(rendered, project):
    write_project(
        project,
        "grid: {training.seed: [1, 2]}\n",
        base="base:\n  training: {seed: 42, lr: 0.5, group: 4}\n"
        "  streamer: {rollouts: 4, strategy: identity, params: {}}\n",
    )
    report = api.check([str(rendered)])
    assert kinds(report) == [
        ("changed", "specs/demo.yaml"),
        ("lock", "generated/demo/sweep.lock.json"),
        ("stale", "generated/demo/seed1.yaml"),
        ("stale", "generated/demo/seed2.yaml"),
    ]
    # one line names the cause and the command; the files behind it are details (shown with --diff)
    lead = report.problems[0]
    assert "2 of 2 file(s) in generated/demo/ stale" in lead.message
    assert "run `sweepgen render specs/demo.yaml`" in lead.message
    assert [p.detail for p in report.problems] == [False, True, True, True]


def test_the_run_state_file_is_not_an_orphan(rendered, project):
    """`sweepgen run` records its command line beside the lock (.sweepgen-run.json): run state."""
    (project / "generated/demo/.sweepgen-run.json").write_text('{"options": {}, "version": 1}\n')
    assert api.check([str(rendered)]).problems == []
    assert api.check([str(rendered)], full=True).problems == []
    (project / "generated/demo/.other.json").write_text("{}\n")
    assert kinds(api.check([str(rendered)])) == [("orphan", "generated/demo/.other.json")]


def test_template_change_is_stale(rendered, project):
    (project / "templates/t.yaml.j2").write_text("# v2\n{{ config | to_yaml }}\n")
    problems = api.check([str(rendered)]).problems
    assert {p.kind for p in problems} == {"changed", "stale", "lock"}
    assert [(p.kind, p.path) for p in problems if not p.detail] == [("changed", "templates/t.yaml.j2")]
    lock_problem = next(p for p in problems if p.kind == "lock")
    assert lock_problem.message == "lock file is out of date: templates/t.yaml.j2 changed"


def test_missing_and_orphaned_files(rendered, project):
    (project / "generated/demo/seed1.yaml").unlink()
    (project / "generated/demo/notes.txt").write_text("x")
    assert kinds(api.check([str(rendered)])) == [
        ("missing", "generated/demo/seed1.yaml"),
        ("orphan", "generated/demo/notes.txt"),
    ]


def test_a_file_dropped_from_the_spec_is_an_orphan_until_rerendered(rendered, project):
    write_project(project, "grid: {training.seed: [1]}\n")
    report = api.check([str(rendered)])
    assert ("orphan", "generated/demo/seed2.yaml") in kinds(report)
    assert "render" in next(p for p in report.problems if p.kind == "orphan").hint
    api.render([str(rendered)])
    assert api.check([str(rendered)]).problems == []


def test_sweep_folders_without_a_spec_are_orphans_when_checking_everything(rendered, project):
    (project / "generated/old_sweep").mkdir()
    report = api.check([str(rendered)], orphan_sweeps=True)
    assert kinds(report) == [("orphan", "generated/old_sweep")]
    assert api.check([str(rendered)]).problems == []  # only when all specs are checked


def test_invalid_spec_is_reported_with_its_location_and_others_still_checked(rendered, project):
    bad = write_project(
        project,
        "variants:\n  a: {training.sed: 1}\n",
        name="bad.yaml",
        head='sweepgen: 1\nname: other\ntemplate: ../templates/t.yaml.j2\noutput: "x.yaml"\n',
    )
    (project / "generated/demo/seed1.yaml").write_text("edited\n")
    report = api.check([str(bad), str(rendered)])
    assert report.invalid
    invalid = next(p for p in report.problems if p.kind == "invalid")
    assert (invalid.path, invalid.line, invalid.col) == ("specs/bad.yaml", 9, 7)
    assert "did you mean `training.seed`?" in invalid.hint
    assert any(p.kind == "edited" for p in report.problems)
