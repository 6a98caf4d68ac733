"""Validation: the allowed-diff gate, constraints in the sandbox, and schemas."""

from __future__ import annotations

import sys

import pytest
from spec_support import HEAD, write_project

from sweepgen import paths
from sweepgen.compile.api import load_and_expand
from sweepgen.compile.schema.validate import check_schema, load_validator
from sweepgen.compile.spec.variants.constraints import check_constraints
from sweepgen.compile.spec.variants.gate import check_gate
from sweepgen.errors import SpecError, ValidationError
from sweepgen.paths import matches

SWEEP = {"name": "demo", "spec": "specs/demo.yaml", "description": ""}


def gate(project, body):
    check_gate(load_and_expand(str(write_project(project, body))))


@pytest.mark.parametrize(
    "pattern, path, ok",
    [
        ("a.b", "a.b", True),
        ("a.b", "a.b.c", False),
        ("a.*", "a.b", True),
        ("a.*", "a.b.c", False),
        ("a.**", "a", True),
        ("a.**", "a.b.c", True),
        ("a.**", "ab", False),
        ("**.seed", "x.y.seed", True),
        ("a.**.z", "a.z", True),
        ("a.**.z", "a.b.c.z", True),
        ("a.b?", "a.bc", True),
        ("a.*_params", "a.x_params", True),
    ],
)
def test_allow_globs(pattern, path, ok):
    assert matches(path, [pattern]) is ok


GATE_OK = """\
variants:
  a: {}
  b: {streamer.strategy: coma, streamer.params: {n: 4}}
grid:
  training.seed: [1, 2]
ablation:
  - {name: s1}
  - {name: s2, set: {+training.warmup: 3}}
allow: [streamer.strategy, streamer.params.**]
"""


def test_gate_accepts_allowed_and_axis_paths(project):
    expansion = load_and_expand(str(write_project(project, GATE_OK)))
    check_gate(expansion)
    # ... and it had every kind of difference to accept: allowed paths (variant b) and paths set by
    # the grid and the ablation (implicitly allowed by their layer), not a sweep of identical configs
    base = expansion.spec.base
    differ = {path for v in expansion.variants for path in paths.diff_paths(base, v.config)}
    assert len(expansion.variants) == 8
    assert differ == {"streamer.strategy", "streamer.params.n", "training.seed", "training.warmup"}


@pytest.mark.parametrize(
    ("mutation", "path"),
    [
        # an allowed path no longer listed
        (
            ("allow: [streamer.strategy, streamer.params.**]", "allow: [streamer.strategy]"),
            "streamer.params.n",
        ),
        # a path neither listed nor set by an axis
        (("a: {}", "a: {training.lr: 0.5}"), "training.lr"),
    ],
)
def test_gate_accepts_only_what_is_allowed(project, mutation, path):
    old, new = mutation
    assert old in GATE_OK
    with pytest.raises(ValidationError) as err:
        gate(project, GATE_OK.replace(old, new))
    assert f"`{path}`" in err.value.message


def test_gate_rejects_an_unlisted_difference_and_names_everything(project):
    with pytest.raises(ValidationError) as err:
        gate(
            project,
            """\
            variants:
              identity: {}
              coma:
                streamer.strategy: coma
                training.lr: 1.0e-5
            allow: [streamer.strategy]
            """,
        )
    msg = err.value.message
    assert "variant 'coma'" in msg and "`training.lr`" in msg and "3e-06 -> 1e-05" in msg
    assert "set by variant:coma" in msg and "deepdiff: Value of training.lr changed" in msg
    assert str(err.value.location) == "specs/demo.yaml:12:5"  # the override line
    assert "add `training.lr`" in err.value.hint


def test_type_changes_are_refused_before_the_gate(project):
    # strict types: a float for an int is an error where it is written, named by key and line
    with pytest.raises(SpecError) as err:
        gate(project, "variants:\n  a: {}\n  b: {training.group: 4.0}\n")
    assert (
        "`training.group` is an int (4) in the config, but variant `b` sets a float (4.0)"
        in err.value.message
    )
    assert err.value.key == "training.group" and str(err.value.location).endswith(":10:7")


def test_gate_counts_other_variants_and_paths(project):
    with pytest.raises(ValidationError) as err:
        gate(project, "variants:\n  a: {training.seed: 1, streamer.rollouts: 2}\n  b: {training.seed: 2}\n")
    assert (
        "also in 1 other variant(s): b" in err.value.message or "other disallowed paths" in err.value.message
    )


