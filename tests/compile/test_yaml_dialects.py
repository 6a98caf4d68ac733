"""A rendered YAML file reads the same with PyYAML's safe_load (YAML 1.1, as many trainers read
their config) and YAML 1.2 (sweepgen's lock, the bundled trainer): a template that writes a value
bare, where the two read it apart, stops the render at the spec's `template:` line."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.errors import UserError
from sweepgen.formats import yamlio

SPEC = """\
sweepgen: 1
name: s
template: ../templates/t.yaml.j2
output: "{{{{ variant.name }}}}.yaml"
base: {{v: {value}, lr: 0.1}}
allow: [lr]
variants: {{a: {{lr: 0.2}}}}
"""


def render(project, value: str, template: str):
    (project / "specs" / "s.yaml").write_text(SPEC.format(value=value))
    (project / "templates" / "t.yaml.j2").write_text(template)
    return CliRunner().invoke(main, ["render", "specs/s.yaml"])


@pytest.mark.parametrize(
    ("value", "one", "two"),
    [
        ("'010'", "8", "10"),  # zero-padded: octal to YAML 1.1
        ("'on'", "True", "'on'"),
        ("1.0e-5", "'1e-05'", "1e-05"),  # no dot: a string to YAML 1.1
        ("'2024-01-01'", "datetime.date(2024, 1, 1)", "'2024-01-01'"),
        ("'1_000'", "1000", "'1_000'"),
        ("'1:30'", "90", "'1:30'"),
    ],
)
def test_a_bare_value_the_two_read_apart_stops_the_render(project, value, one, two):
    done = render(project, value, "v: {{ config.v }}\n")
    assert done.exit_code == 2, done.output
    said = " ".join(done.stderr.split())
    assert said.startswith("specs/s.yaml:3:11: error: variant 'a': a.yaml line 2: `v` reads as"), said
    assert f"reads as {one} in YAML 1.1" in said and f"but {two} in YAML 1.2" in said
    assert "| to_yaml" in said and not (project / "generated").exists()


@pytest.mark.parametrize(
    "value", ["'010'", "'on'", "1.0e-5", "'2024-01-01'", "'run on gpu at 12:30, 2024-01-01'"]
)
def test_to_yaml_and_plain_sentences_render(project, value):
    assert render(project, value, "v: {{ config.v | to_yaml }}\n").exit_code == 0
    assert render(project, "'run on gpu at 12:30'", "v: {{ config.v }}\n").exit_code == 0


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()))
def test_what_to_yaml_writes_always_reads_alike(value):
    """The fix the error names holds for any scalar: to_yaml's output reads the same both ways."""
    from sweepgen.compile.template.yamlfilter import to_yaml

    text = "v: " + to_yaml(value) + "\n"
    assert yaml.safe_load(text) == yamlio.loads(text, "t.yaml").data


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789_:.eE+-xobaAfFyYnNsSOo<=T ", min_size=1, max_size=10),
        st.from_regex(r"[-+]?[0-9._:]{0,5}([eE][-+]?[0-9]{1,2})?", fullmatch=True),
    )
)
def test_the_scan_never_misses_a_value_the_two_read_apart(word):
    """The scan decides whether a file is parsed both ways: a scalar the two readings tell apart,
    as a mapping value, a list item or a flow item, is always flagged."""
    from sweepgen.compile.output.verify.yaml_dialects import suspect

    for doc in (f"v: {word}\n", f"v:\n  - {word}\n", f"v: [{word}]\n"):
        try:
            one, two = yaml.safe_load(doc), yamlio.loads(doc, "t.yaml").data
        except (yaml.YAMLError, ValueError, UserError):
            continue
        if repr(one) != repr(two):
            assert suspect(doc), doc
