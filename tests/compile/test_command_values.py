"""Values `run --command` pastes into a command line (run dir, run name, variant, output path) are
refused at render, at the spec's line, when a shell or an option parser would act on them: a hostile
value never reaches generated/ or the lock (`run` checks every lock entry again)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_support import HEAD, write_project

from sweepgen.cli import main
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.pipeline import compile_spec
from sweepgen.compile.spec.model import SAFE_NAME
from sweepgen.compile.spec.variants.plain_value import PLAIN_VALUE
from sweepgen.errors import ValidationError
from sweepgen.run.core.plan.tasks import load_sweep

BODY = """\
variants:
  a: {}
  b: {streamer.strategy: coma}
allow: [streamer.strategy]
"""
HOSTILE = [
    "$(touch pwned)",
    "`touch pwned`",
    "x; touch pwned",
    "x && touch pwned",
    "a b",
    "it's",
    'say"hi',
    "x|y",
    "x>y",
    "${HOME}",
    "~user",
    "x*",
    "x\ty",
]
LEADING = ["-rf", "--output=", ",x", "=x", "+x", "@x", "%x", ":x"]  # an option, or not a plain start


def _spec(project: Path, run_dir: str) -> Path:
    head = HEAD + f"run_dir: {_yaml_str(run_dir)}\n"
    return write_project(project, BODY, head=head)


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


@pytest.mark.parametrize(
    "template",
    ["runs/{{ variant.name }}/" + v for v in HOSTILE] + [v + "{{ variant.name }}" for v in LEADING],
)
def test_a_run_dir_a_command_would_act_on_is_refused_at_the_spec_line(project: Path, template: str) -> None:
    spec = _spec(project, template)
    with pytest.raises(ValidationError, match="characters a command would act on") as err:
        compile_spec(str(spec))
    loc = err.value.location
    lines = spec.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("run_dir:"))
    assert loc is not None and (loc.line, loc.col) == (at + 1, len("run_dir: ") + 1)


def test_render_and_check_exit_2_naming_the_spec_line_and_write_nothing(project: Path) -> None:
    spec = _spec(project, "runs/{{ variant.name }}$(touch ../pwned)")
    runner = CliRunner()
    for command in ("render", "check"):
        result = runner.invoke(main, [command, "specs/demo.yaml"])
        assert result.exit_code == 2, result.output
        shown = r"specs/demo\.yaml:5:10: error: run_dir '.*' of variant 'a' holds characters"
        assert re.search(shown, result.output)
        assert "Traceback" not in result.output
    assert not (project / "generated").exists()
    assert spec.is_file()


def test_a_plain_run_dir_still_renders_and_reaches_the_lock(project: Path) -> None:
    spec = _spec(project, "runs/{{ sweep.name }}/lr=0.1,b@x%y:{{ variant.name }}+-_.z")
    plan = compile_spec(str(spec))
    model = lock.parse(plan.lock_bytes, "lock")
    expected = ["runs/demo/lr=0.1,b@x%y:a+-_.z", "runs/demo/lr=0.1,b@x%y:b+-_.z"]
    assert [e.run_dir for e in model.files] == expected


@pytest.mark.parametrize("output_dir", ["/scratch/runs/x", "runs/my run", "${oc.env:HOME}/runs", "-x"])
def test_an_output_dir_no_command_may_carry_renders_but_is_never_the_locks_run_dir(
    project: Path, output_dir: str
) -> None:
    # the trainer's own config value: rendered as written (an absolute path is a config's business),
    # but the lock records no run dir a --command placeholder would read, and `run` refuses it
    body = BODY + f"derived:\n  +output_dir: {_yaml_str(output_dir + '/{{ variant.name }}')}\n"
    spec = write_project(project, body)
    runner = CliRunner()
    assert runner.invoke(main, ["render", "specs/demo.yaml"]).exit_code == 0
    raw = (project / "generated" / "demo" / lock.LOCK_NAME).read_bytes()
    assert [e.run_dir for e in lock.parse(raw, "lock").files] == [None, None]
    assert output_dir.encode() in (project / "generated" / "demo" / "a.yaml").read_bytes()
    result = runner.invoke(main, ["run", "generated/demo", "--command", "true {config} {run_dir}"])
    assert result.exit_code == 2, result.output
    assert not (project / "runs").exists()
    assert spec.is_file()


def test_a_plain_output_dir_is_still_the_locks_run_dir(project: Path) -> None:
    body = BODY + 'derived:\n  +output_dir: "runs/{{ variant.name }}"\n'
    write_project(project, body)
    assert CliRunner().invoke(main, ["render", "specs/demo.yaml"]).exit_code == 0
    sweep = load_sweep(Path("generated/demo"), command=("true", "{config}", "{run_dir}"))
    assert [t.argv for t in sweep.tasks] == [
        ("true", "generated/demo/a.yaml", "runs/a"),
        ("true", "generated/demo/b.yaml", "runs/b"),
    ]


@settings(deadline=None)
@given(st.lists(st.from_regex(SAFE_NAME, fullmatch=True), min_size=1, max_size=4))
def test_every_safe_name_and_output_path_is_a_plain_value(parts: list[str]) -> None:
    # variant names, run names and output paths obey SAFE_NAME at render: run's rule must hold for
    # them too, or a spec render accepts would be refused by every `run --command`
    assert PLAIN_VALUE.fullmatch("/".join(parts))


@pytest.mark.parametrize(
    ("first", "second"),
    [("Big", "big"), ("./x", "x/"), ("x//y", "x/y"), ("x/./y", "X/Y")],
)
def test_run_dirs_that_are_one_folder_are_refused_at_the_spec_line(
    project: Path, first: str, second: str
) -> None:
    # one folder on a case-insensitive disk (macOS, Windows), or on every disk: two runs would share it
    body = BODY.replace("allow: [streamer.strategy]", "allow: [streamer.strategy, tag]")
    body = body.replace(
        "b: {streamer.strategy: coma}", f"b: {{streamer.strategy: coma, +tag: {_yaml_str(second)}}}"
    )
    body = body.replace("a: {}", f"a: {{+tag: {_yaml_str(first)}}}")
    spec = write_project(project, body, head=HEAD + 'run_dir: "runs/{{ tag }}"\n')
    with pytest.raises(ValidationError, match="have run_dirs .* which are one folder") as err:
        compile_spec(str(spec))
    assert err.value.location is not None and err.value.location.line == 5


def test_a_run_dir_folder_name_longer_than_a_file_system_allows_is_refused_at_render(project: Path) -> None:
    spec = _spec(project, "runs/" + "a" * 256 + "/{{ variant.name }}")
    with pytest.raises(ValidationError, match="has a folder name of 256 bytes") as err:
        compile_spec(str(spec))
    assert err.value.location is not None and err.value.location.line == 5
    compile_spec(str(_spec(project, "runs/" + "a" * 200 + "/{{ variant.name }}")))  # the longest kept
