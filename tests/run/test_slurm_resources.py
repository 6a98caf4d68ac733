"""The spec's resources block as the Slurm executor reads it from the lock: accepted forms, every
rejection naming the key and the fix, and Slurm's time formats (property-tested)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen.compile.output.lockfile import lock
from sweepgen.errors import ConfigError
from sweepgen.run.slurm.resources import MANAGED_FLAGS, parse_time, resources_from_lock


def lock_holding(resources):
    """A lock whose `resources` block is ``resources``, read through the lock's own parser."""
    raw = {"lock_version": 2, "sweep": "s", "files": [], "resources": resources}
    return lock.parse(json.dumps(raw).encode(), "l")


def lock_with(**resources):
    return lock_holding(resources)


def format_minutes(minutes: int) -> str:
    """Minutes as Slurm writes a time limit: ``D-HH:MM:SS``, or ``HH:MM:SS`` under a day."""
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    clock = f"{hours:02d}:{mins:02d}:00"
    return f"{days}-{clock}" if days else clock


def test_full_block_is_read_whole():
    r = resources_from_lock(
        lock_with(
            partition="gpu",
            gpus_per_run=2,
            cpus_per_run=8,
            mem="64G",
            time="04:00:00",
            sbatch_extra=["--account=rl", "--qos=high"],
        ),
        lock_path="sweep.lock.json",
    )
    assert (r.time_min, r.partition, r.gpus_per_run, r.cpus_per_run, r.mem) == (240, "gpu", 2, 8, "64G")
    assert r.sbatch_extra == ("--account=rl", "--qos=high")


def test_nulls_written_by_the_lock_mean_unset():
    r = resources_from_lock(
        lock_with(time=30, partition=None, gpus_per_run=None, cpus_per_run=None, mem=None, sbatch_extra=[]),
        lock_path="l",
    )
    assert (r.time_min, r.partition, r.gpus_per_run, r.cpus_per_run, r.mem, r.sbatch_extra) == (
        30,
        None,
        0,
        1,
        None,
        (),
    )


def test_missing_block_or_time_is_an_error_not_submitits_five_minutes():
    with pytest.raises(ConfigError) as err:
        resources_from_lock(lock_holding(None), lock_path="g/sweep.lock.json")
    assert err.value.key == "resources" and "time" in err.value.hint
    assert str(err.value.location) == "g/sweep.lock.json"
    with pytest.raises(ConfigError) as err:
        resources_from_lock(lock_with(partition="gpu"), lock_path="l")
    assert err.value.key == "resources.time" and "5 minutes" in err.value.hint


@pytest.mark.parametrize(
    "resources, key, fragment",
    [
        ({"time": 5, "gpus": 1}, "resources.gpus", "not a known resource"),
        ({"time": 5, "cpus_per_run": 0}, "resources.cpus_per_run", "≥ 1"),
        ({"time": 5, "gpus_per_run": -1}, "resources.gpus_per_run", "≥ 0"),
        ({"time": 5, "gpus_per_run": True}, "resources.gpus_per_run", "whole number"),
        ({"time": 5, "mem": "64GB"}, "resources.mem", "not a Slurm memory size"),
        ({"time": 5, "partition": "gpu a100"}, "resources.partition", "partition name"),
        ({"time": "2 hours"}, "resources.time", "not a Slurm time"),
        ({"time": 0}, "resources.time", "shorter than one minute"),
        ({"time": 5, "sbatch_extra": ["account=rl"]}, "resources.sbatch_extra[0]", "long sbatch option"),
        ({"time": 5, "sbatch_extra": ["--time=10"]}, "resources.sbatch_extra[0]", "set by sweepgen"),
        (
            {"time": 5, "sbatch_extra": ["--qos=a", "--array=0-3"]},
            "resources.sbatch_extra[1]",
            "set by sweepgen",
        ),
        (
            {"time": 5, "sbatch_extra": ["--comment=a\n#SBATCH --time=9"]},
            "resources.sbatch_extra[0]",
            "long sbatch",
        ),
    ],
)
def test_bad_resources_name_the_key(resources, key, fragment):
    with pytest.raises(ConfigError) as err:
        resources_from_lock(lock_holding(resources), lock_path="l")
    assert err.value.key == key
    assert fragment in err.value.message
    assert err.value.hint


def test_managed_flags_point_to_the_resource_key_that_sets_them():
    with pytest.raises(ConfigError) as err:
        resources_from_lock(lock_with(time=5, sbatch_extra=["--partition=x"]), lock_path="l")
    assert "resources.partition" in err.value.hint
    assert MANAGED_FLAGS["--mem"] == "resources.mem"


def test_mapping_form_of_sbatch_extra():
    r = resources_from_lock(
        lock_with(time=5, sbatch_extra={"account": "rl", "exclusive": True}), lock_path="l"
    )
    assert r.sbatch_extra == ("--account=rl", "--exclusive")


@pytest.mark.parametrize(
    "text, minutes",
    [
        ("90", 90),
        ("5:30", 6),
        ("5:00", 5),
        ("01:00:00", 60),
        ("1-0", 1440),
        ("2-03", 2 * 1440 + 180),
        ("1-02:03", 1440 + 123),
        ("1-02:03:04", 1440 + 124),
        (45, 45),
    ],
)
def test_slurm_time_formats(text, minutes):
    assert parse_time(text) == minutes


@pytest.mark.parametrize("text", ["1:60:00", "5:61", "1-2:3:4:5", "-5", "1h", "", "1.5", True, 1.5])
def test_bad_times(text):
    with pytest.raises(ConfigError):
        parse_time(text)


@given(st.integers(min_value=1, max_value=60 * 24 * 400))
def test_formatted_minutes_parse_back(minutes):
    assert parse_time(format_minutes(minutes)) == minutes


@given(st.integers(0, 99), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59))
def test_seconds_never_shorten_the_limit(d, h, m, s):
    total_s = ((d * 24 + h) * 60 + m) * 60 + s
    if total_s == 0:
        with pytest.raises(ConfigError):
            parse_time("0-00:00:00")
        return
    minutes = parse_time(f"{d}-{h:02d}:{m:02d}:{s:02d}")
    assert minutes * 60 >= total_s > (minutes - 1) * 60


@given(st.integers(1, 60 * 24 * 30))
def test_signal_delay_leaves_most_of_the_limit(minutes):
    r = resources_from_lock(lock_with(time=minutes), lock_path="l")
    assert 10 <= r.signal_delay_s <= 90
    assert r.signal_delay_s <= max(10, minutes * 60 // 10)


@pytest.mark.parametrize(
    "flag, key",
    [
        ("--nodes=2", "resources.nodes"),
        ("--ntasks-per-node=8", "resources.procs_per_node"),
        ("--gpus-per-node=8", "resources.gpus_per_node"),
    ],
)
def test_the_runs_shape_in_sbatch_extra_names_the_shape_key(flag, key):
    with pytest.raises(ConfigError) as err:
        resources_from_lock(lock_with(time=5, sbatch_extra=[flag]), lock_path="l")
    assert f"use {key} instead" in err.value.hint
