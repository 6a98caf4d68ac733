"""The compile API the CLI calls (sweepgen.compile.api) decides what the commands do, so each
command only parses, calls one function and prints: no spec named means the project's specs (and
then an orphaned sweep folder counts), finding none is an error, and `schema -o` writes its file."""

from __future__ import annotations

import json

import pytest
from spec_support import write_project

from sweepgen.compile import api
from sweepgen.errors import UserError


def test_no_specs_named_means_the_projects_specs_and_orphans_count(project):
    write_project(project, "grid: {training.seed: [1, 2]}\n")
    assert api.project_specs() == ["specs/demo.yaml"]
    outcomes = api.render(None)
    assert [o.spec_path for o in outcomes] == ["specs/demo.yaml"] and outcomes[0].files == 2
    (project / "generated" / "gone").mkdir()
    (project / "generated" / "gone" / "x.yaml").write_text("a: 1\n")
    assert api.check(["specs/demo.yaml"]).problems == []  # named specs: other folders are not ours
    assert [p.kind for p in api.check(None).problems] == ["orphan"]


def test_finding_no_spec_is_an_error_not_an_empty_pass(project):
    with pytest.raises(UserError, match="none found by the default globs"):
        api.check(None)
    with pytest.raises(UserError, match="none found by the default globs"):
        api.render(None)


def test_schema_document_is_printed_or_written(tmp_path):
    text = api.schema_document()
    assert json.loads(text)["$schema"].endswith("2020-12/schema") and text.endswith("\n")
    out = tmp_path / "spec.schema.json"
    assert api.schema_document(out=str(out)) == text
    assert out.read_text(encoding="utf-8") == text
