"""Bounded fuzzing of the compiler through the CLI: random specs and templates, built from the pieces
hostile-input reviews use (aliases, deep nesting, odd keys, control characters, huge numbers,
undefined names, sandbox escapes, arithmetic bombs, loop and macro bombs, paths out of the project),
plus raw random bytes.

Whatever the input, `render`, `check` and `list` exit 0, 1 or 2, never with a traceback or exit 70,
and nothing is written outside the output folder. The example counts are fixed so the test is
bounded (about 10 s here); every limit the inputs hit answers in milliseconds.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepgen.cli import main

_SCALARS = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=12),
    st.sampled_from(["1e-5", "on", "no", "0x1F", "9" * 5000, "~", ".nan", "-.inf", "CON", "a\nb", "\x1b[2J"]),
)
_KEYS = st.one_of(
    st.sampled_from(
        ["training", "seed", "lr", "group", "streamer", "config", "+x", "~seed", "a.b", "", "<<"]
    ),
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=8),
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12,
)
_PATHS = st.sampled_from(
    [
        "training.seed",
        "training.lr",
        "+training.new",
        "~training.group",
        "streamer",
        "nope.x",
        "training",
        "a..b",
    ]
)
_EXPRS = st.sampled_from(
    [
        "training.seed",
        "training.sede",
        "[training.sede]",
        "{'a': training.lrr}",
        "config | to_yaml",
        "config | to_json",
        "config | pyrepr",
        "[training.nope] | tojson",
        "variant.name",
        "sweep.name",
        "(10**(10**8)) % 7",
        "'x' * 10**10",
        "2 ** 64",
        "''.__class__.__mro__",
        "config.update({'a': 1})",
        "range(10**9) | list | length",
        "(" * 400 + "1" + ")" * 400,
        "training.seed / 0",
        "lipsum(5)",
        "cycler",
    ]
)
# time bombs: bounded in size, unbounded in time but for `limits.eval_seconds` (kept short below)
_LOOP_BOMB = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
_MACRO_BOMB = "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(28) }}"
_INLINE = st.one_of(
    _EXPRS.map(lambda e: "{{ " + e + " }}"), st.sampled_from(["{{ variant.name }}" + _LOOP_BOMB, _MACRO_BOMB])
)
_TEMPLATES = st.one_of(
    st.lists(
        st.one_of(
            _EXPRS.map(lambda e: "{{ " + e + " }}\n"),
            st.sampled_from(
                [
                    "{% for i in range(3) %}{{ i }}{% endfor %}\n",
                    "{% include 'inc.j2' %}\n",
                    "{% include '../../../../etc/hostname' %}\n",
                    "{% extends 'inc.j2' %}",
                    "{% if %}",
                    "{{ }}",
                    "#!/bin/sh\n",
                    "\ufeffkey: 1\n",
                    _LOOP_BOMB + "\n",
                    _MACRO_BOMB + "\n",
                ]
            ),
            st.text(max_size=20),
        ),
        max_size=5,
    ).map("".join),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


_BUDGET = 0.2  # seconds per evaluation: a bomb costs this, times the few evaluations before it fails
_VALID = {
    "sweepgen": 1,
    "name": "demo",
    "template": "t.j2",
    "output": "{{ variant.name }}.yaml",
    "run_name": "{{ variant.name }}",
    "base": {"training": {"seed": 1, "lr": 0.1, "group": 4}, "streamer": {"r": 4, "strategy": "identity"}},
    "variants": {"a": {}, "b": {"streamer.strategy": "coma"}},
    "grid": {"training.seed": [1, 2]},
    "allow": ["streamer.strategy"],
    "constraints": [{"expr": "streamer.r == training.group", "message": "groups match"}],
    "limits": {"eval_seconds": _BUDGET},
}
_HOSTILE_VALUES = {
    "sweepgen": st.sampled_from([True, 1.0, "1", 2, None]),
    "name": st.sampled_from(["CON", "a b", "../x", "", "x\n::error::y", "a" * 300]),
    "template": st.sampled_from(
        ["/proc/self/environ", "../t.j2", "missing.j2", "sub", "inc.j2", "/dev/zero"]
    ),
    "output": st.sampled_from(
        ["nul.yaml", "../x.yaml", "x.yaml", "{{ x }}", "A.yaml", "{{ variant.name | upper }}.y"]
    ),
    "run_name": st.one_of(st.sampled_from(["x", "{{ variant.name | upper }}", "CON"]), _INLINE),
    "base": st.one_of(
        st.dictionaries(_KEYS, _DATA, max_size=3),
        st.just({"include": ["../outside.yaml"]}),
        st.just({"include": ["inc.yaml"], "set": {"training.seed": 2}}),
    ),
    "variants": st.dictionaries(
        st.one_of(st.sampled_from(["a", "A", "nul", "c.d"]), st.text(max_size=4)),
        st.dictionaries(_PATHS, _DATA, max_size=2),
        max_size=3,
    ),
    "grid": st.dictionaries(_PATHS, st.lists(_SCALARS, max_size=4), max_size=3),
    "allow": st.lists(
        st.sampled_from(["training.*", "**", "*a" * 30 + "b", "a..b", "p[x]", 'x["a.b"]']), max_size=2
    ),
    "constraints": _EXPRS.map(lambda e: [{"expr": e, "message": "m"}]),
    "derived": st.tuples(_PATHS, _INLINE).map(lambda pi: {pi[0]: pi[1]}),
    "limits": st.dictionaries(
        st.sampled_from(["variants", "output_bytes", "yaml_nodes", "x"]), _SCALARS, max_size=2
    ).map(lambda limits: {**limits, "eval_seconds": _BUDGET}),
    "schema": st.sampled_from(["s.json", "../s.json", "nomodule_xyz:Model", "bad"]),
}
_TAILS = [
    "bomb: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"b{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 8)),
    "deep: " + "[" * 300 + "]" * 300 + "\n",
    "sweepgen: 1\n",
    "x: \x00\n",
    "---\nb: 1\n",
    "anchor: &r {k: *r}\n",
]


def _spec_text(draw: st.DrawFn) -> str:
    """A valid spec with one or two hostile changes (so most examples get past loading), or a
    spec with every field random."""
    spec = dict(_VALID)
    keys = draw(st.lists(st.sampled_from(sorted(_HOSTILE_VALUES)), min_size=1, max_size=2, unique=True))
    if draw(st.integers(0, 9)) == 0:
        keys = sorted(_HOSTILE_VALUES)
    for key in keys:
        spec[key] = draw(_HOSTILE_VALUES[key])
    # Block-style top level with JSON (flow YAML) values, so hostile lines can be appended
    text = "".join(
        f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}\n" for key, value in spec.items()
    )
    if draw(st.integers(0, 5)) == 0:
        text += draw(st.sampled_from(_TAILS))
    return text


@st.composite
def projects(draw: st.DrawFn) -> dict[str, bytes]:
    files = {
        "spec.yaml": (
            draw(st.binary(max_size=60))
            if draw(st.integers(0, 9)) == 0
            else _spec_text(draw).encode("utf-8", "surrogatepass")
        ),
        "t.j2": draw(st.one_of(st.just("{{ config | to_yaml }}\n"), _TEMPLATES)).encode(
            "utf-8", "surrogatepass"
        ),
        "inc.j2": draw(_TEMPLATES).encode("utf-8", "surrogatepass"),
        "inc.yaml": draw(st.sampled_from([b"training: {seed: 1}\n", b"- 1\n", b"\xff", b"a: &a [*a]\n"])),
        "s.json": draw(st.sampled_from([b'{"type": "object"}', b"{", b'{"type": "objec"}', b"[" * 2000])),
    }
    return files


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(projects(), st.sampled_from(["render", "check", "list"]))
def test_random_specs_and_templates_never_crash(files: dict[str, bytes], command: str):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "outside.yaml").write_text("secret: hunter2\n")
        project = root / "p"
        project.mkdir()
        (project / "sub").mkdir()
        for name, data in files.items():
            (project / name).write_bytes(data)
        before = _snapshot(root)
        cwd = os.getcwd()
        os.chdir(project)
        try:
            result = CliRunner().invoke(main, [command, "spec.yaml"])
        finally:
            os.chdir(cwd)
        out = result.output
        assert result.exit_code in (0, 1, 2), out
        assert "Traceback" not in out and "internal error" not in out, out
        assert "hunter2" not in out, out
        after = _snapshot(root)
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        assert all(k.startswith("p/generated/") for k in changed), changed
