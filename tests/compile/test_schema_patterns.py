"""JSON Schema `pattern`s of a schema file: matched in linear time (RE2), whatever the pattern; a
pattern RE2 cannot compile (invalid, backreference, lookaround) is refused when the schema loads."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_support import HEAD, write_project

from sweepgen.cli import main
from sweepgen.compile.schema import jsonschema_subset

BASE = 'base:\n  training: {seed: 42, lr: 3.0e-6, group: 4}\n  name: "NAME"\n'


def _project(project, pattern: str, name: str):
    schema = {"type": "object", "properties": {"name": {"type": "string", "pattern": pattern}}}
    (project / "specs").mkdir(exist_ok=True)
    (project / "specs" / "s.json").write_text(json.dumps(schema))
    return write_project(project, "schema: s.json\n", head=HEAD, base=BASE.replace("NAME", name))


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(\\w+\\s?)*$"])
def test_a_catastrophic_pattern_is_matched_in_linear_time(project, pattern):
    # Python's `re` takes hours on each of these against 5,000 `a`s and a `!`
    spec = _project(project, pattern, "a" * 5000 + "!")
    started = time.monotonic()
    result = CliRunner().invoke(main, ["render", str(spec)])
    assert time.monotonic() - started < 20
    assert result.exit_code == 2, result.output
    assert "does not match" in result.stderr and "Traceback" not in result.output


def test_a_matching_value_passes(project):
    spec = _project(project, "^[a-z]+_[0-9]+$", "run_42")
    assert CliRunner().invoke(main, ["render", str(spec)]).exit_code == 0


@pytest.mark.parametrize(
    "pattern, why",
    [("[", "missing ]"), ("(a)\\1", "invalid escape"), ("(?=x)", "invalid perl operator"), ("a{2,1}", "")],
)
def test_a_pattern_re2_cannot_compile_is_refused_when_the_schema_loads(project, pattern, why):
    spec = _project(project, pattern, "x")
    result = CliRunner().invoke(main, ["check", str(spec)])
    assert result.exit_code == 2, result.output
    assert "s.json" in result.output and "/pattern" in result.output and why in result.output
    assert "RE2" in result.output and "Traceback" not in result.output


def test_a_pattern_that_is_no_string_is_refused(project):
    (project / "specs").mkdir(exist_ok=True)
    (project / "specs" / "s.json").write_text('{"properties": {"name": {"pattern": 7}}}')
    spec = write_project(project, "schema: s.json\n", head=HEAD, base=BASE.replace("NAME", "x"))
    result = CliRunner().invoke(main, ["check", str(spec)])
    assert result.exit_code == 2 and "pattern must be a string" in result.output, result.output


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab()*+?|[]{}\\^$.,12", max_size=12), st.text(alphabet="ab", max_size=60))
def test_any_pattern_is_either_refused_at_load_or_matched_quickly(pattern, value):
    schema = {"type": "string", "pattern": pattern}
    try:
        jsonschema_subset.check_schema(schema)
    except jsonschema_subset.UnsupportedSchema as err:
        assert "/pattern" in str(err)
        return
    started = time.monotonic()
    problems = jsonschema_subset.validate(value + "!", schema)
    assert time.monotonic() - started < 1
    assert all("does not match" in message for _, message in problems)


@pytest.mark.parametrize(
    "keywords, words",
    [
        ({"minimum": "x"}, "minimum must be a finite number, not string"),  # exit 70
        ({"maximum": float("inf")}, "maximum must be a finite number"),
        ({"exclusiveMinimum": True}, "exclusiveMinimum must be a finite number, not boolean"),  # draft 4
        ({"enum": 5}, "enum must be an array"),  # exit 70
        ({"required": [5]}, "required must be an array of strings"),  # exit 70
        ({"required": "name"}, "required must be an array of strings, not string"),  # read letter by letter
        ({"allOf": 5}, "allOf must be a non-empty array of schemas"),  # exit 70
        ({"anyOf": []}, "anyOf must be a non-empty array of schemas"),
        ({"not": 5}, "not must be a schema"),  # exit 70
        ({"items": 5}, "items must be a schema"),  # constrained nothing
        ({"additionalProperties": "no"}, "additionalProperties must be a schema"),
        ({"properties": []}, "properties must be an object of schemas"),
        ({"maxLength": "3"}, "maxLength must be a non-negative integer"),
        ({"minItems": -1}, "minItems must be a non-negative integer"),
        ({"type": {"a": 1}}, "type must be a type name"),  # unhashable: exit 70
    ],
)
def test_a_keyword_value_of_the_wrong_kind_is_refused_when_the_schema_loads(project, keywords, words):
    """A schema file comes with the pull request `check` reviews: each keyword's value must be what
    draft 2020-12 says, or the schema is refused at the spec's `schema:` key (exit 2), never a
    traceback while validating nor a keyword that constrains nothing."""
    (project / "specs").mkdir(exist_ok=True)
    (project / "specs" / "s.json").write_text(json.dumps({"type": "object", **keywords}))
    spec = write_project(project, "schema: s.json\n", head=HEAD, base=BASE.replace("NAME", "x"))
    result = CliRunner().invoke(main, ["check", str(spec)])
    assert result.exit_code == 2, result.output
    assert "s.json" in result.output and words in result.output, result.output
    assert "Traceback" not in result.output
