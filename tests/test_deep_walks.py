"""Folders of any depth are walked without recursion: Python 3.11's ``os.walk`` and ``Path.rglob``
recurse once a level, so a folder 1,500 deep (git holds one, a shared runs folder too) ended `check`
(a `[tool.sweepgen] specs` glob with `**`) and `report --metric` (TensorBoard event files looked for
in a run folder) with a RecursionError, exit 70."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fs_support import chain, remove_chain

from sweepgen import settings
from sweepgen.fs import safefs
from sweepgen.run.core import runfiles
from sweepgen.run.logs import metrics, tb_files

DEEP = 1100  # past the recursion limit (1,000 frames), which os.walk and rglob spend one or more a level


def _walked(top: Path) -> list[tuple[str, list[str], list[str]]]:
    return sorted((os.path.relpath(f, top), sorted(d), sorted(n)) for f, d, n in safefs.walk(str(top)))


def test_walk_lists_what_os_walk_lists_and_enters_no_link(tmp_path: Path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.txt").write_text("x")
    (tmp_path / "a" / "y.txt").write_text("y")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "outside")
    expected = sorted((os.path.relpath(f, tmp_path), sorted(d), sorted(n)) for f, d, n in os.walk(tmp_path))
    assert _walked(tmp_path) == expected
    assert not any(folder.startswith(os.path.join("a", "link")) for folder, _, _ in _walked(tmp_path))


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project whose specs folder (also a run folder) holds a chain of folders ``DEEP`` deep with a
    spec at its bottom; made once (each level costs a few ms on an overlay file system)."""
    root = tmp_path_factory.mktemp("deep")
    (root / "pyproject.toml").write_text('[tool.sweepgen]\nspecs = ["specs/**/*.yaml"]\n')
    (root / "specs").mkdir()
    (root / "specs" / "top.yaml").write_text("x: 1\n")
    (root / "specs" / "metrics.jsonl").write_text('{"step": 1, "acc": 0.5}\n')
    bottom = chain(root / "specs", DEEP)
    (bottom / "deep.yaml").write_text("x: 1\n")
    yield root
    remove_chain(bottom / "deep.yaml")


def test_walk_goes_any_depth_and_may_be_pruned(deep: Path):
    walked = list(safefs.walk(str(deep / "specs")))
    assert len(walked) == DEEP + 1 and walked[-1][2] == ["deep.yaml"]
    pruned = []
    for folder, dirs, _ in safefs.walk(str(deep / "specs")):
        pruned.append(folder)
        dirs.clear()
    assert pruned == [str(deep / "specs")]


def test_a_specs_glob_walks_a_deep_committed_folder(deep: Path):
    found = settings.load(str(deep)).spec_files()
    assert sorted(os.path.basename(f) for f in found) == ["deep.yaml", "top.yaml"]


def test_a_run_folder_of_any_depth_is_searched_for_event_files(deep: Path):
    assert metrics.read_all(deep / "specs").get("metrics.jsonl") == {"acc": ((1, 0.5),)}


def test_a_run_folder_of_too_many_entries_is_refused_not_walked_for_ever(tmp_path: Path, monkeypatch):
    run = tmp_path / "run"
    (run / "many").mkdir(parents=True)
    for i in range(30):
        (run / "many" / f"f{i}").write_text("")
    monkeypatch.setattr(tb_files, "MAX_RUN_ENTRIES", 20)
    with pytest.raises(runfiles.RunFileError, match="more than 20 files and folders"):
        metrics.read_all(run)


@pytest.mark.parametrize("swap", ["a folder found", "the folder above one found"])
def test_a_folder_swapped_for_a_link_while_the_walk_goes_is_never_listed(tmp_path: Path, swap: str):
    """A shared runs folder's writer swaps a folder the walk has found but not listed yet (or the
    folder above it) for a link to a folder outside: the walk checked for a link when it found the
    folder and listed it by name later, so it listed the folder outside and walked on below it.
    Each folder is listed only if it is still the one its parent's listing found."""
    top = tmp_path / "runs"
    for run in ("a", "b"):
        (top / run / "tb" / "x").mkdir(parents=True)
    (tmp_path / "outside" / "tb" / "x").mkdir(parents=True)
    (tmp_path / "outside" / "tb" / "x" / "secret.txt").write_text("s")
    (tmp_path / "outside" / "secret.txt").write_text("s")
    walked = []
    for folder, _dirs, files in safefs.walk(str(top)):
        walked.append((folder, files))
        if os.path.dirname(folder) == str(top) and len(walked) == 2:  # the first run folder listed
            other = top / ("b" if folder.endswith("a") else "a")
            swapped = other if swap == "a folder found" else Path(folder)  # its tb/ is found, not listed
            swapped.rename(tmp_path / f"moved-{swapped.name}")
            swapped.symlink_to(tmp_path / "outside")
    assert not any("secret.txt" in files for _, files in walked), walked
    assert len(walked) >= 2
