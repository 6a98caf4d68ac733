"""A seed group whose runs logged the metric at disjoint steps (evals offset per seed) has no step
where a mean over its seeds exists: the curve is said to be missing, never drawn as an empty line
that reads as "no data" (terminal notes, report.png, the page's curves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.run.core.base import RunState
from sweepgen.run.report import collect as rep
from sweepgen.run.report import page
from sweepgen.run.report.groups import Group

# seed k logs the eval only at steps = k (mod 3): no step is shared by the three seeds
OFFSET = {f"a_s{k}": [(s, 0.1 * s + k) for s in range(1, 31) if s % 3 == k % 3] for k in (1, 2, 3)}
# the other group: every seed at every 5th step, one seed also at the steps between
ALIGNED = {f"b_s{k}": [(s, 0.2 * s) for s in range(5, 31, 5 if k < 3 else 1)] for k in (1, 2, 3)}


def _record(name: str, curve: list[tuple[int, float]]) -> rep.RunRecord:
    return rep.RunRecord(name, Path(name), RunState.FINISHED, {}, {}, curve=curve)


def _report() -> rep.Report:
    runs = tuple(_record(n, c) for n, c in {**OFFSET, **ALIGNED}.items())
    return rep.Report((), runs, Path("."), "lock")


GROUPS = [Group("a", tuple(OFFSET), {}), Group("b", tuple(ALIGNED), {})]
OBJECTIVE = {"label": "eval_acc", "mode": "max"}


def test_a_group_with_no_shared_step_says_it_has_no_curve() -> None:
    curves = {c.label: c for c in rep.curves(_report(), GROUPS)}
    assert curves["a"].steps == ()
    (note,) = curves["a"].notes
    assert note.startswith("a: no curve: its 3 runs logged the metric at no step in common")
    (partial,) = curves["b"].notes
    assert partial == "b: plotted at the 6 steps logged by all 3 runs (of 26)"


def _page_runs() -> list[dict[str, object]]:
    return [
        {"name": n, "score": 1.0, "series": {"eval_acc": c}, "state": "finished"}
        for n, c in {**OFFSET, **ALIGNED}.items()
    ]


def test_the_page_draws_no_empty_curve_and_says_why() -> None:
    curves, note = page._group_curves(
        {"label": "eval_acc", "mode": "max"}, _page_runs(), GROUPS, ["eval_acc"]
    )
    assert [c["group"] for c in curves["eval_acc"]] == ["b"]  # a's empty line is not drawn
    assert note is not None
    assert "eval_acc: a: no curve: its 3 runs logged the metric at no step in common" in note
    assert "b: plotted at the 6 steps logged by all 3 runs (of 26)" in note


def test_a_metric_no_group_can_draw_is_not_offered_yet_is_said() -> None:
    runs = [r for r in _page_runs() if str(r["name"]).startswith("a")]
    curves, _pruned, shown, note = page._curves(
        {"label": "eval_acc", "mode": "max"}, runs, GROUPS[:1], ["eval_acc"]
    )
    assert curves["eval_acc"] == [] and shown == []
    assert note is not None and "no step in common" in note


@pytest.mark.plot
def test_the_png_of_groups_with_no_shared_step_says_so_in_the_plot(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    import matplotlib.axes

    real = matplotlib.axes.Axes.text

    def text(
        self: matplotlib.axes.Axes, x: float, y: float, s: str, *args: object, **kwargs: object
    ) -> object:
        said.append(s)
        return real(self, x, y, s, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "text", text)
    lines = rep.curves(_report(), GROUPS[:1])
    assert rep.plot_png(lines, "t", "eval_acc").startswith(b"\x89PNG")
    assert said == [rep.NO_SHARED_STEP]
