"""formats/pysource.py: a module's source found on sys.path is read as data, never waited on.

Under `python -m sweepgen` the working folder is the first folder on sys.path, so a pull request's
`trl/scripts/grpo.py` is the source `run`'s TRL checks parse."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sweepgen.formats import pysource


def test_a_fifo_a_huge_or_a_too_deeply_nested_source_is_none(tmp_path, monkeypatch):
    """Before, a FIFO there was opened with open() and waited on for ever; a source nested past
    Python's parser (`x = ----1`) raised its MemoryError, which the CLI says as "out of memory".
    Each is None now (not read, as a file that does not parse)."""
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "deep.py").write_text("x = " + "-" * 200_000 + "1\n")
    (tmp_path / "huge.py").write_bytes(b"#" * ((16 << 20) + 1))  # past the 16 MiB a source may take
    (tmp_path / "fine.py").write_text("X = 1\n")
    monkeypatch.setattr(pysource, "_source_paths", lambda module: [str(tmp_path / f"{module}.py")])
    got: dict[str, object] = {}

    def parse_all() -> None:
        for name in ("deep", "huge", "fifo", "fine"):
            try:
                got[name] = pysource.parsed.__wrapped__(name)
            except BaseException as err:  # noqa: BLE001 - what the old module raised, asserted below
                got[name] = err

    worker = threading.Thread(target=parse_all, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), got  # the FIFO never waited on
    assert got["deep"] is None and got["huge"] is None and got["fifo"] is None, got
    assert got["fine"] is not None


def test_a_source_longer_than_its_size_said_is_not_cut_and_parsed(monkeypatch):
    """A file whose size says less than it holds (a /proc file says 0; a file that grows while read)
    was read up to the limit and the cut text parsed as the module's source (`Linux` cut to `Lin`):
    now it is refused as too large (fs/regular.py, the one reader), so nothing cut is judged."""
    path = "/proc/sys/kernel/ostype"  # st_size 0, holds "Linux\n": valid Python whole or cut
    monkeypatch.setattr(pysource, "MAX_SOURCE_BYTES", 3)
    monkeypatch.setattr(pysource, "_source_paths", lambda module: [path])
    assert os.stat(path).st_size == 0 and Path(path).read_bytes().startswith(b"Linux")
    assert pysource.parsed.__wrapped__("x") is None
