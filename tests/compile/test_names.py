"""The spec's `names:` scheme: readable names (`beta0.04-seed1`), the legacy default kept byte for
byte, the lock's record of the scheme, and a scheme change refused while it would rename started runs."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.compile.api import load_and_expand
from sweepgen.errors import SpecError
from sweepgen.run.report import groups as grp

GRID = (
    "grid:\n  training.lr: [0.1, 1.0e-5]\n  streamer.strategy: [identity, dr_grpo]\n  training.seed: [1, 2]\n"
)


def names(project, body, scheme=None):
    head = f"names: {scheme}\n" if scheme else ""
    return [v.name for v in load_and_expand(str(write_project(project, head + body))).variants]


def test_readable_names_separate_axes_and_text_values(project):
    got = names(project, GRID, "readable")
    assert got[0] == "lr0.1-strategy_identity-seed1"
    assert "lr1e-05-strategy_dr_grpo-seed2" in got and len(set(got)) == 8


def test_the_default_is_the_legacy_scheme_unchanged(project):
    legacy = names(project, GRID)
    assert legacy == names(project, GRID, "legacy")
    assert legacy[0] == "lr0.1_strategyidentity_seed1"  # what every sweep rendered before `names:` got


def test_readable_joins_variants_zip_sample_and_ablation_with_dashes(project):
    body = (
        "variants:\n  big: {training.group: 8}\n"
        "zip:\n  training.lr: [0.1, 0.2]\n  streamer.strategy: [a, b]\n"
        "ablation:\n  - {name: noclip, set: {training.group: 2}}\n"
    )
    assert names(project, body, "readable") == ["big-lr0.1-strategy_a-noclip", "big-lr0.2-strategy_b-noclip"]


def test_bools_and_nulls_get_a_separator_too(project):
    got = names(project, "grid:\n  streamer.strategy: [true, null]\n", "readable")
    assert got == ["strategy_true", "strategy_null"]


def test_a_bad_scheme_is_refused_at_its_line(project):
    done = CliRunner().invoke(main, ["render", str(write_project(project, "names: pretty\n" + GRID))])
    assert done.exit_code == 2
    assert "demo.yaml:" in done.stderr and "names" in done.stderr and "readable" in done.stderr


def test_the_seed_group_is_the_run_name_without_its_seed_part(project):
    expansion = load_and_expand(str(write_project(project, "names: readable\n" + GRID)))
    members = [
        grp.Member(v.name, v.name, {"training.seed": v.config["training"]["seed"], **v.axes})
        for v in expansion.variants
    ]
    plan = grp.seed_plan({"seed": "training.seed"}, ["training.lr", "streamer.strategy", "training.seed"])
    groups = grp.group(members, plan, ["training.lr", "streamer.strategy", "training.seed"], "s")
    assert [g.name for g in groups][:2] == ["lr0.1-strategy_identity", "lr0.1-strategy_dr_grpo"]
    assert all(set(g.members) == {g.name + "-seed1", g.name + "-seed2"} for g in groups)


def _render(spec):
    return CliRunner().invoke(main, ["render", str(spec)])


def _lock(project):
    return json.loads((project / "generated" / "demo" / "sweep.lock.json").read_text())


RUN_DIR = 'run_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"\n'


def test_the_lock_records_readable_and_nothing_for_legacy(project):
    spec = write_project(project, RUN_DIR + GRID)
    assert _render(spec).exit_code == 0
    assert "names" not in (_lock(project).get("report") or {})
    spec.write_text(spec.read_text().replace("run_dir:", "names: readable\nrun_dir:"))
    assert _render(spec).exit_code == 0  # nothing has run: the new scheme simply applies
    assert _lock(project)["report"]["names"] == "readable"
    assert _lock(project)["files"][0]["run_dir"] == "runs/demo/lr0.1-strategy_identity-seed1"


@pytest.mark.parametrize(("before", "after"), [("", "names: readable\n"), ("names: readable\n", "")])
def test_a_scheme_change_that_renames_a_started_run_is_refused(project, before, after):
    spec = write_project(project, before + RUN_DIR + GRID)
    assert _render(spec).exit_code == 0
    started = project / _lock(project)["files"][3]["run_dir"]
    started.mkdir(parents=True)
    locked = (project / "generated" / "demo" / "sweep.lock.json").read_bytes()
    spec.write_text(spec.read_text().replace(before, after) if before else after + spec.read_text())
    done = _render(spec)
    assert done.exit_code == 2, done.output
    assert "would rename 1 run(s)" in done.stderr and os.path.relpath(started, project) in done.stderr
    line = spec.read_text().splitlines().index("names: readable") + 1 if after else None
    assert f"demo.yaml:{line}:" in done.stderr if line else "demo.yaml:" in done.stderr
    assert "look new and run again" in done.stderr and "new `name:`" in done.stderr
    assert (project / "generated" / "demo" / "sweep.lock.json").read_bytes() == locked  # nothing written
    assert started.is_dir()


AXIS = st.one_of(  # one type per axis: a grid value must have its config key's type
    st.lists(st.integers(-50, 50), min_size=1, max_size=3, unique=True),
    st.lists(st.floats(-1000, 1000, width=32), min_size=1, max_size=3, unique=True),  # no `e+`: not file-safe
    st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), min_size=1, max_size=3, unique=True),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    axes=st.dictionaries(
        st.sampled_from(["lr", "beta", "loss_type", "clip_eps", "temp"]),
        AXIS,
        min_size=1,
        max_size=3,
    ),
    seeds=st.lists(st.integers(0, 9999), min_size=2, max_size=3, unique=True),
)
def test_readable_names_are_unique_and_the_group_is_the_name_without_its_seed(project, axes, seeds):
    """Any grid (numbers, text) crossed with seeds, seed last: every run's seed group, formed as
    `report` forms it, is named by its run names minus `-seed<value>`, the same for all its seeds."""
    lines = ["names: readable", "grid:"]
    lines += [f"  training.{key}: {json.dumps(values)}" for key, values in axes.items()]
    lines += [f"  training.seed: {json.dumps(seeds)}"]
    training = {"seed": 0, **{key: values[0] for key, values in axes.items()}}
    base = f"base:\n  training: {json.dumps(training)}\n"
    try:
        expansion = load_and_expand(str(write_project(project, "\n".join(lines) + "\n", base=base)))
    except SpecError as err:
        assume("both named" not in err.message)  # -0.0 and 0.0 label alike: the spec's own error
        raise
    names = [v.name for v in expansion.variants]
    assert len(set(names)) == len(names)
    varying = [f"training.{k}" for k, v in axes.items() if len(v) > 1] + ["training.seed"]
    members = [
        grp.Member(v.name, v.name, {p: paths_get(v.config, p) for p in varying}) for v in expansion.variants
    ]
    plan = grp.seed_plan({"seed": "training.seed"}, varying)
    for group in grp.group(members, plan, varying, "demo"):
        assert sorted(group.members) == sorted(f"{group.name}-seed{s}" for s in seeds)


def paths_get(config, dotted):
    for part in dotted.split("."):
        config = config[part]
    return config
