"""Schemas as files: `sweepgen schema --export MODULE:CLASS` writes a JSON Schema (help as
descriptions, Literal and `choices` metadata as enums, defaults, a package stamp) that a spec names
as `schema: schemas/x.json` and that validates with no import; `choices:` per path; a lock that does
not depend on the environment (`--no-import` never changes it; a mismatch names its cause)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

CONFIG_MODULE = """
from dataclasses import dataclass, field
from typing import Literal


@dataclass
class TrainConfig:
    learning_rate: float = field(default=1e-6, metadata={"help": "AdamW learning rate."})
    loss_type: str = field(
        default="dapo",
        metadata={"help": "The loss. Supported values are 'grpo', 'dr_grpo' and 'dapo'. 'grpo': old."},
    )
    dtype: str = field(default="auto", metadata={"help": "e.g. 'bf16_hack'", "choices": ["auto", "bf16"]})
    precision: Literal["fp32", "bf16"] = "fp32"
    tags: list[str] = field(default_factory=list)
    steps: int = 10
"""

SPEC = """\
sweepgen: 1
name: lr
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
schema: ../schemas/train.json
base: {learning_rate: 1.0e-6, loss_type: dapo, precision: fp32, steps: 10}
grid: {learning_rate: [1.0e-6, 2.0e-6]}
"""


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def schema_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (project / "mycfg.py").write_text(CONFIG_MODULE)
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (project / "specs" / "lr.yaml").write_text(SPEC)
    monkeypatch.syspath_prepend(str(project))
    yield project
    sys.modules.pop("mycfg", None)


def test_export_writes_types_help_enums_defaults_and_a_stamp(schema_project):
    assert not (schema_project / "schemas").exists()
    result = cli("schema", "--export", "mycfg:TrainConfig", "-o", "schemas/train.json")  # folder made
    assert result.exit_code == 0, result.output
    schema = json.loads((schema_project / "schemas/train.json").read_text())
    props = schema["properties"]
    assert props["learning_rate"]["description"] == "AdamW learning rate."
    assert props["learning_rate"]["default"] == 1e-6 and props["learning_rate"]["type"] == "number"
    assert "enum" not in props["loss_type"]  # help text is prose, never read for values
    assert props["dtype"]["enum"] == ["auto", "bf16"]  # from the `choices` metadata
    assert props["precision"]["enum"] == ["fp32", "bf16"]  # from the Literal
    assert props["tags"]["default"] == []
    assert schema["additionalProperties"] is False
    assert schema["x-sweepgen"]["source"] == "mycfg:TrainConfig"
    # the same class gives the same bytes
    again = cli("schema", "--export", "mycfg:TrainConfig")
    assert again.output == (schema_project / "schemas/train.json").read_text()


def test_a_schema_file_validates_without_importing_the_class(schema_project):
    (schema_project / "schemas").mkdir()
    assert cli("schema", "--export", "mycfg:TrainConfig", "-o", "schemas/train.json").exit_code == 0
    (schema_project / "mycfg.py").unlink()  # the class is gone: only the file remains
    sys.modules.pop("mycfg", None)
    assert cli("render", "specs/lr.yaml").exit_code == 0
    lock = json.loads((schema_project / "generated/lr/sweep.lock.json").read_text())
    assert "schemas/train.json" in lock["inputs"]  # its hash: the same lock in every environment
    spec = schema_project / "specs/lr.yaml"
    spec.write_text(SPEC.replace("precision: fp32", "precision: bf17"))
    bad = cli("check", "specs/lr.yaml")
    assert bad.exit_code == 2
    assert "specs/lr.yaml:6:" in bad.output and "`precision`: must be one of" in bad.output
    assert "'bf17'" in bad.output


@pytest.mark.parametrize(
    ("package", "version", "told"),
    [
        ("pytest", "0.0.1", True),  # another release of an installed package
        ("pytest", pytest.__version__, False),  # the installed release
        ("no-such-package-here", "1.0", False),  # not installed (a lint job): nothing to compare with
    ],
)
def test_a_refusal_by_a_file_exported_from_another_release_says_so(schema_project, package, version, told):
    """The file's keys and values are that release's: a refusal may be its age, not the config's."""
    assert cli("schema", "--export", "mycfg:TrainConfig", "-o", "schemas/train.json").exit_code == 0
    path = schema_project / "schemas/train.json"
    schema = json.loads(path.read_text())
    schema["x-sweepgen"].update(package=package, version=version)
    path.write_text(json.dumps(schema))
    (schema_project / "specs/lr.yaml").write_text(SPEC.replace("precision: fp32", "precision: bf17"))
    bad = cli("check", "specs/lr.yaml")
    assert bad.exit_code == 2
    said = " ".join(bad.output.split())
    assert "`precision`: must be one of" in said
    stale = (
        f"../schemas/train.json was exported from pytest 0.0.1, {pytest.__version__} is installed here: "
        "`sweepgen schema --export mycfg:TrainConfig -o schemas/train.json`"
    )
    assert (stale in said) is told, said


