"""A spec lowers its limits and raises them only up to a ceiling; past it, only the person running
sweepgen decides (`--limit KEY=VALUE`, `[tool.sweepgen] limits`). A total budget bounds every
evaluation of a spec together."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_support import HEAD, write_project

from sweepgen.cli import main
from sweepgen.compile.output.pipeline import compile_spec
from sweepgen.compile.spec import limits
from sweepgen.errors import SpecError, TemplateError, UserError

GRID = "grid:\n  training.seed: [1, 2, 3]\n  training.group: [4, 8]\n"


@pytest.fixture(autouse=True)
def _no_command_line_limits():
    limits.set_command_line({})
    yield
    limits.set_command_line({})


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    "key, value",
    [
        ("eval_seconds", "1.0e9"),
        ("yaml_nodes", "1000000000000"),
        ("variants", "5000000"),
        ("input_bytes", "1073741824"),
        ("output_bytes", "1073741824"),
        ("total_seconds", "86400"),
    ],
)
def test_a_spec_cannot_raise_its_own_limit_past_the_ceiling(project, key, value):
    spec = write_project(project, GRID, head=HEAD + f"limits: {{{key}: {value}}}\n")
    result = cli("render", str(spec))
    assert result.exit_code == 2, result.output
    assert "specs/demo.yaml:5:" in result.stderr and f"limits.{key}" in result.stderr
    assert f"--limit {key}=" in result.stderr and "[tool.sweepgen]" in result.stderr
    assert "Traceback" not in result.output
    assert not (project / "generated").exists()


def test_a_spec_may_raise_a_limit_up_to_the_ceiling_and_lower_any(project):
    spec = write_project(project, GRID, head=HEAD + "limits: {eval_seconds: 30, variants: 6}\n")
    assert len(compile_spec(str(spec)).files) == 6
    low = write_project(project, GRID, head=HEAD + "limits: {variants: 5}\n")
    with pytest.raises(SpecError, match="more than the limit of 5") as info:
        compile_spec(str(low))
    assert "--limit variants=N" in (info.value.hint or "")


def test_the_command_line_raises_the_ceiling_for_that_command_only(project):
    spec = write_project(project, GRID, head=HEAD + "limits: {eval_seconds: 100}\n")
    assert cli("render", "--limit", "eval_seconds=100", str(spec)).exit_code == 0
    assert cli("check", str(spec)).exit_code == 2  # the next command has its own command line
    assert cli("check", "--limit", "eval_seconds=100", str(spec)).exit_code == 0


def test_the_runners_value_is_the_default_when_the_spec_says_nothing(project):
    spec = write_project(project, GRID)
    result = cli("render", "--limit", "variants=5", str(spec))
    assert result.exit_code == 2 and "more than the limit of 5" in result.stderr, result.output
    (project / "pyproject.toml").write_text("[tool.sweepgen]\nlimits = {variants = 5}\n")
    result = cli("render", str(spec))
    assert result.exit_code == 2 and "more than the limit of 5" in result.stderr, result.output
    # the command line wins over pyproject.toml
    assert cli("render", "--limit", "variants=6", str(spec)).exit_code == 0


def test_pyproject_ceilings_bind_the_spec_and_are_checked(project):
    (project / "pyproject.toml").write_text("[tool.sweepgen]\nlimits = {eval_seconds = 2}\n")
    spec = write_project(project, GRID, head=HEAD + "limits: {eval_seconds: 3}\n")
    result = cli("render", str(spec))
    assert result.exit_code == 2 and "pyproject.toml" in result.stderr, result.output
    bad_tables = ("{evals = 2}", "{variants = -1}", "{variants = 1e300}", "{eval_seconds = nan}", '"x"')
    for bad in (*bad_tables, "{eval_seconds = 1" + "0" * 400 + "}"):
        (project / "pyproject.toml").write_text(f"[tool.sweepgen]\nlimits = {bad}\n")
        result = cli("render", str(spec))
        assert result.exit_code == 2 and "pyproject.toml" in result.stderr, (bad, result.output)
        assert "Traceback" not in result.output


def test_a_pyproject_raises_time_no_further_than_a_spec_and_sizes_to_a_maximum(project):
    """pyproject.toml comes with the checkout: `eval_seconds = 1e9` there let a pull request's template
    loop run for ever in CI. Past its maximum it is exit 2 at once; the command line still goes past."""
    spec = write_project(project, GRID)
    for table, key in (
        ("{eval_seconds = 1e9}", "eval_seconds"),
        ("{total_seconds = 601}", "total_seconds"),
        ("{input_bytes = 1073741824}", "input_bytes"),
        ("{yaml_nodes = 40000001}", "yaml_nodes"),
    ):
        (project / "pyproject.toml").write_text(f"[tool.sweepgen]\nlimits = {table}\n")
        result = cli("render", str(spec))
        assert result.exit_code == 2, (table, result.output)
        assert f"limits.{key}" in result.stderr and f"--limit {key}=" in result.stderr, result.output
    (project / "pyproject.toml").write_text(
        "[tool.sweepgen]\nlimits = {eval_seconds = 30, yaml_nodes = 40000000}\n"
    )
    assert cli("render", str(spec)).exit_code == 0
    (project / "pyproject.toml").write_text("[tool.sweepgen]\n")
    assert cli("render", "--limit", "eval_seconds=1e9", str(spec)).exit_code == 0


@pytest.mark.parametrize(
    "arg",
    ["variants", "variants=", "variants=x", "evals=3", "variants=0", "eval_seconds=inf", "variants=1e300"],
)
def test_a_bad_limit_on_the_command_line_is_exit_2(project, arg):
    spec = write_project(project, GRID)
    result = cli("render", "--limit", arg, str(spec))
    assert result.exit_code == 2 and "--limit" in result.stderr, result.output
    assert "Traceback" not in result.output


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_parse_pair_gives_a_known_key_and_a_positive_number_or_a_user_error(text):
    try:
        key, value = limits.parse_pair(text)
    except UserError as err:
        assert err.location is not None and err.location.path == "--limit"
        return
    assert (key in limits.CEILINGS or key in limits.RUNNER_ONLY) and value > 0
    assert isinstance(value, int) or key in ("eval_seconds", "total_seconds", "command_seconds")


def test_every_limit_key_has_a_ceiling_at_or_above_its_default():
    assert set(limits.CEILINGS) == set(limits.KEYS)
    for key in limits.KEYS:
        assert limits.CEILINGS[key] >= getattr(limits.DEFAULTS, key)


def test_the_total_budget_ends_a_spec_whose_variants_each_stay_within_their_own(project):
    # each variant loops for well under its own 5 s (100,000 turns: milliseconds), but 400 of them
    # together take seconds, far past a 0.5 s total (20,000 turns each came to ~1 s on a quiet
    # machine: the test passed only under load)
    template = (
        "{% for i in range(100) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{{ config | to_yaml }}"
    )
    grid = "grid:\n  training.seed: [" + ", ".join(str(i) for i in range(400)) + "]\n"
    spec = write_project(project, grid, head=HEAD + "limits: {total_seconds: 0.5}\n", template=template)
    started = time.monotonic()
    with pytest.raises(TemplateError, match=r"together ran longer than 0.5 s \(`limits.total_seconds`\)"):
        compile_spec(str(spec))
    assert time.monotonic() - started < 30


def _slow_specs(project, count: int, own: str = "limits: {total_seconds: 0.4}\n") -> list[str]:
    """``count`` specs of hundreds of short loops, each ending at its ``own`` total budget."""
    template = (
        "{% for i in range(100) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{{ config | to_yaml }}"
    )
    grid = "grid:\n  training.seed: [" + ", ".join(str(i) for i in range(400)) + "]\n"
    out = []
    for n in range(count):
        head = HEAD.replace("name: demo", f"name: demo{n}") + own
        out.append(str(write_project(project, grid, head=head, template=template, name=f"demo{n}.yaml")))
    return out


@pytest.mark.parametrize("command, own", [("check", "limits: {total_seconds: 0.4}\n"), ("render", "")])
def test_one_command_bounds_every_spec_together_not_each_alone(project, command, own):
    """A pull request adding many specs added up their `total_seconds` in one `check`: the command's
    own budget (`--limit command_seconds`, the command line's alone) ends the specs past it (render
    stops at its first error: there the first spec, within its own 120 s, runs into it)."""
    specs = _slow_specs(project, 4, own)
    result = cli(command, "--limit", "command_seconds=0.6", *specs)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "every spec's together, ran longer than 0.6 s" in result.output, result.output
    assert "--limit command_seconds=N" in result.output, result.output
    assert not (project / "generated").exists()


def test_the_command_budget_has_a_default_and_a_pyproject_cannot_set_it(project, monkeypatch):
    monkeypatch.setattr(limits, "COMMAND_SECONDS", 0.6)
    specs = _slow_specs(project, 4)
    result = cli("check", *specs)
    assert result.exit_code == 2 and "ran longer than 0.6 s" in result.output, result.output
    (project / "pyproject.toml").write_text("[tool.sweepgen]\nlimits = {command_seconds = 1e9}\n")
    result = cli("check", specs[0])
    assert result.exit_code == 2 and "set on the command line only" in result.output, result.output
    assert "pyproject.toml:2:" in result.output and "--limit command_seconds=N" in result.output
