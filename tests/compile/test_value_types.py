"""A config value keeps its type in the rendered file (compile/output/verify/value_types.py): a string a
template writes bare that reads as a number, boolean or null, a number or boolean it writes in
quotes, a null it writes as `None`, stop the render at `template:` naming the variant, file, line and
path; a template that keeps each type (`to_yaml`, `to_json`, quotes around strings) renders."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen.cli import main
from sweepgen.compile.output.verify import value_types


def _render(root: Path, template: str, base: dict, suffix: str = "yaml") -> tuple[int, str]:
    (root / "specs").mkdir(exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / f"templates/c.{suffix}.j2").write_text(template)
    spec = {
        "sweepgen": 1,
        "name": "s",
        "template": f"../templates/c.{suffix}.j2",
        "output": "{{ variant.name }}." + suffix,
        "base": base,
        "grid": {"seed": [1, 2]},
    }
    (root / "specs/s.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = CliRunner().invoke(main, ["render", "specs/s.yaml"])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "suffix, template, base, words",
    [
        (
            "yaml",
            "revision: {{ revision }}\nseed: {{ seed }}\n",
            {"revision": "1.10"},
            "`revision` is '1.10'",
        ),
        ("yaml", "tag: {{ tag }}\nseed: {{ seed }}\n", {"tag": "007"}, "the file reads 7"),
        ("yaml", "ok: {{ ok }}\nseed: {{ seed }}\n", {"ok": "true"}, "the file reads True"),
        (
            "yaml",
            'lr: "{{ lr }}"\nseed: {{ seed }}\n',
            {"lr": 0.1},
            "`lr` is 0.1 in the spec and the lock, but the file reads '0.1'",
        ),
        ("yaml", "ref: {{ ref }}\nseed: {{ seed }}\n", {"ref": None}, "the file reads 'None'"),
        (
            "yaml",
            "opt:\n  steps: '{{ train.steps }}'\nseed: {{ seed }}\n",
            {"train": {"steps": 3}},
            "`train.steps` is 3",
        ),
        ("json", '{"name": {{ name }}, "seed": {{ seed }}}\n', {"name": "1.5"}, "the file reads 1.5"),
        ("json", '{"bf16": "{{ bf16 }}", "seed": {{ seed }}}\n', {"bf16": True}, "the file reads 'True'"),
        ("toml", "name = {{ name }}\nseed = {{ seed }}\n", {"name": "42"}, "the file reads 42"),
    ],
)
def test_a_value_the_file_reads_as_another_type_stops_the_render(
    tmp_path, monkeypatch, suffix, template, base, words
):
    monkeypatch.chdir(tmp_path)
    code, output = _render(tmp_path, template, {**base, "seed": 0}, suffix)
    assert code == 2, output
    assert "specs/s.yaml:3:11: error: variant 'seed1'" in output and words in output, output
    assert not (tmp_path / "generated").exists()


@pytest.mark.parametrize(
    "suffix, template, base",
    [
        (
            "yaml",
            "revision: {{ revision | to_yaml }}\nlr: {{ lr }}\nseed: {{ seed }}\n",
            {"revision": "1.10", "lr": 0.1},
        ),
        (
            "yaml",
            "revision: '{{ revision }}'\nname: run-{{ lr }}\nseed: {{ seed }}\n",
            {"revision": "1.10", "lr": 0.1},
        ),
        (
            "yaml",
            "report_to: {{ report_to }}\nseed: {{ seed }}\n",
            {"report_to": "none"},
        ),  # a string both ways
        ("yaml", "steps: {{ steps }}\nlabel: '3'\nseed: {{ seed }}\n", {"steps": 3}),  # another key's text
        ("json", '{"name": {{ name | to_json }}, "seed": {{ seed }}}\n', {"name": "1.5"}),
        ("toml", 'name = "{{ name }}"\nseed = {{ seed }}\n', {"name": "42"}),
    ],
)
def test_a_template_that_keeps_each_type_renders(tmp_path, monkeypatch, suffix, template, base):
    monkeypatch.chdir(tmp_path)
    code, output = _render(tmp_path, template, {**base, "seed": 0}, suffix)
    assert code == 0, output


def test_every_committed_example_keeps_its_types():
    # the examples' templates (trainer configs, TRL CLI configs, sbatch) render again through this
    # check (--full: not trusted from the lock; --no-import: the core lane has no trl)
    root = Path(__file__).resolve().parents[2]
    specs = sorted(str(p) for p in (root / "specs").glob("*.yaml"))
    result = CliRunner().invoke(main, ["check", "--full", "--no-import", *specs])
    assert result.exit_code == 0, result.output


_SCALARS = st.one_of(
    st.text(alphabet="0123456789.eE+-truefalsnoyNTF ~", min_size=1, max_size=6),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)


@settings(deadline=None, max_examples=300)
@given(value=_SCALARS, quoted=st.booleans())
def test_flagged_exactly_when_the_yaml_file_reads_another_value_than_the_spec(value, quoted):
    # the oracle: the file as YAML 1.2 reads it, against the value the lock records
    shown = str(value)
    text = f"x: '{shown}'\n" if quoted else f"x: {shown}\n"
    try:
        got = value_types.yamlio.loads(text, "f.yaml", max_nodes=None).data["x"]
    except Exception:  # noqa: BLE001 - text no reader takes: the read-back's business
        return
    suspect = value_types._may_change("yaml", value, text, value_types._quoted_scalars(text))
    coerced = suspect and value_types._coerced("yaml", value, got)
    kept = type(got) is type(value) and got == value
    if coerced:
        assert not kept
    elif not kept and str(got) == shown:  # the same text read as another type
        pytest.fail(f"{value!r} written as {text!r} reads {got!r} and was not flagged")


@pytest.mark.parametrize(
    "template, base, words",
    [
        (
            "config = dict(lr='{{ lr }}', seed={{ seed }})\n",
            {"lr": 0.1},
            "`lr` is 0.1 in the spec and the lock, but the file reads '0.1'",
        ),
        ("revision = {{ revision }}\nSEED = {{ seed }}\n", {"revision": "1.10"}, "the file reads 1.1"),
        ("cfg = {'flag': '{{ flag }}', 'seed': {{ seed }}}\n", {"flag": False}, "the file reads 'False'"),
        (
            "class C:\n    warmup: int = '{{ warmup }}'\n    seed = {{ seed }}\n",
            {"warmup": -3},
            "line 3: `warmup`",
        ),
    ],
)
def test_a_python_config_value_of_another_type_stops_the_render(tmp_path, monkeypatch, template, base, words):
    monkeypatch.chdir(tmp_path)
    code, output = _render(tmp_path, template, {**base, "seed": 0}, "py")
    assert code == 2 and words in output, output


@pytest.mark.parametrize(
    "template, base",
    [
        (
            "config = dict(lr={{ lr }}, name={{ name | pyrepr }}, ref={{ ref }}, seed={{ seed }})\n",
            {"lr": 0.1, "name": "1.10", "ref": None},
        ),
        (
            "a = dict(lr='{{ lr }}')\nb = dict(lr={{ lr }})\nseed = {{ seed }}\n",
            {"lr": 0.1},
        ),  # lr twice: not judged
    ],
)
def test_a_python_config_that_keeps_each_type_renders(tmp_path, monkeypatch, template, base):
    monkeypatch.chdir(tmp_path)
    code, output = _render(tmp_path, template, {**base, "seed": 0}, "py")
    assert code == 0, output
