"""`sweepgen list` (the variant matrix) and `sweepgen schema` (JSON Schema of the spec format)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from spec_support import write_project

from sweepgen.cli import main


def test_list_shows_one_row_per_variant_and_one_column_per_varying_path(project):
    write_project(
        project,
        "variants:\n  a: {}\n  b: {+streamer.params.n: 4}\ngrid: {training.seed: [1, 2]}\n"
        "allow: [streamer.params.*]\n",
    )
    result = CliRunner().invoke(main, ["list", "specs/demo.yaml", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["varying"] == ["streamer.params.n", "training.seed"]
    assert data["variants"] == [
        {"name": "a_seed1", "values": {"training.seed": 1}},
        {"name": "a_seed2", "values": {"training.seed": 2}},
        {"name": "b_seed1", "values": {"streamer.params.n": 4, "training.seed": 1}},
        {"name": "b_seed2", "values": {"streamer.params.n": 4, "training.seed": 2}},
    ]
    text = CliRunner().invoke(main, ["list", "specs/demo.yaml"]).output
    assert "4 variant(s)" in text and "b_seed2" in text and "training.seed" in text


def test_list_shows_values_that_look_like_rich_markup_verbatim(project):
    write_project(project, 'variants:\n  a: {+tag: "[/INST]"}\n  b: {+tag: "[bold]x"}\nallow: [tag]\n')
    result = CliRunner().invoke(main, ["list", "specs/demo.yaml"])
    assert result.exit_code == 0, result.output
    assert "[/INST]" in result.output and "[bold]x" in result.output


def test_list_of_a_bad_spec_exits_2(project):
    write_project(project, "grid: {training.sed: [1]}\n")
    result = CliRunner().invoke(main, ["list", "specs/demo.yaml"])
    assert result.exit_code == 2 and "specs/demo.yaml:8:23" in result.output


def test_schema_describes_the_format_and_accepts_the_examples(project):
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["additionalProperties"] is False
    assert {"sweepgen", "name", "template", "output", "base"} <= set(schema["required"])
    assert {
        "variants",
        "grid",
        "zip",
        "ablation",
        "allow",
        "constraints",
        "schema",
        "resources",
        "run_name",
    } <= set(schema["properties"])
    assert schema["$defs"]["Resources"]["additionalProperties"] is False


def _undescribed(node, path: str) -> list[str]:
    """Every property of the JSON Schema (nested models included) that has no description."""
    missing = []
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            if "description" not in sub:
                missing.append(f"{path}.{key}")
            missing += _undescribed(sub, f"{path}.{key}")
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or []:
                missing += _undescribed(sub, path)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                missing += _undescribed(node[key], f"{path}[]")
    return missing


def test_every_key_of_the_spec_schema_has_a_description():
    schema = json.loads(CliRunner().invoke(main, ["schema"]).output)
    missing = _undescribed(schema, "spec")
    for name, model in schema["$defs"].items():
        missing += _undescribed(model, name)
    assert missing == []
    # the check above walks nested models: it would catch a new undescribed key in them
    assert "sample" in schema["properties"] and "Distribution" in schema["$defs"]


def test_every_spec_in_specs_validates_against_sweepgen_schema(tmp_path):
    """check-jsonschema (the pre-commit ecosystem's validator) reads our schema and every example."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    schema = tmp_path / "spec.schema.json"
    schema.write_text(CliRunner().invoke(main, ["schema"]).output)
    specs = sorted(str(p) for p in (repo / "specs").glob("*.yaml"))
    assert len(specs) >= 10
    ok = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema), *specs],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # and the same validator refuses a spec with an unknown key, so the test can fail
    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(specs[0]).read_text() + "grdi: {seed: [1]}\n")
    refused = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema), str(bad)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and "grdi" in refused.stdout + refused.stderr
