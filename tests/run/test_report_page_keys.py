"""The Python <-> JavaScript contract of report.html: the page's script and template read only keys
that the page's types (sweepgen.run.report.page_types) define, and the statistics files' columns
are their row type's keys."""

from __future__ import annotations

import re
from pathlib import Path

from sweepgen.run.report import page_types, stats_files

REPORT = Path(__file__).resolve().parents[2] / "sweepgen" / "run" / "report"


def _read(pattern: str, *names: str) -> set[str]:
    return {m for name in names for m in re.findall(pattern, (REPORT / name).read_text())}


def test_the_page_reads_only_keys_its_type_defines():
    top = _read(r"\bpage\.([a-z_]+)", "page.js", "page.html.j2")
    assert top and top <= set(page_types.PageData.__annotations__), top - set(
        page_types.PageData.__annotations__
    )
    runs = _read(r"\brun\.([a-z_]+)", "page.js")  # `for (const run of page.runs)`
    assert runs and runs <= set(page_types.PageRun.__annotations__), runs - set(
        page_types.PageRun.__annotations__
    )
    objective = _read(r"\bobj\.([a-z_]+)", "page.js") | _read(r"\bpage\.objective\.([a-z_]+)", "page.html.j2")
    assert objective <= set(page_types.Objective.__annotations__), objective


def test_build_returns_every_key_of_the_page_type_and_no_other():
    from sweepgen.run.report import page

    data = page.build(
        title="t",
        objective={"label": "final_reward", "mode": "max", "metric": None},
        runs=[
            {
                "name": "a",
                "variant": "a",
                "state": "finished",
                "values": {},
                "diff": {},
                "score": 1.0,
                "note": None,
                "series": {},
                "pruned_at": None,
            }
        ],
        groups=[],
        columns=[],
        base={},
        curve_metrics=[],
        params=[],
        importance=None,
        importance_csv="importance.csv",
        statistics=None,
        notes=[],
        digits=3,
        sampled=False,
    )
    assert set(data) == set(page_types.PageData.__annotations__)
    assert set(data["runs"][0]) == set(page_types.PageRun.__annotations__)
    assert set(data["objective"]) == set(page_types.Objective.__annotations__)


def test_every_statistics_row_has_exactly_the_row_types_keys_in_the_files_column_order():
    from sweepgen.run.report.stats import verdicts as stats

    result = stats.compare([("a", [1.0, 1.2, 0.9]), ("b", [1.5, 1.6, 1.4])], baseline="a", mode="max")
    context = {"metric": "m", "value": "final", "direction": "max is better"}
    keys = list(stats_files.StatsRow.__annotations__)
    assert all(list(row) == keys for row in stats_files.rows(result, context))
    header = stats_files.csv_text(result, context).splitlines()[0].split(",")
    assert header == keys and header[:4] == ["metric", "value", "direction", "group"]
