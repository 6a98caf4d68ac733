"""A search `choice` axis of 100,000 values renders in seconds: its bounds are probed, and at most
`PROBE_CHOICES` of its interior values, spread evenly (every trial is validated when it is asked)."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner
from spec_support import HEAD

from sweepgen.cli import main
from sweepgen.compile.spec.variants.trials import PROBE_CHOICES, _probed_choices

N = 100_000


def _spec(project, schema: bool) -> str:
    values = ", ".join(str(i) for i in range(N))
    text = (
        HEAD
        + "base:\n  training: {seed: 1, lr: 0.1, k: 0}\n"
        + "search:\n  n: 4\n  metric: eval_acc\n  mode: max\n"
        + f"  axes:\n    training.k: {{choice: [{values}]}}\n"
    )
    if schema:
        bound = {"type": "object", "properties": {"k": {"type": "integer", "maximum": N - 2}}}
        (project / "specs" / "s.json").write_text(json.dumps({"properties": {"training": bound}}))
        text += "schema: s.json\n"
    (project / "specs" / "demo.yaml").write_text(text)
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    return "specs/demo.yaml"


def test_a_choice_of_100000_values_renders_in_seconds(project):
    spec = _spec(project, schema=False)
    started = time.monotonic()
    result = CliRunner().invoke(main, ["render", spec])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 60


def test_its_bounds_are_still_probed(project):
    result = CliRunner().invoke(main, ["render", _spec(project, schema=True)])
    assert result.exit_code == 2 and "violates maximum" in result.stderr, result.output


def test_probed_choices_are_spread_over_the_whole_list():
    assert _probed_choices([1, 2, 3]) == [2]
    probed = _probed_choices(list(range(N)))
    assert len(probed) == PROBE_CHOICES and probed == sorted(set(probed))
    assert probed[0] == 1 and probed[-1] > N * (PROBE_CHOICES - 1) / PROBE_CHOICES - 2