def test_gate_does_not_let_a_merge_allow_its_whole_section(project):
    # an ablation merging into `training` implies only the keys it sets, not all of `training`
    with pytest.raises(ValidationError) as err:
        gate(
            project,
            """\
            variants:
              a: {training.seed: 1}
            ablation:
              - {name: s, set: {training: {lr: 0.1}}}
            """,
        )
    assert "`training.seed`" in err.value.message


def constraints(project, body, template_vars=SWEEP):
    check_constraints(load_and_expand(str(write_project(project, body))), template_vars)


PASSING_CONSTRAINTS = [
    ("streamer.rollouts == training.group", "groups agree"),
    ('variant.name.startswith("seed") and sweep.name == "demo"', "context is there"),
    ("config.training.lr < 1", "config works"),
    ("streamer.missing is not defined", "tests work"),
]


def constraints_body(items):
    lines = "".join(f"  - {{expr: {expr!r}, message: {message}}}\n" for expr, message in items)
    return "grid: {training.seed: [1, 2]}\nconstraints:\n" + lines


def test_constraints_pass(project):
    constraints(project, constraints_body(PASSING_CONSTRAINTS))


@pytest.mark.parametrize("index", range(len(PASSING_CONSTRAINTS)))
def test_each_passing_constraint_fails_when_negated(project, index):
    items = list(PASSING_CONSTRAINTS)
    expr, message = items[index]
    items[index] = (f"not ({expr})", message)
    with pytest.raises(ValidationError) as err:
        constraints(project, constraints_body(items))
    assert message in err.value.message


def test_failing_constraint_names_variant_values_and_layers(project):
    with pytest.raises(ValidationError) as err:
        constraints(
            project,
            """\
            variants:
              a: {}
              b: {streamer.rollouts: 8}
            constraints:
              - {expr: streamer.rollouts == training.group, message: groups must agree}
            """,
        )
    msg = err.value.message
    assert "variant 'b'" in msg and "groups must agree" in msg
    assert "streamer.rollouts = 8 (variant:b)" in msg and "training.group = 4 (base)" in msg
    assert str(err.value.location) == "specs/demo.yaml:12:12"


@pytest.mark.parametrize(
    "expr, exc, message",
    [
        ("streamer.rolouts == 4", ValidationError, "cannot be evaluated"),
        ("training.seed", ValidationError, "not true/false"),
        ("streamer.nope", ValidationError, "cannot be evaluated"),
        ("training.seed ==", SpecError, "not a valid expression"),
        ("''.__class__.__mro__", ValidationError, "cannot be evaluated"),
        ("training.update({'x': 1})", ValidationError, "cannot be evaluated"),
    ],
)
def test_broken_constraints_are_user_errors(project, expr, exc, message):
    with pytest.raises(exc) as err:
        constraints(project, f'constraints:\n  - expr: "{expr}"\n    message: m\n')
    assert message in err.value.message
    assert str(err.value.location).startswith("specs/demo.yaml:9:")


def schema_check(project, body):
    e = load_and_expand(str(write_project(project, body)))
    check_schema(e, load_validator(e.spec))


def test_pydantic_schema(project, monkeypatch):
    (project / "myconf.py").write_text(
        "from pydantic import BaseModel, ConfigDict\n"
        "class Training(BaseModel):\n    model_config = ConfigDict(extra='forbid', strict=True)\n"
        "    seed: int\n    lr: float\n    group: int\n"
        "class Conf(BaseModel):\n    training: Training\n    streamer: dict\n"
    )
    monkeypatch.syspath_prepend(str(project))
    schema_check(project, "schema: myconf:Conf\n")
    with pytest.raises(ValidationError) as err:
        schema_check(
            project,
            # strict override types would refuse `training.seed: '7'` before the schema; replacing the
            # key on purpose (delete, then add) is how a type change reaches the schema check
            "variants:\n  a: {}\n  b: {~training.seed: null, +training.seed: '7'}\n"
            "allow: [training.seed]\nschema: myconf:Conf\n",
        )
    msg = err.value.message
    assert "variant 'b'" in msg and "`training.seed`" in msg and "'7'" in msg and "variant:b" in msg
    assert str(err.value.location).startswith("specs/demo.yaml:10:")
    sys.modules.pop("myconf", None)


