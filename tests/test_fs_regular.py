"""fs/regular.py: the one bounded, non-blocking read of a regular file by path (specs, templates,
includes, schema files, lock inputs, the lock, pyproject.toml, installed modules' sources)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from sweepgen.fs import regular


def _why(path: Path, **kw: object) -> str:
    try:
        regular.read(str(path), limit=kw.pop("limit", 100), **kw)  # type: ignore[arg-type]
    except regular.NotRead as err:
        return err.why
    return "read"


def test_each_refusal_says_why_and_nothing_waits(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "fine").write_bytes(b"x" * 100)
    os.symlink("fine", tmp_path / "link")
    got: dict[str, str] = {}

    def look() -> None:
        for name in ("fifo", "folder", "big", "fine", "link", "missing"):
            got[name] = _why(tmp_path / name)
        got["link, not followed"] = _why(tmp_path / "link", follow=False)
        got["device"] = _why(Path("/dev/zero"))
        got["grown (/proc says 0 bytes)"] = _why(Path("/proc/sys/kernel/ostype"), limit=3)

    worker = threading.Thread(target=look, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), got  # the FIFO never waited on
    assert got == {
        "fifo": "not regular",
        "folder": "not regular",
        "big": "too large",
        "fine": "read",
        "link": "read",
        "missing": "missing",
        "link, not followed": "link",
        "device": "not regular",
        "grown (/proc says 0 bytes)": "too large",
    }


def test_sha256_reads_a_regular_file_only(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc" * 1000)
    assert regular.sha256(str(tmp_path / "f")) == hashlib.sha256(b"abc" * 1000).hexdigest()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(regular.NotRead) as err:
        regular.sha256(str(tmp_path / "fifo"))
    assert err.value.why == "not regular"
