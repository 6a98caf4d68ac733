"""The one confinement rule for paths read from files (sweepgen/fs/confine.py), and the specs walk of
``[tool.sweepgen]`` that uses it: properties over generated paths, links made on disk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen import settings
from sweepgen.errors import UserError
from sweepgen.fs.confine import lexically_inside, resolve_inside

SEGMENT = st.sampled_from(["a", "b", "..", ".", "", "c.yaml", "~", "x\0y"])


@given(st.lists(SEGMENT, min_size=1, max_size=8), st.booleans())
def test_lexically_inside_agrees_with_a_walk_of_the_segments(parts: list[str], absolute: bool):
    path = ("/" if absolute else "") + "/".join(parts)
    depth, escapes = 0, False
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            escapes = escapes or depth < 0
        elif part not in ("", "."):
            depth += 1
    expected = (
        bool(path)
        and not path.startswith("/")
        and "\0" not in path
        and not path.startswith("~")
        and not escapes
    )
    assert lexically_inside(path) == expected, path


def test_resolve_inside_follows_links_before_deciding(tmp_path: Path):
    root, outside = tmp_path / "proj", tmp_path / "outside"
    (root / "runs").mkdir(parents=True)
    outside.mkdir()
    (root / "out").symlink_to(outside)
    (root / "in").symlink_to(root / "runs")
    assert resolve_inside(str(root), "runs/a") == str((root / "runs" / "a").resolve())
    assert resolve_inside(str(root), "in/a") == str((root / "runs" / "a").resolve())
    assert resolve_inside(str(root), "out/a") is None
    assert resolve_inside(str(root), "runs/../../outside") is None
    assert resolve_inside(str(root), str(root / "runs")) is None  # absolute: never from a file


def _project(tmp_path: Path, table: str) -> Path:
    root = tmp_path / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "a.yaml").write_text("sweepgen: 1\n")
    (root / "pyproject.toml").write_text("[tool.sweepgen]\n" + table)
    return root


@pytest.mark.parametrize(
    "table, key",
    [
        ('output = "../elsewhere"\n', "output"),
        ('output = "/tmp/elsewhere"\n', "output"),
        ('output = "."\n', "output"),
        ('specs = ["../**/*.yaml"]\n', "specs"),
        ('specs = ["/**/*.yaml"]\n', "specs"),
        ('specs = ["specs/../../x/*.yaml"]\n', "specs"),
    ],
)
def test_settings_refuse_paths_that_leave_the_project(tmp_path: Path, table: str, key: str):
    root = _project(tmp_path, table)
    with pytest.raises(UserError) as err:
        settings.load(str(root))
    assert err.value.key == f"tool.sweepgen.{key}"
    assert "pyproject.toml" in str(err.value.location)


def test_settings_output_through_a_link_is_refused(tmp_path: Path):
    root = _project(tmp_path, 'output = "gen"\n')
    (tmp_path / "outside").mkdir()
    (root / "gen").symlink_to(tmp_path / "outside")
    with pytest.raises(UserError) as err:
        settings.load(str(root))
    assert err.value.key == "tool.sweepgen.output"


def test_specs_walk_matches_globs_and_never_follows_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = _project(tmp_path, 'specs = ["specs/**/*.yaml", "*.sweep.yaml"]\n')
    (root / "specs" / "deep" / "er").mkdir(parents=True)
    (root / "specs" / "deep" / "er" / "b.yaml").write_text("x")
    (root / "top.sweep.yaml").write_text("x")
    (root / "specs" / ".hidden").mkdir()
    (root / "specs" / ".hidden" / "h.yaml").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.yaml").write_text("x")
    (root / "specs" / "linked").symlink_to(tmp_path / "outside")  # a folder link: never entered
    monkeypatch.chdir(root)
    found = settings.load().spec_files()
    assert found == ["specs/a.yaml", "specs/deep/er/b.yaml", "top.sweep.yaml"]


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_spec_the_globs_match_that_is_a_link_or_no_regular_file_is_refused_never_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
):
    """Skipped in silence (as before), `check` passed without checking what the person takes for a
    spec: a link (never followed: it can lead outside) or a FIFO is named, with what to do."""
    root = _project(tmp_path, 'specs = ["specs/**/*.yaml"]\n')
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.yaml").write_text("x")
    if kind == "link":
        (root / "specs" / "l.yaml").symlink_to(tmp_path / "outside" / "o.yaml")
    else:
        os.mkfifo(root / "specs" / "l.yaml")
    monkeypatch.chdir(root)
    with pytest.raises(UserError) as err:
        settings.load().spec_files()
    assert err.value.location is not None and err.value.location.path == "specs/l.yaml"
    assert ("a symbolic link" if kind == "link" else "not a regular file") in str(err.value)
    assert err.value.hint


def test_specs_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = _project(tmp_path, 'specs = ["**/*.yaml"]\n')
    for i in range(60):
        (root / f"d{i}").mkdir()
    monkeypatch.setattr(settings, "MAX_WALK_ENTRIES", 50)
    monkeypatch.chdir(root)
    started = time.monotonic()
    with pytest.raises(UserError) as err:
        settings.load().spec_files()
    assert time.monotonic() - started < 30
    assert err.value.key == "tool.sweepgen.specs" and err.value.hint


@pytest.mark.parametrize(
    "raw",
    [
        b'[tool.sweepgen]\nspecs = ["a\x00"]\n',
        b"\xff\xfe[tool.sweepgen]\n",
        b"x = " + b"9" * 5000 + b"\n[tool.sweepgen]\n",
    ],
    ids=["nul", "not-utf8", "huge-int"],
)
def test_a_hostile_pyproject_is_a_user_error_with_a_hint(tmp_path: Path, raw: bytes):
    (tmp_path / "pyproject.toml").write_bytes(raw)
    with pytest.raises(UserError) as err:
        settings.load(str(tmp_path))
    assert err.value.hint and os.path.basename(err.value.location.path) == "pyproject.toml"


def test_a_pyproject_is_parsed_once_per_content_and_an_edit_is_read(tmp_path: Path, monkeypatch):
    # every in-process render and check parsed the checkout's 16 KB pyproject.toml again (a third of
    # a property test's time); the table is now parsed once per content, each caller its own copy
    parsed: list[str] = []
    real = settings._parse_toml
    monkeypatch.setattr(settings, "_parse_toml", lambda raw, shown: parsed.append(shown) or real(raw, shown))
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"# {tmp_path}\n[tool.sweepgen]\nlimits = {{variants = 10}}\n")
    first = settings.load(str(tmp_path))
    first.limits["variants"] = 99  # a caller's change is its own
    assert settings.load(str(tmp_path)).limits == {"variants": 10} and len(parsed) == 1
    pyproject.write_text(f"# {tmp_path}\n[tool.sweepgen]\nlimits = {{variants = 20}}\n")
    assert settings.load(str(tmp_path)).limits == {"variants": 20} and len(parsed) == 2
    pyproject.write_text(f"# {tmp_path}\n[tool.sweepgen]\nlimits = [\n")
    for _ in range(2):  # a refusal is said every time, never remembered as a table
        with pytest.raises(UserError, match="not valid TOML"):
            settings.load(str(tmp_path))
