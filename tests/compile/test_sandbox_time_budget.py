"""Every sandboxed evaluation has a wall-clock budget (``limits.eval_seconds``).

Loops and macros bounded in size can still be unbounded in time: two nested ``range(99999)`` loops
are 10^10 iterations, a macro calling itself twice 2^28 calls. Each case below ran for minutes
before the budget; now it ends in exit 2 within seconds, naming the template (or spec field), the
line and the variant, and writes nothing anywhere.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fs_support import snapshot, sweepgen

from sweepgen.compile.spec.limits import EVAL_SECONDS, Limits
from sweepgen.compile.template.sandbox import TimeLimitExceeded, make_env, time_budget

LOOP_BOMB = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
MACRO_BOMB = "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(28) }}"
BUDGET = 0.5  # seconds, so the tests stay fast; the default is EVAL_SECONDS
BOUND = 60  # generous: the machine running the tests may be loaded


def _project(tmp_path: Path, *, template: str = "seed: {{ training.seed }}\n", extra: str = "") -> Path:
    """tmp_path/proj (a git-less project) next to tmp_path/outside, which nothing may touch."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    (proj / "specs").mkdir(parents=True)
    (proj / "templates").mkdir()
    (proj / "templates" / "t.yaml.j2").write_text(template)
    (proj / "specs" / "demo.yaml").write_text(
        "sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        f"limits: {{eval_seconds: {BUDGET}}}\n"
        "base: {training: {seed: 0, tag: x}}\n"
        "grid: {training.seed: [1, 2]}\n" + extra
    )
    return proj


def _run(tmp_path: Path, proj: Path, *args: str) -> tuple[int, str, float]:
    before = snapshot(tmp_path, proj / "generated")
    started = time.monotonic()
    done = sweepgen(proj, *args, timeout=BOUND * 3)
    took = time.monotonic() - started
    assert snapshot(tmp_path, proj / "generated") == before  # nothing outside the output changed
    assert "Traceback" not in done.stderr + done.stdout
    return done.returncode, done.stdout + done.stderr, took


@pytest.mark.parametrize(
    "bomb, line",
    [(LOOP_BOMB, 2), (MACRO_BOMB, 2)],
    ids=["nested-loops", "macro-fan-out"],
)
def test_a_template_bomb_ends_in_exit_2_naming_template_line_and_variant(tmp_path, bomb, line):
    proj = _project(tmp_path, template="seed: {{ training.seed }}\n" + bomb + "\n")
    code, out, took = _run(tmp_path, proj, "render", "specs/demo.yaml")
    assert code == 2, out
    assert f"templates/t.yaml.j2:{line}:" in out and "variant 'seed1'" in out, out
    assert f"ran longer than {BUDGET:g} s" in out and "limits.eval_seconds" in out, out
    assert took < BOUND
    assert not (proj / "generated").exists()


def test_a_loop_in_a_derived_value_is_bounded(tmp_path):
    proj = _project(tmp_path, extra=f'derived:\n  training.tag: "{LOOP_BOMB}"\n')
    code, out, took = _run(tmp_path, proj, "list", "specs/demo.yaml")
    assert code == 2, out
    assert "specs/demo.yaml:9:" in out and "`derived.training.tag`" in out and "'seed1'" in out, out
    assert "ran longer than" in out and took < BOUND


def test_a_loop_in_run_name_does_not_hang_check(tmp_path):
    proj = _project(tmp_path, extra=f'run_name: "{{{{ variant.name }}}}{MACRO_BOMB}"\n')
    code, out, took = _run(tmp_path, proj, "check", "specs/demo.yaml")
    assert code == 2, out
    assert "specs/demo.yaml:8:" in out and "`run_name`" in out and "'seed1'" in out, out
    assert "ran longer than" in out and took < BOUND


def test_a_slow_constraint_is_bounded(tmp_path):
    # an expression has no loop, but filters over long lists repeated in it still take time
    term = "((range(99999) | list) * 100) | sum > 0"
    expr = " and ".join([term] * 40)
    proj = _project(tmp_path, extra=f"constraints:\n  - {{expr: '{expr}', message: m}}\n")
    code, out, took = _run(tmp_path, proj, "render", "specs/demo.yaml")
    assert code == 2, out
    assert "specs/demo.yaml:9:" in out and "constraint" in out and "ran longer than" in out, out
    assert took < BOUND


def test_raising_the_budget_lets_a_slow_template_through(tmp_path):
    slow = "{% for i in range(3000) %}{% for j in range(100) %}{% endfor %}{% endfor %}ok\n"
    with pytest.raises(TimeLimitExceeded), time_budget(0.000_001):
        time.sleep(0.05)  # the watchdog raises the flag; the first step of the template sees it
        make_env().from_string(slow).render()
    with time_budget(30):
        assert make_env().from_string(slow).render() == "ok\n"


def test_the_budget_has_a_default_of_seconds():
    assert Limits().eval_seconds == EVAL_SECONDS and 1 <= EVAL_SECONDS <= 30


