"""Random search (`sample:`): seeded, platform-independent draws, crossed with variants and gated."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.compile.api import load_and_expand
from sweepgen.compile.spec.sampling import sample as sampling
from sweepgen.errors import SpecError, ValidationError

SAMPLE = """\
variants:
  identity: {}
  coma: {streamer.strategy: coma}
allow: [streamer.strategy]
sample:
  n: 6
  seed: 0
  axes:
    training.lr: {log_uniform: [1.0e-6, 1.0e-4]}
    streamer.rollouts: {choice: [2, 4, 8]}
    training.seed: {int_uniform: [0, 1000]}
"""


def expand(project, body, **kw):
    return load_and_expand(str(write_project(project, body, **kw)))


def test_sample_is_crossed_with_named_variants_and_labelled_by_its_values(project):
    e = expand(project, SAMPLE)
    assert len(e.variants) == 2 * 6
    first = e.variants[0]
    lr, rollouts, seed = (
        first.axes["training.lr"],
        first.axes["streamer.rollouts"],
        first.axes["training.seed"],
    )
    assert first.name == f"identity_lr{lr:.3g}_rollouts{rollouts}_seed{seed}"
    assert first.config["training"]["lr"] == lr and first.layers["training.lr"] == "sample"
    # every named variant sees the same drawn points, in the same order
    ids = [v.axes for v in e.variants if v.name.startswith("identity_")]
    comas = [v.axes for v in e.variants if v.name.startswith("coma_")]
    assert ids == comas


def test_draws_stay_in_their_ranges_and_choices(project):
    body = SAMPLE.replace("n: 6", "n: 200")
    e = expand(project, body)
    for v in e.variants:
        assert 1e-6 <= v.axes["training.lr"] <= 1e-4
        assert v.axes["streamer.rollouts"] in (2, 4, 8)
        assert type(v.axes["training.seed"]) is int and 0 <= v.axes["training.seed"] <= 1000
    # a log-uniform draw spreads over the decades, not bunched at the top
    logs = [math.log10(v.axes["training.lr"]) for v in e.variants]
    assert min(logs) < -5.5 and max(logs) > -4.5


def test_sampled_paths_need_no_allow_but_other_differences_do(project):
    e = expand(project, SAMPLE)
    assert e.variants  # the gate runs on render/check; run it through the pipeline here
    from sweepgen.compile.spec.variants.gate import check_gate

    check_gate(e)
    bad = SAMPLE.replace("allow: [streamer.strategy]\n", "")
    with pytest.raises(ValidationError, match="streamer.strategy"):
        check_gate(expand(project, bad))


def test_a_larger_n_keeps_the_first_points(project):
    small = [v.axes for v in expand(project, SAMPLE).variants]
    big = [v.axes for v in expand(project, SAMPLE.replace("n: 6", "n: 9")).variants]
    assert small[:6] == big[:6]


def test_a_different_seed_draws_different_points(project):
    a = [v.axes for v in expand(project, SAMPLE).variants]
    b = [v.axes for v in expand(project, SAMPLE.replace("seed: 0", "seed: 1")).variants]
    assert a != b


@pytest.mark.parametrize("method", ["sobol", "lhs"])
def test_quasi_random_methods_are_seeded(project, method):
    body = SAMPLE.replace("n: 6", "n: 8").replace("seed: 0\n", f"seed: 3\n  method: {method}\n")
    a = [v.axes for v in expand(project, body).variants]
    b = [v.axes for v in expand(project, body).variants]
    assert a == b and len({json.dumps(x, sort_keys=True) for x in a}) == 8


def test_lhs_puts_one_point_in_each_stratum(project):
    body = """\
sample:
  n: 10
  seed: 5
  method: lhs
  axes:
    training.lr: {uniform: [0.0, 1.0]}
