"""A search sweep in `report` (table, --html page), `status` and `list` (issue 23): the best-so-far
computation as properties, then one real search on the fast fake trainer (pruning, a constraint that
refuses points) read back through the CLI, the page's data and headless Chromium, all checked against
the study as Optuna itself opens it."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from search_support import RUN_ARGS, study, sweepgen, write_search_project

from sweepgen.run.report_search import Trial, counted, curves, running_best, trials_of
from sweepgen.run.search_view import SearchView, TrialRow

SWEEP = "generated/fake_search"
STATES = ("complete", "pruned", "failed", "running")
values = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=32))


# -- the pure computation ------------------------------------------------------------------------


@given(st.lists(values, max_size=60), st.sampled_from(["max", "min"]))
def test_running_best_is_the_running_max_or_min_of_the_finite_values(xs, mode):
    out = running_best(xs, mode)
    assert len(out) == len(xs)
    pick = max if mode == "max" else min
    for i in range(len(xs)):
        seen = [v for v in xs[: i + 1] if v is not None and math.isfinite(v)]
        assert out[i] == (pick(seen) if seen else None)
    present = [v for v in out if v is not None]
    # monotone in the better direction, and never worse once a value exists
    assert present == sorted(present, reverse=mode == "min")
    first = next((i for i, v in enumerate(out) if v is not None), len(out))
    assert all(v is not None for v in out[first:])


def _trial(number: int, state: str, value: float | None, steps: int, ended: float | None) -> Trial:
    return Trial(number, f"t{number:04d}", state, value, {"x": 0.1}, None, None, steps, ended)


trials = st.lists(
    st.tuples(
        st.sampled_from(STATES),
        st.floats(-10, 10, allow_nan=False),
        st.integers(0, 50),
        st.floats(0, 100, allow_nan=False),
    ),
    max_size=40,
).map(
    lambda rows: [
        _trial(i, s, None if s == "failed" else v, n, None if s == "running" else t)
        for i, (s, v, n, t) in enumerate(rows)
    ]
)


@given(trials, st.sampled_from(["max", "min"]))
def test_only_complete_trials_count_and_each_axis_is_in_its_order(ts, mode):
    """Pruned values (however good), failed and running trials never move the best-so-far line."""
    by_axis = {c["key"]: c for c in curves(ts, mode)}
    pick = max if mode == "max" else min
    complete = [t.value for t in ts if t.state == "complete"]
    assert by_axis["trial"]["x"] == [t.number for t in ts]
    if ts:
        assert by_axis["trial"]["best"][-1] == (pick(complete) if complete else None)
    assert by_axis["trial"]["best"] == running_best([counted(t) for t in ts], mode)
    ended = sorted((t for t in ts if t.state != "running"), key=lambda t: (t.ended_s, t.number))
    if not ended:
        assert set(by_axis) == {"trial"}
        return
    assert by_axis["time"]["x"] == [t.ended_s for t in ended] == sorted(by_axis["time"]["x"])
    assert by_axis["time"]["trials"] == [t.name for t in ended]
    if any(t.steps for t in ended):
        assert by_axis["steps"]["x"][-1] == sum(t.steps for t in ended)
        assert by_axis["steps"]["x"] == sorted(by_axis["steps"]["x"])
        assert by_axis["steps"]["best"] == by_axis["time"]["best"]
    else:
        assert "steps" not in by_axis  # no trial logged a step: no steps axis


def test_a_pruned_trials_better_last_value_is_not_the_best():
    ts = [
        _trial(0, "complete", 0.5, 10, 1.0),
        _trial(1, "pruned", 0.9, 3, 2.0),  # better, but stopped early: no result
        _trial(2, "failed", None, 0, 3),
    ]
    assert [c["best"] for c in curves(ts, "max")] == [[0.5, 0.5, 0.5]] * 3


def test_trials_of_sums_the_steps_of_every_repeat_and_times_from_the_first_start():
    t0 = datetime(2026, 1, 1, 12, 0, 0)

    def s(seconds: float) -> timedelta:
        return timedelta(seconds=seconds)

    view = SearchView(block=None)  # type: ignore[arg-type]
    view.rows = [
        TrialRow(0, "t0000", "complete", 0.7, {"x": 1}, None, 0, t0, t0 + s(4)),
        TrialRow(1, "t0001", "pruned", 0.2, {"x": 2}, "pruned at step 3", 3, t0 + s(1), t0 + s(2)),
        TrialRow(2, "t0002", "running", None, {"x": 3}, None, 0, t0 + s(2), None),
    ]
    steps = {"t0000_r0": 10, "t0000_r1": 12, "t0001_r0": 4, "t0001_r1": 5, "t0002_r0": 1}
    out = trials_of(view, steps, repeats=2)
    assert [(t.steps, t.ended_s, t.pruned_at) for t in out] == [(22, 4.0, None), (9, 2.0, 3), (1, None, None)]


# -- one real search, read back ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> Path:
    """10 trials of the fake trainer, 2 at once, ASHA from step 2, and a constraint refusing x >= 0.85."""
    root = tmp_path_factory.mktemp("search_report")
    base = {"x": 0.5, "y": 0.5, "steps": 30, "step_s": 0.03, "seed": 0, "noise": 0.0, "output_dir": None}
    prune = {"method": "asha", "min_steps": 2, "reduction": 3}
    constraint = {"expr": "x < 0.85", "message": "x below 0.85"}
    search = {"n": 10, "parallel": 2, "sampler": "random", "prune": prune}
    write_search_project(root, search, base=base, constraints=[constraint])
    assert sweepgen(root, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(root, "run", SWEEP, *RUN_ARGS)
    assert done.returncode == 0, done.stdout + done.stderr
    states = {t.state.name for t in study(root).get_trials()}
    assert {"COMPLETE", "PRUNED", "FAIL"} <= states, "the seeded search has each kind of trial"
    return root


def _best(root: Path):
    return study(root).best_trial  # Optuna's own best: complete trials only


def test_report_ranks_by_the_search_metric_and_names_the_best_trials_diff(searched):
    done = sweepgen(searched, "report", SWEEP, "--no-plot", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["run"]: r for r in json.loads(done.stdout)}
    pruned = [t for t in study(searched).get_trials() if t.state.name == "PRUNED"]
    for t in pruned:  # the table says pruned, not cancelled, with the step
        row = rows[f"t{t.number:04d}"]
        assert row["state"] == "pruned" and row["note"].startswith(f"at step {t.last_step}")
    assert "final_score" in next(iter(rows.values()))  # the search's metric without --metric
    shown = sweepgen(searched, "report", SWEEP, "--no-plot")
    text = shown.stdout
    assert "no seed path" not in shown.stderr  # one run per point is a search's design, no news
    best = _best(searched)
    name = f"t{best.number:04d}"
    assert f"best: {name}, score = {best.value:.6g} (max)" in text
    diff = text.split(f"{name} differs from the base in:\n", 1)[1].splitlines()[:3]
    assert diff[:2] == [f"  x: 0.5 -> {best.params['x']!r}", f"  y: 0.5 -> {best.params['y']!r}"]
    assert "output_dir" not in diff[2]  # it names the run: every trial differs there
    assert "failed: refused before it ran: constraint failed" in text
    # the runs folder: the one sweep its runs name is the search, reported the same way
    from_runs = sweepgen(searched, "report", "runs/fake_search", "--no-plot")
    assert from_runs.returncode == 0, from_runs.stderr
    assert f"best: {name}, score = {best.value:.6g} (max)" in from_runs.stdout
    assert "final_score" in from_runs.stdout


def test_status_and_list_know_the_search(searched):
    status = sweepgen(searched, "status", SWEEP)
    assert status.returncode == 0 and "PRUNED" in status.stdout
    trials = study(searched).get_trials()
    counts = {s: sum(t.state.name == s for t in trials) for s in ("COMPLETE", "PRUNED", "FAIL")}
    assert (
        f"search: 10/10 trials finished ({counts['COMPLETE']} complete, {counts['PRUNED']} pruned, "
        f"{counts['FAIL']} failed)" in status.stdout
    )
    listed = sweepgen(searched, "list", "specs/s.yaml", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    shown = {v["name"]: (v["state"], v["value"]) for v in json.loads(listed.stdout)["variants"]}
    expected = {
        f"t{t.number:04d}": (f"pruned at step {t.last_step}", None)
        if t.state.name == "PRUNED"
        else ("complete", t.value)
        for t in trials
        if t.state.name != "FAIL"  # refused points were never rendered: no variant
    }
    assert shown == expected


def _page_data(html: str) -> dict:
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert raw is not None
    return json.loads(raw.group(1))


@pytest.fixture(scope="module")
def page(searched) -> Path:
    done = sweepgen(searched, "report", SWEEP, "--html", "--no-plot")
    assert done.returncode == 0, done.stdout + done.stderr
    return searched / "runs" / "fake_search" / "report.html"


def _expected_best(root: Path) -> list[float | None]:
    """Best so far by trial number, straight from the study: complete trials' values only."""
    best: list[float | None] = []
    for t in sorted(study(root).get_trials(), key=lambda t: t.number):
        prev = best[-1] if best else None
        value = t.value if t.state.name == "COMPLETE" else None
        best.append(value if value is not None and (prev is None or value > prev) else prev)
    return best


