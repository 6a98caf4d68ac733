"""A search sweep in `report` (table, --html page), `status` and `list`: the best-so-far
computation as properties, then one real search on the fast fake trainer (pruning, a constraint that
refuses points) read back through the CLI, the page's data and headless Chromium, all checked against
the study as Optuna itself opens it."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from search_support import RUN_ARGS, cli, study, sweepgen, write_search_project

from sweepgen.run.core.base import RunState, read_status, write_status
from sweepgen.run.report.search_section import Trial, counted, curves, running_best, section, trials_of
from sweepgen.run.search.view import SearchView, TrialRow, summarize

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
    assert cli(root, "render", "specs/s.yaml").returncode == 0
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
    # one objective name: the search's metric as the search names it (its last logged value)
    assert "score" in next(iter(rows.values())) and "final_score" not in next(iter(rows.values()))
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
    assert "best run by score (max is better)" in from_runs.stdout
    assert "final_score" not in from_runs.stdout


def test_a_pruned_trial_whose_run_finished_before_its_stop_is_reported_pruned(searched, tmp_path):
    """The pruner decides from metrics read after they were logged: a run can finish before the stop
    lands. The study holds the trial as pruned (no value), so the report never scores that run."""
    root = tmp_path / "race"
    shutil.copytree(searched, root, symlinks=True)
    trial = min((t for t in study(root).get_trials() if t.state.name == "PRUNED"), key=lambda t: t.number)
    name = f"t{trial.number:04d}"
    (run_dir,) = [p.parent for p in (root / "runs").rglob("sweepgen_status.json") if p.parent.name == name]
    stopped = read_status(run_dir)
    assert stopped is not None and stopped.state is RunState.CANCELLED
    write_status(run_dir, dataclasses.replace(stopped, state=RunState.FINISHED, reason=None, exit_code=0))
    (run_dir / (stopped.done_file or "summary.json")).write_text("{}\n")  # its done file, written last
    done = sweepgen(root, "report", SWEEP, "--no-plot", "--format", "json")
    assert done.returncode == 0, done.stderr
    row = {r["run"]: r for r in json.loads(done.stdout)}[name]
    assert row["state"] == "pruned", row
    assert row["note"].startswith(f"at step {trial.last_step}") and "finished before its stop" in row["note"]
    shown = sweepgen(root, "report", SWEEP, "--no-plot").stdout
    assert f"best run by score (max is better): {name} " not in shown
    assert f"best: t{_best(root).number:04d}, score" in shown


def test_status_and_list_know_the_search(searched):
    status = cli(searched, "status", SWEEP)
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
    trust = view.inner_text("#best-trust")  # one noisy value, picked among all: said under the heading
    assert trust.startswith(f"t{best.number:04d}: 1 seed, the best of {len(trials)} trial(s): optimistic")
    diff = view.evaluate(
        "() => Array.from(document.querySelectorAll('#best-diff tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert diff == [["x", "0.5", repr(best.params["x"])], ["y", "0.5", repr(best.params["y"])]]
    runs_states = view.evaluate(
        "() => Array.from(document.querySelectorAll('#runs-table tbody tr')).map(r => r.cells[2].textContent)"
    )
    assert sorted(s for s in runs_states if s.startswith("pruned")) == sorted(
        f"pruned at step {t.last_step} (asha)" for t in pruned
    )

    view.select_option("#search-x", "trial")
    shot = tmp_path / "search_report_page.png"
    view.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")
    view.close()
    assert errors == []


def _logged(root: Path, run: str) -> dict[int, float]:
    lines = (root / "runs" / "fake_search" / run / "metrics.jsonl").read_text().splitlines()
    return {row["step"]: row["score"] for row in map(json.loads, lines) if "score" in row}


@pytest.mark.plot
def test_the_page_names_one_objective_and_holds_each_pruned_runs_curve_to_its_stop(page, searched):
    data = _page_data(page.read_text(encoding="utf-8"))
    assert data["subtitle"].startswith("objective: score (max is better); the search's metric")
    assert data["objective"]["label"] == data["search"]["metric"] == "score"
    pruned = sorted(
        (t for t in study(searched).get_trials() if t.state.name == "PRUNED"), key=lambda t: t.number
    )
    drawn = {c["run"]: c for c in data["pruned_curves"]["score"]}
    assert list(drawn) == [f"t{t.number:04d}" for t in pruned]
    for t in pruned:
        curve, logged = drawn[f"t{t.number:04d}"], _logged(searched, f"t{t.number:04d}")
        assert curve["steps"] == sorted(logged) and curve["values"] == [logged[s] for s in sorted(logged)]
        assert curve["stop"] == [t.last_step, logged[t.last_step]]  # where the pruner decided
    assert "score" in data["curve_metrics"]


@pytest.mark.plot
def test_a_runs_folder_reported_from_another_folder_finds_its_search(searched, tmp_path):
    """Status files name the sweep folder from the folder `run` was started in; from runs/ that
    path names nothing here, but it does from a folder above the runs."""
    done = sweepgen(
        searched / "runs", "report", "fake_search", "--html", "--no-plot", "--report-dir", str(tmp_path)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    best = _best(searched)
    assert f"best: t{best.number:04d}, score = {best.value:.6g} (max)" in done.stdout
    assert "no sweep lock" not in done.stderr  # the lock's values, not each run's config.yaml
    data = _page_data((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert data["search"]["best"]["name"] == f"t{best.number:04d}"
    assert data["objective"]["label"] == "score"


def test_runs_whose_sweep_is_found_nowhere_say_so_and_how_to_get_it(searched, tmp_path):
    import shutil

    shutil.copytree(searched / "runs" / "fake_search", tmp_path / "moved" / "fake_search")
    done = sweepgen(tmp_path, "report", "moved/fake_search", "--no-plot")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "name the sweep folder generated/fake_search" in done.stderr
    assert "sweepgen report <path to generated/fake_search>" in done.stderr
    # runs that carry their config.yaml are reported from it, and the note says what is missing
    for run in (tmp_path / "moved" / "fake_search").glob("t*/"):
        (run / "config.yaml").write_text(f"x: {run.name}\n")
    done = sweepgen(tmp_path, "report", "moved/fake_search", "--no-plot")
    assert done.returncode == 0, done.stderr
    note = "note: the runs' status files name the sweep folder generated/fake_search"
    assert note in done.stderr and "no search section" in done.stderr


_BOX = """() => {
  const box = document.getElementById('trials').getBoundingClientRect();
  const cells = Array.from(document.querySelectorAll('#trials-table td.reason'));
  return {page: document.documentElement.scrollWidth, box: [box.left, box.right],
    scroll: [document.getElementById('trials').scrollWidth, document.getElementById('trials').clientWidth],
    cells: cells.map(c => [c.getBoundingClientRect().right, c.scrollWidth, c.clientWidth, c.textContent])};
}"""


@pytest.mark.browser
@pytest.mark.plot
def test_the_search_page_agrees_on_its_objective_draws_pruned_curves_and_fits_its_width(
    page, searched, chromium, tmp_path
):
    errors: list[str] = []
    view = chromium.new_page(viewport={"width": 1280, "height": 900})
    view.on("pageerror", lambda e: errors.append(str(e)))
    view.goto(page.resolve().as_uri())
    view.wait_for_selector("body[data-ready='1']", timeout=15_000)
    # one objective name: header, the runs table, the best-so-far curve, the trials table
    assert view.inner_text(".sub").startswith("objective: score (max is better)")
    heads = view.evaluate(
        "() => ['#runs-table', '#trials-table'].map(t => Array.from(document.querySelectorAll(t + ' th'))"
        ".map(h => h.textContent))"
    )
    assert heads[0][3] == "score" and heads[1][2].startswith("score ")
    ended = view.evaluate(
        "() => Array.from(document.querySelectorAll('#trials-table tbody tr'))"
        ".map(r => r.cells[5].textContent)"
    )
    assert all(re.fullmatch(r"\d+\.\d", e) for e in ended), ended  # tenths, 4.0 not 4
    title = view.evaluate("() => document.getElementById('search-curve').layout.title.text")
    assert title.startswith("best score so far")

    # pruned runs: dashed lines, one legend entry, a cross at each pruner's step
    pruned = sorted(
        (t for t in study(searched).get_trials() if t.state.name == "PRUNED"), key=lambda t: t.number
    )
    traces = view.evaluate(
        "() => document.getElementById('curves').data.map(t => ({name: t.name, dash: (t.line || {}).dash,"
        " legend: t.showlegend !== false, x: t.x, y: t.y, symbol: (t.marker || {}).symbol,"
        " group: t.legendgroup}))"
    )
    dashed = [t for t in traces if t["dash"] == "dash"]
    assert len(dashed) == len(pruned)
    assert [t["name"] for t in dashed if t["legend"]] == [f"pruned runs ({len(pruned)}; dashed, × = stopped)"]
    (stops,) = [t for t in traces if t["symbol"] == "x" and t["group"] == "pruned"]
    assert stops["x"] == [t.last_step for t in pruned]
    assert stops["y"] == [_logged(searched, f"t{t.number:04d}")[t.last_step] for t in pruned]
    solid = [t for t in traces if t["dash"] is None and t["legend"]]
    assert solid, "the finished runs' curves are drawn as before"

    # the trials table stays on the page: reasons wrap at 1280 px, the table scrolls in its box at 800
    for width in (1280, 800):
        view.set_viewport_size({"width": width, "height": 900})
        _settled(view, width)
        box = view.evaluate(_BOX)
        assert box["page"] <= width, f"the page scrolls sideways at {width} px"
        assert box["box"][1] <= width
        for _, scroll, client, text in box["cells"]:
            assert scroll <= client + 1, f"{text!r} overflows its cell"
        if width == 1280:
            assert box["scroll"][0] <= box["scroll"][1] + 1, "at 1280 px the whole table fits"
            assert all(right <= box["box"][1] + 1 for right, *_ in box["cells"])
        shot = tmp_path / f"search_report_{width}.png"
        view.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
    # docs/search_report_screenshot.png: the page at 1280 px down to the learning curves
    view.set_viewport_size({"width": 1280, "height": 900})
    _settled(view, 1280)
    bottom = view.evaluate("() => document.getElementById('curves').getBoundingClientRect().bottom + scrollY")
    shot = tmp_path / "search_report_docs.png"
    view.screenshot(
        path=str(shot), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": bottom + 16}
    )
    print(f"screenshot: {shot}")
    view.close()
    assert errors == []


def _settled(view, width: int) -> None:
    """After a resize: the window has the new width, every responsive plot was redrawn to its box
    (plotly redraws on the resize event), and two frames have been laid out since."""
    view.wait_for_function(
        "w => window.innerWidth === w && Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".every(g => g._fullLayout && Math.abs(g._fullLayout.width - g.getBoundingClientRect().width) < 2)",
        arg=width,
        timeout=30_000,
    )
    view.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def test_pruned_curves_stop_at_the_pruners_step_and_are_capped_with_a_note():
    from sweepgen.run.report import page as report_page

    def run(i: int, state: str, pruned_at: int | None) -> dict:
        series = {"score": tuple((s, s / 10 + i) for s in range(1, 8))}
        return {"name": f"t{i:04d}", "state": state, "series": series, "pruned_at": pruned_at}

    n = report_page.MAX_PRUNED_CURVES + 5
    runs = [run(0, "finished", None), run(1, "pruned", 4), run(2, "pruned", 99)]
    runs += [run(i, "pruned", 3) for i in range(3, n + 1)]
    curves, note = report_page._pruned_curves(runs, ["score", "loss"])
    shown = curves["score"]
    assert len(shown) == report_page.MAX_PRUNED_CURVES and curves["loss"] == []
    assert note == f"curves of the last {report_page.MAX_PRUNED_CURVES} pruned runs of {n}"
    assert shown[-1]["run"] == f"t{n:04d}" and shown[-1]["stop"] == [3, 0.3 + n]
    first, _ = report_page._pruned_curves(runs[:3], ["score"])
    # a step the run never logged (the stop came before it logged it): its last logged step instead
    assert [c["stop"] for c in first["score"]] == [[4, 1.4], [7, 2.7]]


@pytest.mark.plot
def test_a_log_uniform_search_axis_is_drawn_on_a_log_axis_whatever_its_span(tmp_path):
    # x spans 10x only: the values alone would be drawn linear, the spec says log
    axes = {"x": {"log_uniform": [0.1, 1.0]}, "y": {"uniform": [0.0, 1.0]}}
    write_search_project(tmp_path, {"n": 4, "sampler": "random", "axes": axes})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    done = sweepgen(tmp_path, "run", SWEEP, *RUN_ARGS)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = sweepgen(tmp_path, "report", SWEEP, "--html", "--no-plot")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    data = _page_data((tmp_path / "runs/fake_search/report.html").read_text(encoding="utf-8"))
    assert {p["path"]: p["log"] for p in data["params"]} == {"x": True, "y": False}


def test_the_best_trial_line_names_the_trials_tied_with_it():
    class Block:
        n, metric, mode, sampler, prune, repeats = 4, "accuracy", "max", "tpe", None, 1

    view = SearchView(block=Block())  # type: ignore[arg-type]
    view.rows = [
        TrialRow(0, "t0000", "complete", 0.75, {"x": 1}, None, 0),
        TrialRow(1, "t0001", "complete", 0.5, {"x": 2}, None, 0),
        TrialRow(2, "t0002", "complete", 0.75, {"x": 3}, None, 0),
        TrialRow(3, "t0003", "pruned", 0.75, {"x": 4}, "pruned at step 3", 3),  # no result: not a tie
    ]
    view.best = view.rows[0]
    best_line = view.lines()[1]
    assert best_line == "best: t0000, accuracy = 0.75 (max) at x=1; tied with t0002"
    # one noisy value, picked as the best of four: no interval can be given, and the line says so
    assert view.lines()[2].startswith("  (1 seed, the best of 4 trial(s): optimistic, and no interval")
    page = section(
        trials_of(view, {}, 1), metric="accuracy", mode="max", best="t0000", diff=[], tied=view.tied()
    )
    assert page["best"]["tied"] == ["t0002"]  # the page says it under "Best trial"
    view.rows[2] = TrialRow(2, "t0002", "complete", 0.7, {"x": 3}, None, 0)
    assert "tied" not in view.lines()[1]


def test_an_infinite_value_is_never_the_best_trial():
    # a diverged run's reward told as +inf (the controller tells infinities as they are): the page's
    # best-so-far line skips it, and so must the "best:" line `report` and `status` print
    class Study:
        def get_trials(self, deepcopy):
            return [_optuna_trial(0, 0.5), _optuna_trial(1, math.inf), _optuna_trial(2, 0.7)]

    class Block:
        n, metric, mode, sampler, prune = 3, "reward", "max", "tpe", None

    view = summarize(Study(), Block())  # type: ignore[arg-type]
    assert view.best is not None and view.best.name == "t0002"
    assert running_best([0.5, math.inf, 0.7], "max") == [0.5, 0.5, 0.7]


def _optuna_trial(number, value):
    from types import SimpleNamespace

    state = SimpleNamespace(name="COMPLETE")
    return SimpleNamespace(
        number=number,
        state=state,
        value=value,
        intermediate_values={},
        params={},
        user_attrs={},
        datetime_start=None,
        datetime_complete=None,
    )
