"""Precedence, one layer at a time: include files < base.set < variant < grid < zip < ablation < derived.

Every layer below writes the same path; removing the top layer must reveal the one beneath it, and
the lock's `layers` must name the winner.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spec_support import write_project

from sweepgen.compile.api import load_and_expand

LAYERS = [
    ("include:configs/b.yaml", None),
    ("base.set", "base"),
    ("variant:v", "variants:\n  v: {x.v: variant}\n"),
    ("grid", "grid:\n  x.v: {g: grid}\n"),
    ("zip", "zip:\n  x.v: [zip]\n"),
    ("ablation:s", "ablation:\n  - {name: s, set: {x.v: ablation}}\n"),
    ("derived", 'derived:\n  x.v: "derived"\n'),
]


@pytest.mark.parametrize("top", range(len(LAYERS)))
def test_the_highest_present_layer_wins(project, top):
    (project / "configs").mkdir()
    (project / "configs" / "a.yaml").write_text("x: {v: include_a, keep: a}\n")
    (project / "configs" / "b.yaml").write_text("x: {v: include_b}\n")
    base = "base:\n  include: [../configs/a.yaml, ../configs/b.yaml]\n"
    if top >= 1:
        base += "  set: {x.v: base_set}\n"
    body = "".join(block for _, block in LAYERS[2 : top + 1] if block)
    variant = load_and_expand(str(write_project(project, body, base=base))).variants[0]
    expected_value = {0: "include_b", 1: "base_set"}.get(top, LAYERS[top][0].split(":")[0])
    assert variant.config["x"]["v"] == expected_value
    assert variant.config["x"]["keep"] == "a"  # merged from the first include, untouched above
    if top >= 2:
        assert variant.layers["x.v"] == LAYERS[top][0]
    else:
        assert variant.layers == {}  # nothing overrode the base
        assert load_and_expand("specs/demo.yaml").spec.base_layers["x.v"] == LAYERS[top][0]


def test_ablation_steps_stack_and_the_latest_step_wins(project):
    body = "ablation:\n  - {name: s1, set: {x.v: one}}\n  - {name: s2}\n  - {name: s3, set: {x.v: three}}\n"
    variants = load_and_expand(str(write_project(project, body, base="base:\n  x: {v: base}\n"))).variants
    assert [(v.name, v.config["x"]["v"], v.layers.get("x.v")) for v in variants] == [
        ("s1", "one", "ablation:s1"),
        ("s2", "one", "ablation:s1"),
        ("s3", "three", "ablation:s3"),
    ]


def test_the_derived_example_in_the_spec_docs_works(project):
    """docs/SPEC.md's `derived` example, run as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "SPEC.md").read_text()
    example = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "\nderived:" in b)
    base = "base:\n  grpo: {num_generations: 8}\n  streamer: {n_rollouts_per_prompt: 4}\n  output_dir: x\n"
    head = 'sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'
    spec = write_project(project, "grid: {grpo.num_generations: [2, 16]}\n", head=head + example, base=base)
    variant = load_and_expand(str(spec)).variants[1]
    assert variant.config["output_dir"] == "runs/demo/num_generations16"
    assert variant.config["streamer"]["n_rollouts_per_prompt"] == 16


def test_every_whole_spec_in_the_spec_docs_expands_as_the_docs_say(project):
    """docs/SPEC.md's complete spec examples (those starting `sweepgen: 1`), run as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "SPEC.md").read_text()
    examples = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("sweepgen: 1")]
    assert len(examples) >= 2
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    names = {}
    for i, body in enumerate(examples):
        spec = project / "specs" / f"doc{i}.yaml"
        spec.write_text(body)
        variants = load_and_expand(str(spec)).variants
        names[variants[0].config and body.split("name: ", 1)[1].split("\n", 1)[0]] = [
            v.name for v in variants
        ]
    zipped = names["zip_groups"]
    assert zipped[0] == "small_temperature0.7_max_completion_length16" and len(zipped) == 4
    assert zipped[-1] == "large_temperature1.0_max_completion_length24"
    assert len(names["random_search"]) == 12
