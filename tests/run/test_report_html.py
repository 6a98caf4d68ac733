"""`sweepgen report --html`: one self-contained page, checked as a file (plot extra) and in a real
headless Chromium (browser): no console error from file://, every plot has traces, the
differences-only toggle and the top-k% filter change what is shown, and a screenshot is saved."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from report_support import make_shaping

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, RunStatus, write_status

FAILED = "noisy_seed6_lr0.001"


@pytest.fixture
def page(cli_cwd):
    make_shaping(cli_cwd, failed=FAILED)
    result = CliRunner().invoke(
        main,
        ["report", "generated/shaping", "--metric", "eval_acc", "--compare", "identity_lr1e-05", "--html"],
    )
    assert result.exit_code == 0, result.output
    assert "HTML: runs/shaping/report.html" in result.stdout
    (cli_cwd / "runs/shaping/stdout.txt").write_text(result.stdout)  # what the terminal said
    return cli_cwd / "runs/shaping/report.html"


def _data(html: str) -> dict:
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert raw is not None
    return json.loads(raw.group(1))


@pytest.mark.plot
def test_the_page_is_one_file_that_needs_no_network(page):
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"https?:", html)  # nothing fetched
    assert "Plotly" in html and len(html.encode()) < 20_000_000
    data = _data(html)
    assert data["columns"] == ["streamer.strategy", "training.lr", "training.seed"]
    runs = {r["name"]: r for r in data["runs"]}
    assert runs[FAILED]["state"] == "failed"  # shown as such, never dropped
    assert runs["coma_seed1_lr1e-05"]["diff"] == {"streamer.strategy": "coma", "training.seed": 1}
    assert {c["name"]: c["verdict"] for c in data["stats"]["comparisons"]}["coma_lr1e-05"] == "better"
    assert [g["n"] for g in data["curves"]["eval_acc"] if g["group"] == "noisy_lr0.001"] == [5]
    assert "Random forest" in data["importance"]["method"]
    importance = (page.parent / "importance.csv").read_text().splitlines()
    assert importance[0].startswith("parameter,importance_share") and "Random forest" in importance[1]
    assert importance[1].split(",")[0] == "streamer.strategy"  # the strategy moves eval_acc most
    _the_terminals_numbers_verdicts_and_sentences(page)  # here: one report serves both (CI time)


@pytest.mark.browser
@pytest.mark.plot
def test_the_page_works_in_headless_chromium(page, chromium, tmp_path):
    errors: list[str] = []
    view = chromium.new_page(viewport={"width": 1400, "height": 900})
    view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    view.on("pageerror", lambda e: errors.append(str(e)))
    view.goto(page.resolve().as_uri())
    view.wait_for_selector("body[data-ready='1']", timeout=60_000)
    view.locator("#parcoords").scroll_into_view_if_needed()
    view.wait_for_selector("body[data-parcoords='1']", timeout=60_000)  # drawn once it is in view
    traces = view.evaluate(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => [p.id, p.data.length])"
    )
    ids = {i for i, _ in traces}
    assert {"curves", "parcoords", "importance"} <= ids, traces
    assert all(n > 0 for _, n in traces), traces  # every plot has its traces

    def header_cells() -> int:
        return view.evaluate("() => document.querySelectorAll('#runs-table th').length")

    narrow = header_cells()
    view.click("#diff-only")  # off: every config path
    assert header_cells() > narrow
    view.click("#diff-only")
    assert header_cells() == narrow

    def parcoords_runs() -> int:
        return view.evaluate("() => document.getElementById('parcoords').data[0].dimensions[0].values.length")

    assert parcoords_runs() == 35  # every finished run; the failed one is in the table only
    view.fill("#topk", "20")  # a range input: fill sets the value and fires input
    assert parcoords_runs() == 7 and "7 of 35" in view.inner_text("#topk-label")
    view.check("#log-y")
    assert view.evaluate("() => document.getElementById('curves').layout.yaxis.type") == "log"
    assert view.inner_text("#stats-table").count("better") >= 3
    shot = tmp_path / "report_page.png"
    view.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")
    view.close()
    assert errors == []


@pytest.mark.plot
@pytest.mark.parametrize("span", [(1.0e-6, 1.0e-2), (1.0e-3, 5.0e-3)], ids=["wide", "narrow"])
def test_a_sample_sweep_gets_scatter_plots_and_log_axes(cli_cwd, span):
    # narrow: lr spans 5x only, so its values alone would be drawn linear; the spec says log_uniform
    (cli_cwd / "specs").mkdir()
    (cli_cwd / "templates").mkdir()
    (cli_cwd / "templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (cli_cwd / "specs/s.yaml").write_text(
        'sweepgen: 1\nname: s\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'
        'derived: {output_dir: "runs/s/{{ variant.name }}"}\n'
        "base: {output_dir: null, lr: 1.0e-4, beta: 0.0}\n"
        "sample: {n: 8, seed: 0, digits: 2,\n"
        f"         axes: {{lr: {{log_uniform: [{span[0]!r}, {span[1]!r}]}}, beta: {{uniform: [0, 1]}}}}}}\n"
    )
    assert CliRunner().invoke(main, ["render", "specs/s.yaml"]).exit_code == 0
    lock = json.loads((cli_cwd / "generated/s/sweep.lock.json").read_text())
    for entry in lock["files"]:
        run = cli_cwd / "runs/s" / entry["variant"]
        run.mkdir(parents=True)
        (run / "metrics.csv").write_text("step,acc\n1,0.1\n2,0.4\n")
        write_status(run, RunStatus(RunState.FINISHED, "local", exit_code=0, done_file=None))
    result = CliRunner().invoke(main, ["report", "generated/s", "--metric", "acc", "--html"])
    assert result.exit_code == 0, result.output
    data = _data((cli_cwd / "runs/s/report.html").read_text())
    assert data["scatter"] is True and data["digits"] == 2
    assert {p["path"]: p["log"] for p in data["params"]} == {"beta": False, "lr": True}
    # a spec that no longer reads: the axes go by their span, and the report says so
    (cli_cwd / "specs/s.yaml").write_text("sample: [unclosed\n")
    again = CliRunner().invoke(main, ["report", "generated/s", "--metric", "acc", "--html"])
    assert again.exit_code == 0, again.output
    data = _data((cli_cwd / "runs/s/report.html").read_text())
    assert {p["path"]: p["log"] for p in data["params"]}["lr"] is (span[1] / span[0] >= 100)
    assert "sampled axes drawn by their span only" in " ".join(again.output.split())


LINK = '<a href="https://evil.example/">click</a>'


@pytest.mark.browser
@pytest.mark.plot
def test_names_reach_the_plots_as_text_never_as_plotly_markup(cli_cwd, chromium):
    """Plotly draws titles, legends, axis labels and hovers as a small HTML subset: a run folder named
    `<b>x`, a metric or config value holding `<a href=…>` styled the page and became links there."""
    for i, name in enumerate(["<b>bold_s1", "<b>bold_s2", "<i>it_s1", "plain_s1", "plain_s2"]):
        run = cli_cwd / "runs" / name
        run.mkdir(parents=True)
        strategy = LINK if name.startswith("plain") else "x"
        (run / "config.yaml").write_text(f"seed: {i}\nstrategy: '{strategy}'\nlr: {len(name) / 10}\n")
        rows = [{"step": s, LINK: s * 0.1 * i, "final_reward": s * 0.01 * i} for s in range(1, 5)]
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run / "summary.json").write_text(json.dumps({"final_reward": 0.1 * i, LINK: 0.2}))
    result = CliRunner().invoke(main, ["report", "runs", "--html", "--metric", LINK, "--compare", "plain_s1"])
    assert result.exit_code == 0, result.output
    view = chromium.new_page(viewport={"width": 1400, "height": 900})
    view.goto((cli_cwd / "runs/report.html").resolve().as_uri())
    view.wait_for_selector("body[data-ready='1']", timeout=60_000)
    view.locator("#parcoords").scroll_into_view_if_needed()
    view.wait_for_selector("body[data-parcoords='1']", timeout=60_000)
    drawn = view.evaluate(
        """() => {
      const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
      const all = (sel) => plots.flatMap((p) => Array.from(p.querySelectorAll(sel)));
      return {
        ids: plots.map((p) => p.id),
        links: all('a').length,
        styled: all('tspan[style]').map((t) => t.getAttribute('style')).filter((s) => /bold|italic/.test(s)),
        text: all('text').map((t) => t.textContent).join('\\n'),
      };
    }"""
    )
    view.close()
    assert {"forest", "curves", "parcoords"} <= set(drawn["ids"]), drawn["ids"]
    assert drawn["links"] == 0 and drawn["styled"] == [], drawn
    assert "<b>bold" in drawn["text"] and "<i>it" in drawn["text"] and LINK in drawn["text"], drawn["text"]
    assert "&lt;" not in drawn["text"] and "&amp;" not in drawn["text"], drawn["text"]


def _the_terminals_numbers_verdicts_and_sentences(page):
    # the page and the terminal read one Statistics, but the page's script wrote its own "seeds
    # needed" sentences: a proportion's "no difference the metric can take is detectable" was said
    # in the terminal only. Both now take report/undecided.py's sentences; every number and verdict
    # the page holds is statistics.json's (the terminal table's rows), every sentence the terminal's
    said = " ".join((page.parent / "stdout.txt").read_text().split())
    stats = _data(page.read_text(encoding="utf-8"))["stats"]
    rows = {r["group"]: r for r in json.loads((page.parent / "statistics.json").read_text())["groups"]}
    assert {g["name"] for g in stats["groups"]} == set(rows)
    for g in stats["groups"]:
        assert (g["n"], g["mean"], g["low"], g["high"]) == tuple(
            rows[g["name"]][k] for k in ("n", "mean", "ci_low", "ci_high")
        )
    keys = ("verdict", "diff", "diff_ci_low", "diff_ci_high", "diff_ci_level", "p", "p_holm")
    for c in stats["comparisons"]:
        shown = (c["verdict"], c["diff"], c["low"], c["high"], c["level"], c["p"], c["p_holm"])
        assert shown == tuple(rows[c["name"]][k] for k in keys)
        assert f" {c['name']} {c['verdict']} " in said  # the terminal table's row
    assert stats["undecided"]  # noisy_lr1e-05's "no evidence yet"
    for line in stats["undecided"]:
        assert " ".join(line.split()) in said


def test_the_pages_sentences_on_an_undecided_proportion_are_the_terminals():
    # two seeds of an accuracy a side: the detectable difference is past the metric's range, so the
    # terminal says no difference the metric can take is detectable; the page's script said nothing
    from sweepgen.run.report import page, undecided
    from sweepgen.run.report.stats import verdicts as stats

    methods = stats.Methods(bounds=(0.0, 1.0))
    s = stats.compare(
        [("base", [0.5, 0.9]), ("arm", [0.6, 0.3])], baseline="base", mode="max", methods=methods
    )
    lines = page._stats(s)["undecided"]
    assert lines == undecided.sentences(s)
    assert "no difference the metric can take (at most 1) is detectable with 80% power" in lines[-1]
