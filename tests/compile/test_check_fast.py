"""`check`'s fast path agrees with `check --full` for every kind of change, and skips rendering only
when nothing a render depends on changed; foreign tool files and git-ignored files are not orphans."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sweepgen.compile import api
from sweepgen.compile.check import fast as check_fast
from sweepgen.compile.output import pipeline
from sweepgen.compile.output.lockfile import lock

SPEC = """\
sweepgen: 1
name: demo
template: ../templates/main.yaml.j2
output: "{{ variant.name }}.yaml"
base:
  include: [../configs/base.yaml]
  set: {}
grid:
  training.seed: [1, 2, 3]
schema: schema_mod:Config
"""
SCHEMA = """\
from pydantic import BaseModel, ConfigDict


class Training(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int
    lr: float


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    training: Training
"""


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for folder in ("specs", "templates", "configs"):
        (tmp_path / folder).mkdir()
    (tmp_path / "specs" / "demo.yaml").write_text(SPEC.replace("  set: {}\n", ""))
    (tmp_path / "configs" / "base.yaml").write_text("training: {seed: 0, lr: 0.1}\n")
    (tmp_path / "templates" / "main.yaml.j2").write_text("{% include 'part.j2' %}\n{{ config | to_yaml }}\n")
    (tmp_path / "templates" / "part.j2").write_text("# part one")
    (tmp_path / "schema_mod.py").write_text(SCHEMA)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "schema_mod", raising=False)  # each project imports its own
    api.render(["specs/demo.yaml"])
    yield tmp_path
    sys.modules.pop("schema_mod", None)


def both(spec: str = "specs/demo.yaml") -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    def key(report: object) -> list[tuple[str, str, str]]:
        return sorted((p.kind, p.path, p.diff) for p in report.problems)  # type: ignore[attr-defined]

    return key(api.check([spec])), key(api.check([spec], full=True))


def test_nothing_changed_is_decided_without_rendering(proj, monkeypatch):
    def no_render(*args, **kwargs):
        raise AssertionError("the fast path rendered")

    monkeypatch.setattr("sweepgen.compile.check.committed.compile_spec", no_render)
    report = api.check(["specs/demo.yaml"])
    assert report.problems == [] and report.files == 3


@pytest.mark.parametrize(
    "change, kind",
    [
        (lambda p: (p / "generated/demo/seed2.yaml").write_text("training: {seed: 9}\n"), "edited"),
        (lambda p: (p / "generated/demo/seed2.yaml").unlink(), "missing"),
        (lambda p: (p / "generated/demo/extra.yaml").write_text("x: 1\n"), "orphan"),
        (lambda p: (p / "specs/demo.yaml").write_text(SPEC.replace("[1, 2, 3]", "[1, 2, 4]")), "orphan"),
        (lambda p: (p / "configs/base.yaml").write_text("training: {seed: 0, lr: 0.2}\n"), "stale"),
        (lambda p: (p / "templates/part.j2").write_text("# part two"), "stale"),
        (lambda p: (p / "schema_mod.py").write_text(SCHEMA.replace("lr: float", "lr: int")), "invalid"),
    ],
    ids=[
        "hand edit",
        "deleted file",
        "foreign file",
        "spec edit",
        "included file",
        "jinja include",
        "schema",
    ],
)
def test_fast_and_full_agree_on_every_kind_of_change(proj, change, kind):
    change(proj)
    sys.modules.pop("schema_mod", None)  # a changed schema module is imported afresh, as in a new process
    fast, full = both()
    assert fast == full
    assert kind in {k for k, _, _ in fast}


def test_a_different_sweepgen_version_renders_again(proj, monkeypatch):
    monkeypatch.setattr(check_fast, "__version__", "0.0.0-other")
    calls = []
    real = pipeline.compile_spec
    monkeypatch.setattr(
        "sweepgen.compile.check.committed.compile_spec", lambda *a, **k: calls.append(a) or real(*a, **k)
    )
    report = api.check(["specs/demo.yaml"])
    assert calls and report.problems == []


def test_a_hand_edit_re_renders_only_that_file(proj, monkeypatch):
    (proj / "generated/demo/seed2.yaml").write_text("training: {seed: 9}\n")
    rendered = []
    real = pipeline.compile_spec

    def spy(*args, **kwargs):
        plan = real(*args, **kwargs)
        rendered.extend(f.path for f in plan.files)
        return plan

    monkeypatch.setattr("sweepgen.compile.check.committed.compile_spec", spy)
    report = api.check(["specs/demo.yaml"])
    assert rendered == ["seed2.yaml"]
    assert [p.kind for p in report.problems] == ["edited"] and "+  seed: 2" in report.problems[0].diff


def test_tool_files_beside_generated_files_are_not_orphans(proj):
    out = proj / "generated" / "demo"
    (out / ".DS_Store").write_bytes(b"\0")
    (out / ".seed1.yaml.swp").write_bytes(b"\0")
    (out / "seed1.yaml~").write_text("backup")
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert both() == ([], [])
    (out / "notes.txt").write_text("mine")
    fast, full = both()
    assert fast == full == [("orphan", "generated/demo/notes.txt", "")]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_ignored_files_are_not_orphans(proj):
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    (proj / ".gitignore").write_text("*.log\n")
    (proj / "generated/demo/train.log").write_text("a log")
    (proj / "generated/demo/train.txt").write_text("not ignored")
    fast, full = both()
    assert fast == full == [("orphan", "generated/demo/train.txt", "")]


@pytest.mark.train  # specs/trl_grpo_cli.yaml is checked against TRL's GRPOConfig (the train extra)
def test_check_passes_after_every_generated_python_config_in_specs_is_imported(tmp_path, monkeypatch):
    """Import (byte-compile, as `import` does) every generated .py of the shipped specs."""
    root = Path(__file__).resolve().parents[2]
    for folder in ("specs", "templates", "generated", "configs"):
        if (root / folder).exists():
            shutil.copytree(root / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    compiled = 0
    for source in (tmp_path / "generated").rglob("*.py"):
        py_compile.compile(str(source), cfile=importlib.util.cache_from_source(str(source)), doraise=True)
        compiled += 1
    assert compiled >= 5 and list((tmp_path / "generated").rglob("__pycache__/*.pyc"))
    specs = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "specs").glob("*.yaml"))
    for full in (False, True):
        report = api.check(specs, orphan_sweeps=True, full=full)
        assert report.problems == [], [(p.kind, p.path) for p in report.problems]


def test_a_version_1_lock_is_read_called_out_of_date_and_replaced_by_render(proj):
    path = proj / "generated/demo/sweep.lock.json"
    model = lock.parse(path.read_bytes(), "x")
    v1 = {
        "lock_version": 1,
        "sweepgen_version": model.sweepgen_version,
        "sweep": model.sweep,
        "spec": model.spec,
        "spec_sha256": model.spec_sha256,
        "templates": {},
        "varying": model.varying,
        "resources": None,
        "files": [
            {
                "path": f.path,
                "variant": f.variant,
                "run_name": f.run_name,
                "values": model.values(f),
                "layers": f.layers,
                "config": model.config(f),
                "sha256": f.sha256,
            }
            for f in model.files
        ],
    }
    path.write_text(json.dumps(v1))
    old = lock.parse(path.read_bytes(), "x")
    assert old.version == 1 and old.config(old.files[1]) == model.config(model.files[1])
    fast, full = both()
    assert fast == full
    problem = next(p for p in api.check(["specs/demo.yaml"]).problems if p.kind == "lock")
    assert "version-1 format" in problem.message and "sweepgen render" in problem.hint
    api.render(["specs/demo.yaml"])
    assert json.loads(path.read_text())["lock_version"] == lock.LOCK_VERSION
    assert api.check(["specs/demo.yaml"]).problems == []


def test_render_with_nothing_changed_compiles_nothing_and_reports_every_file_unchanged(proj, monkeypatch):
    def no_compile(*args, **kwargs):
        raise AssertionError("an unchanged spec was compiled")

    with monkeypatch.context() as patched:
        patched.setattr("sweepgen.compile.api.compile_spec", no_compile)
        [out] = api.render(["specs/demo.yaml"])
    assert out.plan is None and out.files == 3 and out.count("unchanged") == 3 and not out.writes
    (proj / "templates/part.j2").write_text("# part two")  # an input changed: compiled and rewritten
    [out] = api.render(["specs/demo.yaml"])
    assert out.plan is not None and out.count("update") == 3


def test_a_schema_module_is_recorded_the_same_way_on_every_machine(proj):
    """Project code: the digest of its source; a release in site-packages (even in a venv inside the
    project): the distribution and version, never a machine's path or a hash of its site-packages."""
    import importlib.metadata

    from sweepgen.compile.output.lockfile.inputs import module_identity
    from sweepgen.compile.output.lockfile.module_digest import source_digest

    assert module_identity("schema_mod") == source_digest("schema_mod", str(proj / "schema_mod.py"))
    assert len(module_identity("schema_mod")) == 64
    assert module_identity("yaml") == (f"PyYAML=={importlib.metadata.version('PyYAML')}")


def test_list_json_writes_nan_and_infinity_as_valid_json(project_with_nan):
    from click.testing import CliRunner

    from sweepgen.cli import main

    result = CliRunner().invoke(main, ["list", "specs/demo.yaml", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert {"$float": "nan"} in [v["values"]["training.lr"] for v in doc["variants"]]


@pytest.fixture
def project_with_nan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    (tmp_path / "specs" / "demo.yaml").write_text(
        'sweepgen: 1\nname: demo\ntemplate: ../templates/t.yaml.j2\noutput: "{{ variant.name }}.yaml"\n'
        "base: {training: {lr: 0.1}}\ngrid:\n  training.lr: {a: 0.1, b: .nan}\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "include", ["{% include ['first.j2', 'part.j2'] %}", "{% include 'first.j2' ignore missing %}"]
)
def test_an_include_of_a_template_missing_now_renders_and_its_arrival_is_a_change(proj, include):
    """Jinja takes the first listed template that exists: one missing at render is an input too,
    since adding it later changes every file. It rendered with an internal error (exit 70)."""
    (proj / "templates" / "main.yaml.j2").write_text(include + "\n{{ config | to_yaml }}\n")
    api.render(["specs/demo.yaml"])
    assert both() == ([], [])
    (proj / "templates" / "first.j2").write_text("# first")
    fast, full = both()
    assert fast == full and "stale" in {k for k, _, _ in fast}


def _lock_inputs_added(proj: Path, added: dict[str, str]) -> None:
    """The lock's inputs with ``added`` besides, its digest recomputed (anyone can)."""
    import re

    from sweepgen.compile.output.lockfile import lock_digest

    path = proj / "generated/demo/sweep.lock.json"
    text = path.read_text().replace('"inputs": {', '"inputs": {' + json.dumps(added)[1:-1] + ", ", 1)
    path.write_text(lock_digest.seal(re.sub(r'  "digest": "[0-9a-f]{64}",\n', "", text)))


@pytest.mark.parametrize("alias", ["link", "dot"])
def test_a_lock_naming_one_file_under_many_names_hashes_it_once(proj, monkeypatch, alias):
    """A lock (a pull request's) may list one large file of the project under any number of names:
    links to its folder, `./` prefixes. The fast path hashed it again for each: 200 names of a 50 MB
    file held `check` 39 s, and a 1 GiB lock holds millions. Now each file is hashed once, and a name
    that is not written as render writes it (normalised) is a mismatch, never hashed."""
    import hashlib
    from collections import Counter

    digest = hashlib.sha256((proj / "configs/base.yaml").read_bytes()).hexdigest()
    if alias == "link":
        for i in range(40):
            (proj / f"l{i}").symlink_to("configs")
        _lock_inputs_added(proj, {f"l{i}/base.yaml": digest for i in range(40)})
    else:
        _lock_inputs_added(proj, {"./" * i + "configs/base.yaml": digest for i in range(1, 40)})
    hashed: Counter[str] = Counter()
    real = check_fast.file_sha256
    monkeypatch.setattr(check_fast, "file_sha256", lambda p: hashed.update([p]) or real(p))
    api.check(["specs/demo.yaml"])
    assert all(n == 1 for n in hashed.values()), hashed