@pytest.mark.plot
def test_the_page_data_holds_every_trial_the_best_so_far_and_the_diff(page, searched):
    search = _page_data(page.read_text(encoding="utf-8"))["search"]
    trials = {t.number: t for t in study(searched).get_trials()}
    assert [t["number"] for t in search["trials"]] == sorted(trials)
    for shown in search["trials"]:
        t = trials[shown["number"]]
        assert shown["params"] == t.params
        if t.state.name == "PRUNED":
            assert shown["state"] == "pruned" and shown["pruned_at"] == t.last_step
            run = searched / "runs" / "fake_search" / shown["name"]
            logged = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
            assert shown["steps"] == logged[-1] >= t.last_step
    by_axis = {c["key"]: c for c in search["curves"]}
    assert by_axis["trial"]["best"] == _expected_best(searched)
    assert set(by_axis) == {"trial", "steps", "time"}
    best = _best(searched)
    assert search["best"]["name"] == f"t{best.number:04d}"
    assert search["best"]["diff"] == [["x", 0.5, best.params["x"]], ["y", 0.5, best.params["y"]]]


@pytest.mark.browser
@pytest.mark.plot
def test_the_search_page_in_headless_chromium(page, searched, chromium, tmp_path):
    errors: list[str] = []
    view = chromium.new_page(viewport={"width": 1400, "height": 900})
    view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    view.on("pageerror", lambda e: errors.append(str(e)))
    view.goto(page.resolve().as_uri())
    view.wait_for_selector("body[data-ready='1']", timeout=15_000)

    def traces() -> dict:
        return view.evaluate(
            "() => Object.fromEntries(document.getElementById('search-curve').data"
            ".map(t => [t.name.split(' (')[0].split(':')[0],"
            " {x: t.x, y: t.y, symbol: (t.marker || {}).symbol}]))"
        )

    drawn = traces()
    trials = sorted(study(searched).get_trials(), key=lambda t: t.number)
    assert drawn["best so far"]["y"] == _expected_best(searched)
    assert drawn["best so far"]["x"] == [t.number for t in trials]
    pruned = [t for t in trials if t.state.name == "PRUNED"]
    assert drawn["pruned"]["symbol"] == "x" and drawn["pruned"]["x"] == [t.number for t in pruned]
    assert drawn["pruned"]["y"] == [t.intermediate_values[t.last_step] for t in pruned]
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    assert drawn["complete"]["x"] == [t.number for t in complete]
    best = _best(searched)
    assert drawn["best"]["x"] == [best.number] and drawn["best"]["symbol"] == "star"

    view.select_option("#search-x", "steps")  # the same line against training steps used
    steps_curve = traces()["best so far"]
    assert steps_curve["x"] == sorted(steps_curve["x"]) and steps_curve["y"][-1] == best.value

    rows = view.evaluate(
        "() => Array.from(document.querySelectorAll('#trials-table tbody tr'))"
        ".map(r => [r.className, r.cells[0].textContent, r.cells[3].textContent])"
    )
    assert len(rows) == len(trials)
    for t, (cls, _, pruned_at) in zip(trials, rows):
        state = {"COMPLETE": "complete", "PRUNED": "pruned", "FAIL": "failed"}[t.state.name]
        assert cls.split()[0] == f"state-{state}"
        assert pruned_at == (str(t.last_step) if state == "pruned" else "–")
    assert [name for cls, name, _ in rows if "best" in cls.split()] == [f"t{best.number:04d} (best)"]
    color = view.evaluate(
        "() => getComputedStyle(document.querySelector('#trials-table tr.state-pruned td')).color"
    )
    assert color == "rgb(138, 109, 0)"  # pruned rows read apart from complete ones
    heading = view.inner_text("#best-trial h3")
    assert heading.startswith(f"Best trial: t{best.number:04d}")
    diff = view.evaluate(
        "() => Array.from(document.querySelectorAll('#best-diff tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert diff == [["x", "0.5", repr(best.params["x"])], ["y", "0.5", repr(best.params["y"])]]
    runs_states = view.evaluate(
        "() => Array.from(document.querySelectorAll('#runs-table tbody tr')).map(r => r.cells[2].textContent)"
    )
    assert sum(s.startswith("pruned (at step") for s in runs_states) == len(pruned)

    view.select_option("#search-x", "trial")
    shot = tmp_path / "search_report_page.png"
    view.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")
    view.close()
    assert errors == []
