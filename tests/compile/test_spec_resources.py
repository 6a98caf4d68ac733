"""The run's shape in `resources:` (nodes, gpus_per_node, procs_per_node, launcher): checked at load
with file:line:col, resolved into the lock, and read back by the executors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from spec_support import write_project

from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.spec.model import load_spec
from sweepgen.compile.spec.request import resources as spec_resources
from sweepgen.compile.spec.request.resources import Resources
from sweepgen.errors import ConfigError, SpecError
from sweepgen.run.core.shape import RunShape, shape_from_lock


def lock_holding(resources):
    raw = {"lock_version": 2, "sweep": "s", "files": [], "resources": resources}
    return lock.parse(json.dumps(raw).encode(), "l")


@pytest.mark.parametrize(
    "body, where, key, words",
    [
        (
            "resources:\n  gpus_per_node: 2\n  procs_per_node: 4\n  launcher: torchrun\n",
            "specs/demo.yaml:10:19",
            "resources.procs_per_node",
            "more than the GPUs",
        ),
        (
            "resources:\n  procs_per_node: 2\n",
            "specs/demo.yaml:9:19",
            "resources.procs_per_node",
            "no launcher",
        ),
        (
            "resources:\n  gpus_per_run: 2\n  gpus_per_node: 2\n",
            "specs/demo.yaml:9:17",
            "resources.gpus_per_run",
            "both gpus_per_run and gpus_per_node",
        ),
        (
            "resources:\n  nodes: 2\n  gpus_per_run: 2\n  launcher: torchrun\n",
            "specs/demo.yaml:10:17",
            "resources.gpus_per_run",
            "one-node runs",
        ),
    ],
)
def test_shape_errors_name_the_key(project, body, where, key, words):
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert words in err.value.message
    assert str(err.value.location) == where and err.value.key == key
    assert err.value.hint


@pytest.mark.parametrize(
    "body, words, where",
    [
        (
            "resources: {launcher: mpirun}\n",
            "'torchrun', 'accelerate', 'srun' or 'none'",
            "specs/demo.yaml:8:23",
        ),
        ("resources: {nodes: 0}\n", "greater than or equal to 1", "specs/demo.yaml:8:20"),
        ("resources: {procs_per_node: 1.0}\n", "valid integer", "specs/demo.yaml:8:29"),
    ],
)
def test_shape_types_point_at_the_value(project, body, words, where):
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert words in err.value.message and str(err.value.location) == where


def test_defaults_resolve_into_the_lock(project):
    spec = load_spec(str(write_project(project, "resources: {gpus_per_node: 4, launcher: torchrun}\n")))
    block = spec_resources.lock_block(spec.model.resources)
    assert {k: block[k] for k in spec_resources.SHAPE_KEYS} == {
        "nodes": 1,
        "gpus_per_node": 4,
        "procs_per_node": 4,  # default: one process per GPU
        "launcher": "torchrun",
    }
    assert shape_from_lock(lock_holding(block), lock_path="l") == RunShape(1, 4, 4, "torchrun")


def test_cpu_launcher_defaults_to_one_process_and_gpus_per_run_is_the_gpus():
    assert spec_resources.shape(Resources(launcher="accelerate")) == {
        "nodes": 1,
        "gpus_per_node": 0,
        "procs_per_node": 1,
        "launcher": "accelerate",
    }
    block = spec_resources.lock_block(Resources(gpus_per_run=2, launcher="torchrun"))
    assert block["gpus_per_node"] == 2 and block["procs_per_node"] == 2 and block["gpus_per_run"] == 2


def test_spec_without_shape_keys_keeps_the_old_lock_block():
    block = spec_resources.lock_block(Resources(gpus_per_run=1, time=30))
    assert set(block) == {"partition", "gpus_per_run", "cpus_per_run", "mem", "time", "sbatch_extra"}
    assert shape_from_lock(lock_holding(block), lock_path="l") == RunShape(gpus_per_node=1)
    assert shape_from_lock(lock_holding(None), lock_path="l") == RunShape()


@pytest.mark.parametrize(
    "block, key",
    [
        ({"launcher": "mpirun"}, "resources.launcher"),
        ({"launcher": "torchrun", "procs_per_node": 0}, "resources.procs_per_node"),
        ({"launcher": "torchrun", "nodes": True}, "resources.nodes"),
        ({"launcher": "torchrun", "gpus_per_node": 1, "procs_per_node": 2}, "resources.procs_per_node"),
    ],
)
def test_a_damaged_lock_shape_is_refused(block, key):
    with pytest.raises(ConfigError) as err:
        shape_from_lock(lock_holding(block), lock_path="sweep.lock.json")
    assert err.value.key == key and str(err.value.location) == "sweep.lock.json"


@given(
    nodes=st.none() | st.integers(1, 64),
    gpus=st.none() | st.integers(0, 16),
    procs=st.none() | st.integers(1, 16),
    launcher=st.none() | st.sampled_from(spec_resources.LAUNCHERS),
)
def test_every_accepted_shape_reads_back_the_same(nodes, gpus, procs, launcher):
    """Whatever the spec's checks accept, the lock's reader accepts and reads back unchanged."""
    model = Resources(nodes=nodes, gpus_per_node=gpus, procs_per_node=procs, launcher=launcher)
    doc = _doc()
    try:
        spec_resources.check(model, doc)
    except SpecError:
        assert procs is not None and (procs > 1 and launcher in (None, "none") or gpus and procs > gpus)
        return
    block = spec_resources.lock_block(model)
    if all(v is None for v in (nodes, gpus, procs, launcher)):
        assert shape_from_lock(lock_holding(block), lock_path="l") == RunShape()
        return
    got = shape_from_lock(lock_holding(block), lock_path="l")
    assert (got.nodes, got.gpus_per_node, got.launcher) == (nodes or 1, gpus or 0, launcher or "none")
    assert got.procs_per_node == (1 if not got.launched else procs or max(gpus or 0, 1))


def _doc():
    from sweepgen.formats import yamlio

    return yamlio.loads("resources: {}\n", "s.yaml", max_nodes=None)


def test_a_key_no_executor_takes_is_refused_at_its_place_with_the_closest_key(project):
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, "resources:\n  time: 30\n  partiton: gpu\n")))
    assert "unknown key `partiton`" in err.value.message
    assert str(err.value.location) == "specs/demo.yaml:10:3" and err.value.key == "resources.partiton"
    assert err.value.hint == "did you mean `partition`?"


def test_the_spec_takes_every_key_some_executor_declares_and_only_those():
    from sweepgen.compile.spec.request.executor_resources import EXECUTOR_RESOURCES, RunResources

    declared = {key for section in EXECUTOR_RESOURCES.values() for key in section.model_fields}
    assert set(Resources.model_fields) == declared
    assert all(issubclass(section, RunResources) for section in EXECUTOR_RESOURCES.values())
    # the local executor takes time and the shape only; Slurm's request is Slurm's
    assert set(EXECUTOR_RESOURCES["local"].model_fields) == set(RunResources.model_fields)
    slurm = set(EXECUTOR_RESOURCES["slurm"].model_fields)
    assert {"partition", "mem", "cpus_per_run", "sbatch_extra"} <= slurm


@pytest.mark.parametrize(
    "body, where, words",
    [
        ('resources:\n  time: "1:30:99"\n', "specs/demo.yaml:9:9", "not a Slurm time"),
        ('resources:\n  time: "2h"\n', "specs/demo.yaml:9:9", "not a Slurm time"),
        ("resources:\n  time: 0\n", "specs/demo.yaml:9:9", "shorter than one minute"),
        ('resources:\n  time: 60\n  partition: "gpu a100"\n', "specs/demo.yaml:10:14", "partition name"),
        ("resources:\n  time: 60\n  mem: 064G\n", "specs/demo.yaml:10:8", "not a Slurm memory size"),
        ('resources:\n  time: 60\n  mem: "0"\n', "specs/demo.yaml:10:8", "not a Slurm memory size"),
        (
            'resources:\n  time: 60\n  sbatch_extra: ["--qos=a", "account=rl"]\n',
            "specs/demo.yaml:10:29",
            "not a long sbatch option",
        ),
        ("resources:\n  time: 60\n  sbatch_extra: [--time=5]\n", "specs/demo.yaml:10:18", "set by sweepgen"),
    ],
)
def test_request_values_the_slurm_executor_refuses_are_refused_at_load(project, body, where, words):
    """`check` in CI refuses what `run --executor slurm` would refuse later, at the key's line."""
    with pytest.raises(SpecError) as err:
        load_spec(str(write_project(project, body)))
    assert words in err.value.message
    assert str(err.value.location) == where


@pytest.mark.parametrize("value", ["90", "1:30", "01:30:00", "1-0", "1-00:00", "2-12:30:00"])
def test_slurm_times_load(project, value):
    spec = load_spec(str(write_project(project, f'resources:\n  time: "{value}"\n')))
    assert spec.model.resources is not None and spec.model.resources.time == value
