"""A search changed after its study began: what would corrupt the study is refused (exit 2, the spec
key named, how to start a new study said) before anything is asked; what may change goes on, with
the command line the search was started with. Real processes: the sweepgen CLI, the fake trainer."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from search_support import COMMAND, RUN_ARGS, cli, study, sweepgen, write_search_project

SWEEP = "generated/fake_search"
FAST = {"x": 0.5, "y": 0.5, "steps": 2, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A search of 2 trials, run to its end with the fake trainer (--command)."""
    root = tmp_path_factory.mktemp("searched")
    spec = write_search_project(root, {"n": 2, "parallel": 2, "sampler": "random"}, base=FAST)
    assert cli(root, "render", str(spec)).returncode == 0
    done = sweepgen(root, "run", SWEEP, *RUN_ARGS)
    assert done.returncode == 0, done.stderr
    return root


def _changed(searched: Path, tmp_path: Path, change: dict[str, Any]) -> Path:
    root = tmp_path / "p"
    shutil.copytree(searched, root)
    path = root / "specs" / "s.yaml"
    spec = yaml.safe_load(path.read_text())
    for dotted, value in change.items():
        node = spec
        *parents, last = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def _states(root: Path) -> list[str]:
    return [t.state.name for t in study(root).get_trials()]


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"search.mode": "min"}, "search.mode", "`search.mode` is min, but the study"),
        ({"search.sampler": "tpe"}, "search.sampler", "`search.sampler` is 'tpe', but the study"),
        ({"search.metric": "loss"}, "search.metric", "`search.metric` is 'loss', but the study"),
        ({"search.axes.x": {"uniform": [0.0, 2.0]}}, "search.axes.x", "search axis 'x' is float [0.0, 2.0]"),
        ({"search.axes.x": {"log_uniform": [1e-9, 1.0]}}, "search.axes.x", "(log), but the study"),
    ],
)
def test_a_change_the_study_cannot_hold_is_refused_by_run(searched, tmp_path, change, key, words):
    root = _changed(searched, tmp_path, change)
    assert cli(root, "render", "specs/s.yaml").returncode == 0  # the lock alone cannot tell
    done = sweepgen(root, "run", SWEEP)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert words in done.stderr and "corrupt the study" in done.stderr
    assert "specs/s.yaml:" in done.stderr  # file:line:col of the key
    assert "new `name:`" in done.stderr  # how to start a new study
    assert _states(root) == ["COMPLETE", "COMPLETE"]  # nothing asked, nothing left running


@pytest.mark.parametrize(
    "axis",
    [
        {"uniform": [0.0, 1e-6]},  # narrower: the trials' points lie outside
        {"choice": [0.25, 0.75]},  # another kind
        {"int_uniform": [0, 1]},
    ],
)
def test_an_axis_its_trials_lie_outside_of_is_refused_by_render(searched, tmp_path, axis):
    root = _changed(searched, tmp_path, {"search.axes.x": axis})
    done = cli(root, "render", "specs/s.yaml")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "outside the axis the spec now gives it" in done.stderr
    assert "corrupt the study" in done.stderr and "Traceback" not in done.stderr
    run = sweepgen(root, "run", SWEEP)  # the old lock: the spec no longer matches it
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert _states(root) == ["COMPLETE", "COMPLETE"]


def test_a_derived_value_on_a_search_axis_is_refused(tmp_path):
    spec = write_search_project(
        tmp_path,
        {"n": 2},
        base=FAST,
        derived={"output_dir": "runs/{{ sweep.name }}/{{ variant.name }}", "x": "{{ 0.5 }}"},
    )
    for argv in (("render", str(spec)), ("check", str(spec))):
        done = sweepgen(tmp_path, *argv)
        assert done.returncode == 2, done.stdout + done.stderr
        said = done.stdout + done.stderr  # (`check` lists its problems on stdout)
        assert "`derived:` key 'x' sets the search axis 'x'" in said
        assert "s.yaml:" in said and "Traceback" not in said


def test_more_trials_go_on_with_the_recorded_command_line(searched, tmp_path):
    """`n` may grow; a `run` without --command runs the fake trainer the search was started with
    (the bundled trainer would fail every new trial on these configs)."""
    root = _changed(searched, tmp_path, {"search.n": 3})
    assert cli(root, "render", "specs/s.yaml").returncode == 0
    dry = sweepgen(root, "run", SWEEP, "--dry-run")
    assert dry.returncode == 0 and "--command" in dry.stdout
    done = sweepgen(root, "run", SWEEP)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "using the command line this search was started with" in done.stderr
    assert COMMAND.split()[-2] in done.stderr.replace("\n", "")  # the trainer, spelled out
    assert _states(root) == ["COMPLETE"] * 3