@pytest.mark.parametrize(
    "source",
    [
        LOOP_BOMB,
        MACRO_BOMB,
        # a recursive loop recursing through `loop(...)`
        "{% for x in range(99999) recursive %}{% if loop.depth < 4 %}{{ loop(range(99999)) }}"
        "{% endif %}{% endfor %}",
        # no loop at all: the same slow filter, text repeated
        "{% set big = (range(99999) | list) * 100 %}" + "{% set x = big | sum %}" * 400,
    ],
    ids=["loops", "macro", "recursive-loop", "repeated-filter"],
)
def test_each_kind_of_repetition_is_seen_by_the_budget(source):
    template = make_env().from_string(source)
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded), time_budget(BUDGET):
        template.render()
    assert time.monotonic() - started < BOUND / 2


def test_the_watchdog_ends_when_idle_and_a_later_budget_starts_it_again(monkeypatch):
    import threading

    from sweepgen.compile.template import sandbox

    monkeypatch.setattr(sandbox, "_IDLE_POLLS", 2)
    with time_budget(30):
        pass
    deadline = time.monotonic() + BOUND
    while any(t.name == "sweepgen-time-budget" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the idle watchdog never ended"
        time.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded), time_budget(BUDGET):
        make_env().from_string(LOOP_BOMB).render()
    assert time.monotonic() - started < BOUND / 2


def _busy_filter(seconds: float):
    """A filter that is one long call in Python (as `unique` over ten million items is): it ticks
    nowhere inside, so only an interrupt ends it before ``seconds``."""

    def busy(value):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
        return value

    return busy


def test_a_single_long_call_is_interrupted_at_the_deadline():
    env = make_env()
    env.filters["busy"] = _busy_filter(BOUND)
    template = env.from_string("{{ x | busy }}")  # compiled first, as every template is
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded, match=f"ran longer than {0.2:g} s"), time_budget(0.2):
        template.render(x=1)
    assert time.monotonic() - started < BOUND / 2  # not the filter's minute


def test_an_interrupt_caught_inside_the_evaluation_is_raised_again():
    env = make_env()
    busy = _busy_filter(BOUND)

    def swallowing(value):  # as Jinja's constant folding does with any error
        for _ in range(3):
            try:
                return busy(value)
            except Exception:  # noqa: BLE001 - the point of the test
                continue
        return value

    env.filters["busy"] = swallowing
    template = env.from_string("{{ x | busy }}")
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded), time_budget(0.2):
        template.render(x=1)
    assert time.monotonic() - started < BOUND / 2


def test_an_interrupt_never_lands_after_its_evaluation_ended():
    """Evaluations ending right around the moment the watchdog interrupts them: the interrupt is
    raised inside the `with` block or cleared, never delivered to the code that runs next."""
    from sweepgen.compile.template import sandbox

    interrupted = 0
    for i in range(60):
        env = make_env()
        # ends from 20 ms before to 20 ms after the moment an interrupt is due
        env.filters["busy"] = _busy_filter(0.05 + sandbox._GRACE_SECONDS + (i % 5 - 2) * 0.01)
        template = env.from_string("{{ x | busy }}")
        try:
            with time_budget(0.05):
                template.render(x=1)
        except TimeLimitExceeded:
            interrupted += 1
        total = 0
        for n in range(20000):  # Python bytecode after the block: a leaked interrupt would raise here
            total += n
        assert total == 199990000
    assert sandbox._active is None
    assert interrupted > 0


def test_sweepgens_own_code_inside_a_budget_is_never_interrupted():
    """Between two template steps (sweepgen collecting the output, Jinja unwinding an interrupt) an
    overrun is left to the next template step: an interrupt raised there names no template line."""
    started = time.monotonic()
    total = 0
    with time_budget(0.02):
        while time.monotonic() - started < 0.02 + 20 * 0.05:  # twenty graces past the deadline
            total += 1
    assert total > 0


def test_an_interrupt_names_the_template_line_running_at_the_deadline():
    from sweepgen.compile.template.sandbox import interrupted_at

    env = make_env()
    env.filters["busy"] = _busy_filter(BOUND)
    template = env.from_string("a\nb\n{{ x | busy }}\n")
    with pytest.raises(TimeLimitExceeded) as caught, time_budget(0.1):
        template.render(x=1)
    assert interrupted_at(caught.value) == ("<template>", 3)


def test_an_overrun_without_a_template_frame_is_still_the_templates_error(tmp_path, monkeypatch):
    """An overrun raised where the traceback holds no template frame (an interrupt delivered while
    Jinja unwound an earlier one): exit 2 naming the variant at the spec's `template:` key, never
    the traceback of "a bug in sweepgen" the CLI printed once under load."""
    from click.testing import CliRunner

    from sweepgen.cli import main
    from sweepgen.compile.output import render

    monkeypatch.setattr(render, "_template_line", lambda err, template_dir: None)
    proj = _project(tmp_path, template="seed: {{ training.seed }}\n" + MACRO_BOMB + "\n")
    monkeypatch.chdir(proj)
    done = CliRunner().invoke(main, ["render", "specs/demo.yaml"])
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output and "variant 'seed1'" in done.output, done.output
    assert done.output.startswith("specs/demo.yaml:3:11: error:") and "limits.eval_seconds" in done.output
