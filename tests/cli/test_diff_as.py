"""`sweepgen diff --as`: a reader named for any suffix; `--format json` places every change."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

PAIRS = {
    "json": ('{"lr": 1e-6, "rows": [1, 2]}\n', '{"lr": 2e-6, "rows": [1, 2]}\n'),
    "yaml": ("model:\n  lr: 1.0e-6\n", "model:\n  lr: 2.0e-6\n"),
    "toml": ('[optim]\nname = "adam"\nlr = 1e-6\n', '[optim]\nname = "adam"\nlr = 2e-6\n'),
    "python": (
        "import torch\nfrom x.hooks import Hook\ndtype = torch.float16\n",
        "import torch\nfrom x.hooks import Hook\ndtype = torch.bfloat16\n",
    ),
    "shell": ("python train.py --lr 1e-6\n", "python train.py --lr 2e-6\n"),
}

LINES = {"json": 1, "yaml": 2, "toml": 3, "python": 3, "shell": 1}


def _diff(*argv: str):
    return CliRunner().invoke(main, ["diff", *argv])


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_any_suffix_reads_as_named_and_json_places_every_change(tmp_path, kind):
    old, new = PAIRS[kind]
    (tmp_path / "a.conf").write_text(old)
    (tmp_path / "b.conf").write_text(new)
    refused = _diff(str(tmp_path / "a.conf"), str(tmp_path / "b.conf"))
    assert refused.exit_code == 2 and "--as json|yaml|toml|python|shell" in refused.output
    result = _diff(str(tmp_path / "a.conf"), str(tmp_path / "b.conf"), "--as", kind, "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert len(report["changes"]) == 1
    (change,) = report["changes"]
    line = LINES[kind]  # where the changed value is written, in both files
    assert (change["old_at"], change["new_at"]) == (
        f"{tmp_path / 'a.conf'}:{line}",
        f"{tmp_path / 'b.conf'}:{line}",
    )


def test_as_per_side_and_auto(tmp_path):
    (tmp_path / "a.json").write_text('{"lr": 1e-6}\n')
    (tmp_path / "b.conf").write_text("lr: 1.0e-6\n")
    same = _diff(str(tmp_path / "a.json"), str(tmp_path / "b.conf"), "--as", "auto", "--as", "yaml")
    assert same.exit_code == 0, same.output
    assert same.stdout == "no differences\n"
    three = _diff(
        str(tmp_path / "a.json"), str(tmp_path / "b.conf"), "--as", "json", "--as", "json", "--as", "json"
    )
    assert three.exit_code == 2 and "Traceback" not in three.output
    wrong = _diff(str(tmp_path / "a.json"), str(tmp_path / "b.conf"), "--as", "toml")
    assert wrong.exit_code == 2 and "invalid TOML" in wrong.output


def test_resolve_bases_refuses_a_file_read_as_another_format(tmp_path):
    (tmp_path / "a.conf").write_text("x = 1\n")
    result = _diff(str(tmp_path / "a.conf"), str(tmp_path / "a.conf"), "--as", "python", "--resolve-bases")
    assert result.exit_code == 2 and "--resolve-bases" in result.output