"""
    lrs = sorted(v.axes["training.lr"] for v in expand(project, body).variants)
    assert [int(x * 10) for x in lrs] == list(range(10))


@pytest.mark.parametrize(
    "axes, message",
    [
        ("training.lr: {uniform: [1.0, 0.5]}", "uniform needs low < high"),
        ("training.lr: {log_uniform: [0.0, 1.0]}", "0 < low < high"),
        ("training.lr: {normal: [0, 1]}", "unknown key `normal`"),
        ("training.lr: {uniform: ['0', 1]}", "uniform"),
        ("training.lrr: {uniform: [0.0, 1.0]}", "did you mean `training.lr`?"),
        # drew `.inf` (hi - lo overflows), or ended in an OverflowError (exit 70)
        ("training.lr: {uniform: [-1.0e308, 1.0e308]}", "a finite span"),
        ("training.lr: {uniform: [0.0, .inf]}", "finite ends"),
        ("training.lr: {log_uniform: [1.0e-6, .inf]}", "finite ends"),
        ("training.group: {int_uniform: [0, " + str(10**400) + "]}", "within ±2**53"),
        ("training.group: {int_uniform: [-9007199254740993, 0]}", "within ±2**53"),
    ],
)
def test_bad_sample_axes_are_errors_at_their_line(project, axes, message):
    body = f"sample:\n  n: 3\n  seed: 0\n  axes:\n    {axes}\n"
    with pytest.raises(SpecError) as err:
        expand(project, body)
    text = err.value.format()
    assert message in text and "demo.yaml:" in text


def test_a_choice_only_sample_that_repeats_itself_is_an_error(project):
    body = "sample:\n  n: 5\n  seed: 0\n  axes:\n    streamer.rollouts: {choice: [2, 4]}\n"
    with pytest.raises(SpecError, match="repeats point"):
        expand(project, body)


def test_labels_that_collide_at_the_chosen_digits_ask_for_more_digits(project):
    body = "sample:\n  n: 50\n  seed: 0\n  digits: 1\n  axes:\n    training.lr: {uniform: [0.1, 0.2]}\n"
    with pytest.raises(SpecError, match="both read 'lr0.2' at 1 significant digits") as err:
        expand(project, body)
    assert "raise `digits`" in (err.value.hint or "")
    ok = body.replace("digits: 1", "digits: 6")
    assert len(expand(project, ok).variants) == 50


def test_a_sample_axis_overwritten_by_an_ablation_step_is_an_error(project):
    body = SAMPLE + "ablation:\n  - {name: A1}\n  - {name: A2, set: {training.lr: 0.1}}\n"
    with pytest.raises(SpecError, match="sample axis"):
        expand(project, body)


@settings(max_examples=200, deadline=None)
@given(
    lo=st.floats(1e-12, 1e6, allow_nan=False),
    span=st.floats(1.0001, 1e6, allow_nan=False),
    u=st.floats(0.0, 1.0, exclude_max=True),
)
def test_every_distribution_maps_the_unit_interval_into_its_range(lo, span, u):
    hi = lo * span
    v = sampling.value_at(sampling.Distribution(log_uniform=[lo, hi]), u)
    assert lo * (1 - 1e-11) <= v <= hi * (1 + 1e-11)
    v = sampling.value_at(sampling.Distribution(uniform=[lo, hi]), u)
    assert lo * (1 - 1e-11) <= v <= hi * (1 + 1e-11)
    k = sampling.value_at(sampling.Distribution(int_uniform=[-3, 3]), u)
    assert -3 <= k <= 3
    assert sampling.value_at(sampling.Distribution(choice=["a", "b", "c"]), u) in ("a", "b", "c")


def test_same_values_and_bytes_under_other_hash_seeds_and_directories(tmp_path):
    """The random-search determinism test: two copies of a project, two hash seeds, same bytes."""
    outs = []
    for i, hash_seed in enumerate(("0", "12345")):
        root = tmp_path / "a" if i == 0 else tmp_path / "b" / "nested"
        root.mkdir(parents=True)
        write_project(root, SAMPLE)
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [sys.executable, "-m", "sweepgen", "render", "specs/demo.yaml"],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
        outs.append(root / "generated" / "demo")
    a, b = outs
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and len(names) == 13  # 12 configs + the lock
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_the_example_sample_spec_draws_what_its_committed_output_holds(monkeypatch):
    """specs/sample_search.yaml's committed generated/ output is the cross-platform golden record:
    `sweepgen check` in CI on any machine fails if a draw changed (in-process: other hash seeds and
    folders are the test above's)."""
    repo = Path(__file__).resolve().parents[2]
    assert (repo / "specs" / "sample_search.yaml").is_file()
    monkeypatch.chdir(repo)
    out = CliRunner().invoke(main, ["check", "specs/sample_search.yaml"])
    assert out.exit_code == 0, out.output


def test_long_variant_names_get_a_short_hashed_form_and_the_values_stay_whole(project):
    body = """\
grid:
  streamer.strategy:
    - a_rather_long_reward_shaping_strategy_name_number_one
    - a_rather_long_reward_shaping_strategy_name_number_two
  training.lr: [1.0e-5, 2.0e-5]
"""
    e = expand(project, body)
    names = [v.name for v in e.variants]
    assert all(len(n) <= 60 for n in names) and len(set(names)) == 4
    assert names[0].startswith("strategya_rather_long_reward_shaping_strategy_name-")
    assert names[0][-9] == "-" and all(c in "0123456789abcdef" for c in names[0][-8:])
    assert e.variants[0].axes["streamer.strategy"].endswith("number_one")
    # deterministic: the same spec gives the same short names
    assert names == [v.name for v in expand(project, body).variants]
