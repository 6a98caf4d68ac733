"""report.html at 1,000 runs (200 seed groups) in headless Chromium at 1280 x 1000: the answer is on
the first screen (the forest plot of each group's difference from the baseline, with its verdict),
the statistics table keeps its verdict column on screen, and "show all" shows every group."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from report_support import make_big

from sweepgen.cli import main

pytestmark = [pytest.mark.browser, pytest.mark.plot]
WIDTH, HEIGHT = 1280, 1000


def test_a_1000_run_page_answers_on_its_first_screen(cli_cwd, chromium, tmp_path):
    make_big(cli_cwd)
    result = CliRunner().invoke(
        main,
        [
            "report",
            "generated/big",
            "--metric",
            "eval_acc",
            "--compare",
            "lr1e-06_beta0.0",
            "--html",
            "--no-plot",
        ],
    )
    assert result.exit_code == 0, result.output
    errors: list[str] = []
    view = chromium.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    view.on("pageerror", lambda e: errors.append(str(e)))
    view.goto((cli_cwd / "runs/big/report.html").resolve().as_uri())
    view.wait_for_selector("body[data-ready='1']", timeout=60_000)
    shot = tmp_path / "report_1000_first_screen.png"
    view.screenshot(path=str(shot))  # the first screen only, as a reader opens it
    print(f"screenshot: {shot}")

    def box(selector: str) -> dict:
        return view.evaluate(
            f"() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
            " return {top: r.top, bottom: r.bottom, right: r.right}; }"
        )

    forest, counts = box("#forest"), box("#verdict-counts")
    assert forest["bottom"] <= HEIGHT and forest["right"] <= WIDTH, forest
    assert counts["bottom"] <= HEIGHT
    summary = view.inner_text("#verdict-counts")
    assert (
        "better" in summary
        and "worse" in summary
        and "Welch's t-test, level calibrated over the variance ratio, Holm" in summary
    )
    labels = view.evaluate("() => document.getElementById('forest').data[0].y")
    assert len(labels) == 25 and any("[better]" in y for y in labels) and any("[worse]" in y for y in labels)
    # sorted by effect, best first (max is better): the largest lr with the smallest beta on top
    assert labels[0].startswith("lr0.001_beta0.0 ")
    assert labels[-1].startswith("lr1e-06_beta0.0") and "[worse]" in labels[-1]  # beta 0.08 or 0.09
    verdict_th = view.locator("#stats-table th", has_text="verdict")
    assert verdict_th.bounding_box()["x"] + verdict_th.bounding_box()["width"] <= WIDTH
    assert view.locator("#stats-table tbody tr").count() == 50  # capped: "show all" for the rest
    view.click("#stats-all")
    assert view.locator("#stats-table tbody tr").count() == 200
    view.click("#forest-all")
    assert len(view.evaluate("() => document.getElementById('forest').data[0].y")) == 199
    view.click("#stats-table th >> text=diff")  # sortable: ascending by difference
    first = view.locator("#stats-table tbody tr").first.inner_text()
    assert first.startswith("lr1e-06_beta0.0") and "worse" in first
    view.close()
    assert errors == []