def test_choices_per_path_are_checked_in_every_variant(project):
    (project / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = project / "specs" / "c.yaml"
    body = """\
        sweepgen: 1
        name: c
        template: ../templates/t.yaml.j2
        output: "{{ variant.name }}.yaml"
        base: {trainer: {loss_type: dapo, lr: 0.1}}
        variants:
          a: {}
          b: {trainer.loss_type: grpoo}
        allow: [trainer.loss_type]
        choices: {trainer.loss_type: [grpo, dapo]}
        """
    spec.write_text(textwrap.dedent(body))
    bad = cli("check", "specs/c.yaml")
    assert bad.exit_code == 2
    assert "specs/c.yaml:8:" in bad.output and "'grpoo'" in bad.output and "choices" in bad.output
    spec.write_text(textwrap.dedent(body).replace("grpoo", "grpo"))
    assert cli("render", "specs/c.yaml").exit_code == 0
    spec.write_text(
        textwrap.dedent(body)
        .replace("grpoo", "grpo")
        .replace("{trainer.loss_type: [", "{trainer.loss_typ: [")
    )
    typo = cli("check", "specs/c.yaml")
    assert typo.exit_code == 2 and "did you mean `trainer.loss_type`?" in typo.output


def test_no_import_never_changes_the_lock_and_a_mismatch_names_the_module(schema_project):
    spec = schema_project / "specs/lr.yaml"
    spec.write_text(SPEC.replace("schema: ../schemas/train.json", "schema: mycfg:TrainConfig"))
    assert cli("render", "specs/lr.yaml").exit_code == 0
    lock_path = schema_project / "generated/lr/sweep.lock.json"
    before = lock_path.read_bytes()
    assert "module:mycfg" in json.loads(before)["inputs"]
    skipped = cli("check", "--no-import", "specs/lr.yaml")
    assert skipped.exit_code == 0, skipped.output
    assert "schema check skipped (--no-import)" in skipped.output
    assert cli("render", "--no-import", "specs/lr.yaml").exit_code == 0
    assert lock_path.read_bytes() == before
    # the schema's source changed since the lock was written: the lock names it
    (schema_project / "mycfg.py").write_text(CONFIG_MODULE + "\n# v2\n")
    sys.modules.pop("mycfg", None)
    changed = cli("check", "--diff", "specs/lr.yaml")
    assert changed.exit_code == 1
    assert "lock file is out of date: schema module mycfg: source sha256" in changed.output


@pytest.fixture
def installed(
    tmp_path_factory: pytest.TempPathFactory, project: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An installed package ``instpkg`` (importing its installed dependency ``instdep``) on sys.path,
    as a pip install puts it; forgotten by the import system afterwards."""
    site = tmp_path_factory.mktemp("site")
    (site / "instpkg").mkdir()
    (site / "instpkg" / "__init__.py").write_text(
        "import dataclasses\nimport instdep\n\n\n@dataclasses.dataclass\nclass Cfg:\n    lr: float = 0.1\n"
    )
    (site / "instdep.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(site))
    yield project
    for name in ("instpkg", "instdep"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("committed", ["instdep.py", "instpkg.py"])
def test_a_committed_module_never_stands_in_for_an_installed_one(installed: Path, committed: str):
    """`schema --export trl:GRPOConfig` in a pull request's checkout: the working folder was put first
    on sys.path for the import, so a committed `accelerate.py` (here `instdep.py`, which the installed
    package imports) or `trl.py` ran instead of the installed module."""
    canary = installed.parent / f"{installed.name}-ran"
    (installed / committed).write_text(f"open({str(canary)!r}, 'w').close()\n")
    result = cli("schema", "--export", "instpkg:Cfg")
    assert not canary.exists()
    if committed == "instdep.py":
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["properties"]["lr"]["default"] == 0.1
    else:
        assert result.exit_code == 2, result.output
        assert "`instpkg` is both a module of this folder (instpkg.py) and an installed one" in result.output
        assert "hint: rename or remove this folder's `instpkg`" in result.output
        assert "Traceback" not in result.output


def test_a_module_installed_as_links_to_the_folders_own_is_no_choice(installed: Path, tmp_path_factory):
    """An editable install of the project itself as a tree of links (setuptools' strict mode) finds
    the folder's own file on sys.path too: the same code, imported, not refused."""
    (installed / "mine.py").write_text(
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
    )
    tree = tmp_path_factory.mktemp("editable")
    (tree / "mine.py").symlink_to(installed / "mine.py")
    sys.path.insert(0, str(tree))
    try:
        result = cli("schema", "--export", "mine:C")
    finally:
        sys.path.remove(str(tree))
        sys.modules.pop("mine", None)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["properties"]["x"]["default"] == 1


def test_the_installed_distributions_are_read_once_until_a_folder_on_sys_path_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The stamp's package and version come from importlib.metadata's map of every installed
    distribution, ~0.2 CPU-s to build with the ML stack installed: built once for the classes one
    process exports, and again once a distribution appears in a folder on sys.path."""
    import dataclasses
    import importlib.metadata

    from sweepgen.compile.schema import export

    @dataclasses.dataclass
    class Cfg:
        lr: float = 0.1

    built = []
    real = importlib.metadata.packages_distributions

    def counted() -> dict[str, list[str]]:
        built.append(1)
        return real()

    monkeypatch.setattr(importlib.metadata, "packages_distributions", counted)
    monkeypatch.syspath_prepend(str(tmp_path))
    os.utime(tmp_path, (time.time() - 60, time.time() - 60))  # a folder last changed a minute ago
    assert "package" not in export.export("sgcachepkg:Cfg", Cfg)[export.STAMP]  # nothing installs it
    for name in ("sgcachepkg:Cfg", "sgcachepkg.sub:Cfg", "other:Cfg"):
        export.export(name, Cfg)
    assert len(built) == 1
    info = tmp_path / "sgcachepkg-1.2.dist-info"  # installed meanwhile
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sgcachepkg\nVersion: 1.2\n")
    (info / "top_level.txt").write_text("sgcachepkg\n")
    stamp = export.export("sgcachepkg:Cfg", Cfg)[export.STAMP]
    assert (stamp["package"], stamp["version"]) == ("sgcachepkg", "1.2") and len(built) == 2


def test_a_distribution_replaced_in_the_same_file_time_tick_is_never_answered_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The map of installed distributions was kept while each folder on sys.path kept its inode,
    link count and file time. A distribution replaced by another (one .dist-info folder out, one
    in: the link count unchanged) within the file system's clock tick of the change before the map
    was read kept the time too, and the stale map was the answer (no package named). A map read
    while a folder's time is that recent is never kept now."""
    import dataclasses

    from sweepgen.compile.schema import export

    @dataclasses.dataclass
    class Cfg:
        lr: float = 0.1

    def dist_info(name: str) -> Path:
        info = tmp_path / f"{name}-1.2.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2\n")
        (info / "top_level.txt").write_text(f"{name}\n")
        return info

    monkeypatch.syspath_prepend(str(tmp_path))
    old = dist_info("sgothers")
    before = os.stat(tmp_path)
    assert "package" not in export.export("sgswapped:Cfg", Cfg)[export.STAMP]
    shutil.rmtree(old)
    dist_info("sgswapped")
    os.utime(tmp_path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same coarse tick
    assert os.stat(tmp_path).st_nlink == before.st_nlink
    stamp = export.export("sgswapped:Cfg", Cfg)[export.STAMP]
    assert (stamp.get("package"), stamp.get("version")) == ("sgswapped", "1.2"), stamp
