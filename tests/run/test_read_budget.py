"""One budget for every run file a command reads: each file is bounded alone, but a shared runs folder
can hold many at the bound (a sparse 250 MB metrics.jsonl costs its writer nothing; 20 of them cost
`report` 36 s and 4 GB of memory). The command ends with exit 2 naming where the budget ran out,
even where a caller takes a run file's error for that run's problem and goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.errors import UserError
from sweepgen.run.core import runfiles


def _files(folder: Path, count: int, size: int) -> list[Path]:
    folder.mkdir()
    paths = [folder / f"f{i}.jsonl" for i in range(count)]
    for path in paths:
        path.write_bytes(b"x" * size)
    return paths


def test_the_files_are_bounded_together_not_each(tmp_path: Path):
    paths = _files(tmp_path / "runs", 3, 1000)
    with pytest.raises(runfiles.ReadBudgetError) as info, runfiles.read_budget(2500):
        assert [len(runfiles.read_bytes(p, limit=runfiles.MAX_LOG_BYTES) or b"") for p in paths[:2]] == [
            1000
        ] * 2
        runfiles.read_bytes(paths[2], limit=runfiles.MAX_LOG_BYTES)
    err = info.value
    assert err.location is not None and err.location.path == str(paths[2])
    assert "budget of 2,500 bytes" in err.message and "--max-read-bytes" in (err.hint or "")
    assert not isinstance(err, UserError)  # never taken for one run's problem by `except UserError`
    # outside a command's budget (a search controller polling for hours) each file alone is bounded
    for _ in range(3):
        assert [len(runfiles.read_bytes(p, limit=runfiles.MAX_LOG_BYTES) or b"") for p in paths] == [1000] * 3


def test_a_swallowed_refusal_still_ends_the_command(tmp_path: Path):
    """`status` lists a status file it cannot read as that run's problem: past the budget, the rest
    of the command reads nothing more, and the block ends with the error (exit 2), not exit 1."""
    paths = _files(tmp_path / "runs", 3, 1000)
    refused = []
    with pytest.raises(runfiles.ReadBudgetError), runfiles.read_budget(1500):
        for path in paths:
            try:
                runfiles.read_bytes(path, limit=runfiles.MAX_LOG_BYTES)
            except Exception as err:  # noqa: BLE001 - as a caller that lists every problem with its run
                refused.append(err)
    assert len(refused) == 2 and all(isinstance(e, runfiles.ReadBudgetError) for e in refused)


@pytest.mark.parametrize(
    ("text", "size"), [("2G", 2 << 30), ("512m", 512 << 20), ("1000", 1000), (" 3K ", 3072)]
)
def test_max_read_bytes_reads_sizes(text: str, size: int):
    from sweepgen.cli._params import byte_size

    assert byte_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "0", "-1", "1.5G", "2x", "1" * 5000, "\u0663K"])
def test_max_read_bytes_refuses_what_is_no_size(text: str):
    import click

    from sweepgen.cli._params import byte_size

    with pytest.raises(click.BadParameter, match="is not a size"):
        byte_size(text)
