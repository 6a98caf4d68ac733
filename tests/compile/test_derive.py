"""Run names and `derived:` values, computed per variant after expansion and before validation."""

from __future__ import annotations

import pytest
from spec_support import HEAD, write_project

from sweepgen.compile.api import load_and_expand
from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.output.pipeline import compile_spec
from sweepgen.errors import SpecError, TemplateError, ValidationError

HEAD_RUN = HEAD + 'run_name: "{{ streamer.strategy }}_s{{ training.seed }}"\n'
BODY = """\
variants:
  identity: {}
  coma: {streamer.strategy: coma}
grid: {training.seed: [1, 2]}
allow: [streamer.strategy]
derived:
  +output_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"
  streamer.rollouts: "{{ training.group * 2 }}"
  +note: "group {{ training.group }}"
"""


def test_derived_values_follow_each_variant(project):
    e = load_and_expand(str(write_project(project, BODY, head=HEAD_RUN)))
    v = e.by_name("coma_seed2")
    assert v.run_name == "coma_s2"
    assert v.config["output_dir"] == "runs/demo/coma_s2"
    assert (
        v.config["streamer"]["rollouts"] == 8 and type(v.config["streamer"]["rollouts"]) is int
    )  # one expression
    assert v.config["note"] == "group 4"  # text
    assert v.layers["output_dir"] == "derived" and v.layers["training.seed"] == "grid"
    assert e.spec.base.get("output_dir") is None  # the base is untouched


def test_derived_paths_pass_the_gate_and_reach_the_lock(project):
    plan = compile_spec(str(write_project(project, BODY, head=HEAD_RUN)))
    model = lock.parse(plan.lock_bytes, "lock")
    entry = model.files[0]
    assert entry.run_name == "identity_s1" and model.config(entry)["output_dir"] == "runs/demo/identity_s1"
    assert "output_dir" in model.varying and entry.layers["output_dir"] == "derived"


def test_constraints_see_derived_values(project):
    with pytest.raises(ValidationError, match="rollouts stay 4"):
        compile_spec(
            str(
                write_project(
                    project,
                    BODY + "constraints:\n  - {expr: streamer.rollouts == 4, message: rollouts stay 4}\n",
                    head=HEAD_RUN,
                )
            )
        )


@pytest.mark.parametrize(
    "derived, exc, message",
    [
        ('outputdir: "x"', SpecError, "does not exist"),
        ('~training.seed: "x"', SpecError, "cannot delete"),
        ('+out: "{{ nope }}"', TemplateError, "`nope` is undefined"),
        ('+out: "{{ training.seed + }}"', SpecError, "not a valid expression"),
        ('+out: "a {% if %}"', SpecError, "not a valid template"),
    ],
)
def test_derived_errors_point_at_the_spec(project, derived, exc, message):
    with pytest.raises(exc) as err:
        load_and_expand(str(write_project(project, f"derived:\n  {derived}\n")))
    assert message in err.value.message
    assert str(err.value.location).startswith("specs/demo.yaml:9:")


def test_duplicate_run_names_are_rejected(project):
    head = HEAD + 'run_name: "run_{{ training.group }}"\n'
    with pytest.raises(ValidationError, match="have the same run name 'run_4'"):
        load_and_expand(str(write_project(project, "grid: {training.seed: [1, 2]}\n", head=head)))


def test_derived_values_must_be_plain_data(project):
    with pytest.raises(TemplateError, match="not plain data"):
        load_and_expand(str(write_project(project, 'derived:\n  +out: "{{ range(3) }}"\n')))