@pytest.mark.parametrize(
    "ref, message",
    [
        ("nomodule_xyz:Conf", "cannot import"),
        ("json:loads", "not a pydantic model"),
        ("json:Nope", "has no 'Nope'"),
        ("justaname", "neither `module:Class`"),
        ("missing.json", "schema file not found"),
    ],
)
def test_bad_schema_references(project, ref, message):
    with pytest.raises(SpecError) as err:
        schema_check(project, f"schema: {ref}\n")
    assert message in err.value.message


def test_json_schema_subset(project):
    (project / "specs" / "s.json").write_text(
        '{"type": "object", "required": ["training"], "properties": {"training": {"type": "object",'
        ' "additionalProperties": false, "properties": {"seed": {"type": "integer"}, "lr": {"type": "number",'
        ' "exclusiveMinimum": 0}, "group": {"enum": [2, 4, 8]}}}}}'
    )
    schema_check(project, "schema: s.json\n")
    with pytest.raises(ValidationError) as err:
        schema_check(
            project, "variants:\n  a: {training.group: 3}\nallow: [training.group]\nschema: s.json\n"
        )
    assert "must be one of [2, 4, 8]" in err.value.message
    with pytest.raises(ValidationError) as err:
        schema_check(project, "variants:\n  a: {+training.x: 3}\nallow: [training.x]\nschema: s.json\n")
    assert "not allowed by the schema" in err.value.message


def test_json_schema_rejects_keywords_it_does_not_implement(project):
    (project / "specs" / "s.json").write_text('{"type": "object", "patternProperties": {"^x": {}}}')
    with pytest.raises(SpecError) as err:
        schema_check(project, "schema: s.json\n")
    assert "unsupported keyword(s) patternProperties" in err.value.message


def test_the_gate_is_bounded_by_the_specs_total_time(project):
    """Variants x differing paths x `allow` globs is the spec's to choose: 20 variants of 100 overrides
    each against 5,000 globs that never match (the last allows them all) ran unbounded (200 variants of
    200 against 50,000 for hours): the gate ends at `limits.total_seconds`, at `allow`, exit 2."""
    from sweepgen.compile.output.pipeline import compile_spec

    keys = [f"k{i}" for i in range(2000)]
    base = "base:\n" + "".join(f"  {k}: 0\n" for k in keys)
    variants = "variants:\n" + "".join(
        f"  v{v}: {{{', '.join(f'{k}: 1' for k in keys[v * 100 : (v + 1) * 100])}}}\n" for v in range(20)
    )
    allow = "allow:\n" + "".join(f'  - "zz{g}.*.**.q"\n' for g in range(5000)) + '  - "k*"\n'
    head = HEAD + "limits: {total_seconds: 0.5}\n"
    spec = write_project(project, variants + allow, head=head, base=base)
    with pytest.raises(ValidationError, match=r"against `allow` stopped: .*limits.total_seconds") as info:
        compile_spec(str(spec))
    assert info.value.location is not None and info.value.location.path.endswith("specs/demo.yaml")
    lines = spec.read_text().splitlines()
    assert lines[info.value.location.line - 2] == "allow:"  # at the list's first entry


def test_schema_validation_is_bounded_by_the_specs_total_time(project):
    """Every variant's whole config is validated: 2,000 variants sharing a 20,000-item list cost
    4*10^7 checks (5,000 of 400,000 ran for hours); they end at `limits.total_seconds`, at `schema:`."""
    from sweepgen.compile.output.pipeline import compile_spec

    (project / "specs" / "s.json").write_text(
        '{"type": "object", "properties": {"data": {"type": "array", "items": {"type": "integer"}}}}'
    )
    base = "base:\n  seed: 0\n  data: [" + ", ".join(["1"] * 20_000) + "]\n"
    grid = "schema: s.json\ngrid:\n  seed: [" + ", ".join(str(i) for i in range(2000)) + "]\n"
    spec = write_project(project, grid, head=HEAD + "limits: {total_seconds: 0.5}\n", base=base)
    with pytest.raises(ValidationError, match=r"validating the variants against s.json stopped") as info:
        compile_spec(str(spec))
    assert "limits.total_seconds" in info.value.message
    assert info.value.location is not None
    assert spec.read_text().splitlines()[info.value.location.line - 1].startswith("schema:")
