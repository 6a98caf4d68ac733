"""Loading specs: pydantic shapes with errors mapped back to file:line:col, includes, resources."""

from __future__ import annotations

import pytest
from spec_support import HEAD, write_project

from sweepgen.compile.spec.model import load_spec
from sweepgen.compile.spec.request import resources as spec_resources
from sweepgen.errors import SpecError


def test_minimal_spec_loads(project):
    spec = load_spec(str(write_project(project)))
    assert spec.name == "demo"
    assert spec.base["training"]["lr"] == 3.0e-6
    assert spec.model.resources is None and spec.model.schema_ is None
    assert spec.base_layers["training.seed"] == "base"
    assert str(spec.base_locs["training.seed"]) == "specs/demo.yaml:6:20"


@pytest.mark.parametrize(
    "body, message, where, hint",
    [
        ("varaints: {a: {}}\n", "unknown key `varaints`", "specs/demo.yaml:8:1", "did you mean `variants`?"),
        (
            "constraints:\n  - {expr: 'x == 1', mesage: m}\n",
            "unknown key `mesage`",
            "specs/demo.yaml:9:22",
            "did you mean `message`?",
        ),
        (
            "ablation:\n  - {name: a, sett: {}}\n",
            "unknown key `sett`",
            "specs/demo.yaml:9:15",
            "did you mean `set`?",
        ),
        (
            "resources: {partition: gpu_1, gpus_per_run: '1'}\n",
            "valid integer",
            "specs/demo.yaml:8:45",
            "type",
        ),
        ("resources: {mem: 8 GB}\n", "not a Slurm memory size", "specs/demo.yaml:8:18", "value"),
        ("allow: training.seed\n", "valid list", "specs/demo.yaml:8:8", "type"),
        ("grid: {training.seed: 42}\n", "valid list", "specs/demo.yaml:8:23", "type"),
    ],
)
def test_shape_errors_point_at_the_value(project, body, message, where, hint):
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert message in err.value.message
    assert str(err.value.location) == where
    assert hint in err.value.hint


def test_missing_required_key_points_at_the_mapping(project):
    head = HEAD.replace('output: "{{ variant.name }}.yaml"\n', "")
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, head=head)))
    assert "missing required key `output`" in err.value.message


def test_resources_are_validated_and_kept(project):
    spec = load_spec(
        str(
            write_project(
                project,
                """\
        resources:
          partition: gpu_1
          gpus_per_run: 1
          cpus_per_run: 8
          mem: 8G
          time: "00:30:00"
          sbatch_extra: [--qos=high]
        """,
            )
        )
    )
    assert spec_resources.lock_block(spec.model.resources) == {
        "partition": "gpu_1",
        "gpus_per_run": 1,
        "cpus_per_run": 8,
        "mem": "8G",
        "time": "00:30:00",
        "sbatch_extra": ["--qos=high"],
    }
    spec = load_spec(str(write_project(project, "resources: {time: 90}\n")))
    assert spec.model.resources.time == 90


def test_base_from_includes_merged_in_order_then_set(project):
    (project / "configs").mkdir()
    (project / "configs" / "model.yaml").write_text(
        "model: {name: smollm, layers: 30}\ntraining: {seed: 1, lr: 0.1}\n"
    )
    (project / "configs" / "run.yaml").write_text("training: {lr: 0.2, steps: 15}\n")
    spec = load_spec(
        str(
            write_project(
                project,
                base="""\
        base:
          include: [../configs/model.yaml, ../configs/run.yaml]
          set: {training.seed: 42, +training.group: 4}
        """.replace("        ", ""),
            )
        )
    )
    assert spec.base == {
        "model": {"name": "smollm", "layers": 30},
        "training": {"seed": 42, "lr": 0.2, "steps": 15, "group": 4},
    }
    assert spec.base_layers["model.name"] == "include:configs/model.yaml"
    assert spec.base_layers["training.lr"] == "include:configs/run.yaml"
    assert spec.base_layers["training.seed"] == "base.set"
    assert str(spec.base_locs["training.lr"]) == "configs/run.yaml:1:16"


def test_base_set_typo_is_caught(project):
    (project / "configs").mkdir()
    (project / "configs" / "model.yaml").write_text("training: {seed: 1}\n")
    with pytest.raises(SpecError) as err:
        load_spec(
            str(
                write_project(
                    project, base="base:\n  include: [../configs/model.yaml]\n  set: {training.sed: 2}\n"
                )
            )
        )
    assert "does not exist in the base" in err.value.message and "training.seed" in err.value.hint


def test_included_file_errors_point_into_that_file(project):
    (project / "configs").mkdir()
    (project / "configs" / "model.yaml").write_text("training:\n  seed: 1\n  seed: 2\n")
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, base="base:\n  include: [../configs/model.yaml]\n")))
    assert str(err.value.location) == "configs/model.yaml:3:3"


def test_missing_spec_file(project):
    with pytest.raises(SpecError) as err:
        load_spec("specs/nope.yaml")
    assert "not found" in err.value.message
