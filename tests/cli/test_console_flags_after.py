"""-q / -v after the command (`sweepgen render SPEC -q`) mean what they mean before it; a command
with its own -v (check) keeps it."""

from __future__ import annotations

from click.testing import CliRunner

from sweepgen.cli import _hoist_console_flags, main


def test_flags_after_the_command_move_before_it():
    assert _hoist_console_flags(["render", "specs/a.yaml", "-q"]) == ["-q", "render", "specs/a.yaml"]
    assert _hoist_console_flags(["run", "x", "--verbose", "--jobs", "2"]) == [
        "--verbose",
        "run",
        "x",
        "--jobs",
        "2",
    ]
    assert _hoist_console_flags(["check", "-v"]) == ["check", "-v"]  # check's own --verbose
    assert _hoist_console_flags(["check", "-q"]) == ["-q", "check"]
    assert _hoist_console_flags(["run", "x", "--", "-q"]) == ["run", "x", "--", "-q"]
    assert _hoist_console_flags(["--help"]) == ["--help"]


def test_render_with_q_last_is_quiet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{{ config | to_yaml }}\n")
    (tmp_path / "specs" / "d.yaml").write_text(
        'sweepgen: 1\nname: d\ntemplate: ../templates/t.j2\noutput: "{{ variant.name }}.yaml"\nbase: {a: 1}\n'
    )
    loud = CliRunner().invoke(main, ["render", "specs/d.yaml"])
    quiet = CliRunner().invoke(main, ["render", "specs/d.yaml", "-q"])
    assert loud.exit_code == 0 and quiet.exit_code == 0, quiet.output
    assert "No such option" not in quiet.output
    assert len(quiet.output) < len(loud.output)
