"""Every swept value reaches the files (compile/output/verify/dead_axes.py): an axis whose variants render
the same file apart from their names and run folders is an error at the axis's line, since their
runs would be one run twice; an axis the template writes anywhere, even under a condition, passes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

SPEC = """\
sweepgen: 1
name: s
template: ../templates/t.yaml.j2
output: "{{{{ variant.name }}}}.yaml"
derived:
  output_dir: "runs/{{{{ variant.name }}}}"
base:
  lr: 1
  beta: 0.0
  seed: 0
  output_dir: null
{axes}
"""


def _render(root: Path, template: str, axes: str) -> tuple[int, str]:
    (root / "specs").mkdir(exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "specs" / "s.yaml").write_text(SPEC.format(axes=axes))
    (root / "templates" / "t.yaml.j2").write_text(template)
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    return result.exit_code, result.output


WRITES_LR = "lr: {{ config.lr }}\noutput_dir: {{ config.output_dir }}\n"


@pytest.mark.parametrize(
    "axes, line, dead",
    [
        ("grid:\n  beta: [0.0, 0.04]", 13, "beta"),
        ("grid:\n  lr: [1, 2]\n  seed: [0, 1, 2]", 14, "seed"),  # seeds the file never sets: one run x3
        ("allow: [lr]\nvariants:\n  a: {}\n  b: {lr: 2}\ngrid:\n  beta: [0.0, 0.04]", 17, "beta"),
    ],
)
def test_an_axis_the_template_never_writes_stops_the_render_at_its_line(project, axes, line, dead):
    code, out = _render(project, WRITES_LR, axes)
    assert code == 2, out
    assert out.startswith(f"specs/s.yaml:{line}:3: error: axis `{dead}` changes nothing the template writes")
    assert "one run twice" in out and "Traceback" not in out
    assert not (project / "generated").exists()


@pytest.mark.parametrize(
    "template",
    [
        WRITES_LR + "beta: {{ config.beta }}\n",
        WRITES_LR + "{% if config.lr == 2 %}beta: {{ config.beta }}\n{% endif %}",  # in one group only
        "{{ config | to_yaml }}",
    ],
)
def test_an_axis_written_anywhere_passes(project, template):
    code, out = _render(project, template, "grid:\n  lr: [1, 2]\n  beta: [0.0, 0.04]")
    assert code == 0, out


def test_an_axis_written_only_into_the_run_folder_is_one_run_twice(project):
    template = "lr: {{ config.lr }}\noutput_dir: runs/b{{ config.beta }}\n"
    code, out = _render(project, template, "grid:\n  beta: [0.0, 0.04]")
    assert code == 2 and "axis `beta` changes nothing the template writes" in out, out


def test_zip_and_sample_paths_are_not_judged(project):
    """Their variants differ in several paths at once: no pair isolates one of them."""
    axes = "zip:\n  - name: pair\n    axes:\n      beta: [0.0, 0.04]\n      seed: [0, 1]\ngrid:\n  lr: [1, 2]"
    code, out = _render(project, WRITES_LR, axes)
    assert code == 0, out


def test_a_value_that_is_the_variant_name_itself_is_not_masked(project):
    """Grid over `run_name` with `run_name: "{{ config.run_name }}"`: the name is the value written."""
    spec = SPEC.format(axes="grid:\n  run_name: [alpha, bravo]").replace(
        "derived:\n", 'run_name: "{{ config.run_name }}"\nderived:\n'
    )
    (project / "specs" / "s.yaml").write_text(spec.replace("  seed: 0\n", "  seed: 0\n  run_name: x\n"))
    (project / "templates" / "t.yaml.j2").write_text("run_name: {{ config.run_name }}\n")
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    assert result.exit_code == 0, result.output
