"""Bounded costs and undefined-is-undefined, unit by unit.

Each limit is an exit-2 error raised before the work it bounds (the corpus in tests/bad_inputs/
holds the end-to-end cases); a spec's ``limits:`` block raises the bounds a real sweep may outgrow
(variants, bytes per output file, YAML nodes), and raising one really lets the spec through.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from fs_support import sweepgen
from jinja2.exceptions import UndefinedError
from spec_support import write_project

from sweepgen.cli import main
from sweepgen.compile.output.pipeline import compile_spec
from sweepgen.compile.template.sandbox import MAX_INT_BITS, LimitExceeded, make_env, undefined_message
from sweepgen.errors import SpecError, TemplateError


def render(source: str, **ctx) -> str:
    return make_env().from_string(source).render(ctx)


@pytest.mark.parametrize(
    "source, message",
    [
        ("{{ (10**(10**8)) % 7 }}", "`**` would give an integer of more than"),
        ("{{ 2 ** 20000 }}", "`**` would give an integer"),
        ("{{ 'x' * 10**10 }}", "`*` would build a sequence of 10,000,000,000 items"),
        ("{{ 10**10 * [1] }}", "`*` would build a sequence"),
        ("{{ (2**9000) * (2**9000) }}", "`*` would give an integer"),
        ("{% set ns = namespace(s='x' * 6000000) %}{{ ns.s + ns.s }}", "`+` would build a sequence"),
        ("{{ '%099999999d' % 1 }}", "a `%` format width above"),
        ("{{ 'x'.center(10**9) }}", "`center` with width 1,000,000,000"),
        ("{{ 'x' | center(10**9) }}", "`center` with width 1,000,000,000"),
        ("{{ 'x'.zfill(10**9) }}", "`zfill` with width"),
        ("{{ '{:>999999999}'.format(1) }}", "a format width above"),
        ("{{ '{0:>{1}}'.format(1, 10**9) }}", "`format` with width"),
        ("{{ '%099999999d' | format(1) }}", "a `%` format width above"),
        ("{{ 'a\nb' | indent(10**8) }}", "`indent` would add 200,000,000 characters"),
        # one small value (or width) in a million fields, or a separator between a million parts: a
        # gigabyte built in one C call, which no deadline stops
        ("{{ ('{a}' * 1000000).format(a='y' * 1000) }}", "`format` would build a string of more than"),
        ("{{ ('{a}' * 1000000).format_map({'a': 'y' * 1000}) }}", "`format_map` would build a string"),
        ("{{ ('{:>9999999}' * 100).format(*([1] * 100)) }}", "`format` would build a string"),
        ("{{ ('{:{}}' * 100).format(*([1, 9999999] * 100)) }}", "`format` would build a string"),
        ("{{ ('a' * 1000).join('b' * 1000000) }}", "`join` would build a string"),
        ("{{ ('b' * 1000000) | join('a' * 1000) }}", "`join` would build a string"),
        ("{{ ('%(a)s' * 1000000) | format(a='y' * 1000) }}", "`%` would build a string"),
        ("{{ ('%(a)s' * 1000000) % {'a': 'y' * 1000} }}", "`%` would build a string"),
        ("{{ '%*d' % (999999999, 1) }}", "`%` would build a string"),
        ("{{ ('\t' * 1000000).expandtabs(1000) }}", "`expandtabs` would build a string"),
        ("{{ ('a' * 1000000).translate({97: 'b' * 1000}) }}", "`translate` would build a string"),
        ("{{ [1] | batch(100000000, 'x') | list }}", "`batch` of 100,000,000 filled items"),
        (
            "{% set ns = namespace(s='x') %}{% for i in range(31) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
            "`~` would build a string of more than",
        ),
        ("{{ [1] | batch(linecount=100000000, fill_with='x') | list }}", "`batch` of 100,000,000 filled"),
        # an indent repeated on every line (in JSON, once per nesting level)
        (
            "{{ [[[[[[[[[[1]]]]]]]]]] | tojson(indent=9999999) }}",
            "`to_json` with indent 9,999,999 would write",
        ),
        ("{{ [[[[[[[[[[1]]]]]]]]]] | to_json(indent='x' * 9999999) }}", "`to_json` with indent"),
        ("{{ (['a'] * 1000000) | to_yaml(indent=1000) }}", "`to_yaml` with indent 1,000 would write"),
        # a 10,000-bit integer prints 3,011 characters: 300,000 of them were weighed as 300,000 items
        ("{{ [2**9999] * 300000 }}", "`*` would build a value of more than"),
        (
            "{% set ns = namespace(x=2) %}{% for i in range(40) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
            "`*` would give an integer",
        ),
    ],
)
def test_sandbox_arithmetic_is_bounded(source, message):
    with pytest.raises(LimitExceeded, match=re.escape(message)):
        render(source)


def test_ordinary_arithmetic_still_works():
    assert render("{{ 2 ** 10 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 10 ** -2 }} {{ 2 ** 1000 > 0 }}") == (
        "1024 ababab [1, 1, 1] 0.01 True"
    )
    assert render("{{ '%5.2f' % 3.14159 }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}") == " 3.14|ab|[1, 2]"
    # big numbers as values (not widths) are fine
    assert render(
        "{{ '{}'.format(10**12) }}|{{ (10**12) | center(15) }}|{{ 'x'.rjust(3) }}|{{ 'a' | indent(2) }}"
    ) == ("1000000000000| 1000000000000 |  x|a")
    assert (
        render(
            "{{ '{} {a}'.format(1, a='x') }}|{{ '{a:>3}'.format_map({'a': 5}) }}|{{ ', '.join(['a', 'b']) }}|"
            "{{ [{'n': 'a'}, {'n': 'b'}] | join('-', attribute='n') }}|{{ '%(a)s' | format(a=3) }}|"
            "{{ '%*d' % (3, 1) }}"
        )
        == "1 x|  5|a, b|a-b|3|  1"
    )
    assert render("{{ ([2**9999] * 3) | length }} {{ ([7] * 3000000) | length }}") == "3 3000000"
    assert render("{{ 'a\tb'.expandtabs(4) }}|{{ 'abc'.translate({97: 'xy', 98: None}) }}") == "a   b|xyc"
    assert render("{{ ('a' * 9000000).translate({98: 'cc'}) | length }}") == "9000000"  # no `b`: no growth
    assert render("{{ 'a' ~ 1 ~ none ~ [1] ~ x }}", x=2.5) == "a1None[1]2.5"
    assert render("{{ [1, 2, 3] | batch(2, 'x') | list }}|{{ [1] | batch(100000000) | list }}") == (
        "[[1, 2], [3, 'x']]|[[1]]"
    )
    assert render("{{ {'a': [1]} | to_json(indent=2) }}|{{ {'a': [1]} | to_yaml(indent=4) }}") == (
        '{\n  "a": [\n    1\n  ]\n}|    a:\n      - 1'
    )
    assert MAX_INT_BITS >= 64 * 8  # far above any integer a config holds


@pytest.mark.parametrize(
    "source",
    [
        "{{ [training.sede] }}",
        "{{ {'lr': training.sede} }}",
        "{{ (training.sede,) }}",
        "{{ {training.sede: 1} }}",
        "{{ [training.sede] | to_json }}",
        "{{ [training.sede] | to_yaml }}",
        "{{ [training.sede] | pyrepr }}",
        "{{ [training.sede] | tojson }}",
        "{{ [[training.sede]] }}",
        "{{ training.sede }}",
    ],
)
def test_undefined_fails_inside_literals_and_filters(source):
    config = {"training": {"seed": 1}}
    with pytest.raises(UndefinedError) as info:
        render(source, config=config, **config)
    assert (
        undefined_message(info.value, config)
        == "`training.sede` is undefined (did you mean `training.seed`?)"
    )


def test_defined_tests_and_defaults_still_work():
    config = {"training": {"seed": 1}}
    assert render("{{ training.sede is defined }} {{ training.sede | default(3) }}", **config) == "False 3"


def test_unsafe_attributes_stay_security_errors():
    from jinja2.sandbox import SecurityError

    with pytest.raises(SecurityError):
        render("{{ ''.__class__.__mro__ }}")


@pytest.mark.parametrize(
    "source",
    ["{{ 'x'.encode() * 1000000000 }}", "{{ 'x'.encode().center(999999999) }}", "{{ 'x'.encode() }}"],
)
def test_no_bytes_are_made(source):
    """Every size check is made for text: bytes passed them all (a gigabyte from `* 10**9`, `center`,
    `expandtabs`, `replace`), so `encode`, the one way a template made bytes, is refused."""
    from jinja2.sandbox import SecurityError

    with pytest.raises(SecurityError, match="encode"):
        render(source)


def _compile(project, body: str = "", *, head: str | None = None, template: str | None = None):
    kwargs = {}
    if head is not None:
        kwargs["head"] = head
    if template is not None:
        kwargs["template"] = template
    return compile_spec(str(write_project(project, body, **kwargs)))


HEAD = 'sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'


def test_variant_limit_is_checked_before_expanding_and_can_be_raised(project):
    grid = "grid:\n  training.seed: [1, 2, 3]\n  training.group: [4, 8]\n"
    with pytest.raises(SpecError, match=r"expands to 6 variants \(3 x 2\), more than the limit of 5"):
        _compile(project, grid, head=HEAD + "limits: {variants: 5}\n")
    assert len(_compile(project, grid, head=HEAD + "limits: {variants: 6}\n").files) == 6


def test_output_limit_can_be_raised(project):
    template = "{% for i in range(300) %}line {{ i }}\n{% endfor %}"
    with pytest.raises(TemplateError, match="larger than 1,000 bytes") as info:
        _compile(project, head=HEAD + "limits: {output_bytes: 1000}\n", template=template)
    assert "limits: {output_bytes: N}" in info.value.hint
    plan = _compile(project, head=HEAD + "limits: {output_bytes: 100000}\n", template=template)
    assert len(plan.files[0].data) > 1000


def test_node_limit_applies_to_includes_and_can_be_raised(project):
    (project / "configs").mkdir()
    items = ", ".join(str(i) for i in range(50))
    (project / "configs" / "big.yaml").write_text(
        f"training: {{seed: 1, lr: 0.1, group: 4}}\nlist: [{items}]\n"
    )
    base = "base:\n  include: [../configs/big.yaml]\n"
    with pytest.raises(SpecError, match="more than 40 nodes") as info:
        compile_spec(str(write_project(project, head=HEAD + "limits: {yaml_nodes: 40}\n", base=base)))
    assert str(info.value.location).startswith("configs/big.yaml:2:")
    assert compile_spec(str(write_project(project, head=HEAD + "limits: {yaml_nodes: 100}\n", base=base)))


def test_a_derived_value_nested_deeper_than_yaml_allows_is_refused(project):
    # the base holds data nested as deep as YAML allows; wrapping it in five more lists must not pass
    base = "base:\n  training: {seed: 42, lr: 3.0e-6, group: 4}\n  d: " + "[" * 97 + "]" * 97 + "\n"
    with pytest.raises(TemplateError, match="not plain data") as info:
        compile_spec(
            str(write_project(project, 'derived:\n  +training.deep: "{{ [[[[[d]]]]] }}"\n', base=base))
        )
    assert "at most 100 levels deep" in info.value.hint


def test_limits_are_strictly_typed(project):
    for bad, got in (("true", "True"), ('"10"', "'10'"), ("1.0e3", "1000.0"), ("0", "0")):
        with pytest.raises(SpecError) as info:
            _compile(project, head=HEAD + f"limits: {{variants: {bad}}}\n")
        assert info.value.key == "limits.variants" and got in info.value.message


def test_cli_reports_a_limit_as_exit_2(project):
    write_project(
        project, "grid:\n" + "".join(f"  +training.a{i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n" for i in range(10))
    )
    result = CliRunner().invoke(main, ["list", "specs/demo.yaml"])
    assert result.exit_code == 2 and "10,000,000,000 variants" in result.output, result.output


@pytest.mark.parametrize(
    "expression",
    [
        "('{' ~ ':' * 300000).format()",  # the format-width check: every colon tried again
        "('{' ~ ':' * 300000 ~ '}').format(1)",
    ],
)
def test_a_format_string_check_takes_linear_time(tmp_path, expression):
    """The sandbox's format-spec checks searched a field that never ends (`{::::...`) once per colon
    (quadratic, inside one C call no deadline stops: `check` held for minutes). They take linear
    time now; Python's own refusal of the field is the template's error, at once."""
    write_project(tmp_path, template="x: '{{ " + expression + " | length }}'\n")
    done = sweepgen(tmp_path, "check", "specs/demo.yaml")
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "template fails" in said and ("format spec" in said or "Invalid format specifier" in said), said
