"""#SBATCH directives are keyed by each option's long name: every short/long pair of `man sbatch`."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from sweepgen.readers.sbatch import NO_VALUE, SHORT_TO_LONG
from sweepgen.readers.shellconfig import read_shell

MAN = Path("/usr/share/man/man1/sbatch.1.gz")


def _sbatch(*lines: str) -> dict:
    return read_shell("#!/bin/bash\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "srun true\n").data[
        "sbatch"
    ]


@pytest.mark.parametrize("short", sorted(SHORT_TO_LONG))
def test_every_short_option_reads_as_its_long_name(short):
    long = SHORT_TO_LONG[short]
    if short in NO_VALUE:
        assert _sbatch(short) == _sbatch(long) == {long: True}
        return
    expected = {long: "v1"}
    assert _sbatch(f"{short} v1") == _sbatch(f"{short}v1") == _sbatch(f"{long}=v1") == _sbatch(f"{long} v1")
    assert _sbatch(f"{short} v1") == expected
    assert _sbatch(f"{short} v1") != _sbatch(f"{long}=v2")  # a respelled option still compares its value


def test_several_options_on_one_line_and_typed_values():
    assert _sbatch("-N 2 -t 3-00:00:00 -J grpo -o logs/%x.out") == {
        "--nodes": 2,
        "--time": "3-00:00:00",
        "--job-name": "grpo",
        "--output": "logs/%x.out",
    }


@pytest.mark.skipif(not MAN.exists(), reason="Debian's slurm-client man page is not installed")
def test_the_table_is_the_man_pages_list_of_pairs():
    text = gzip.decompress(MAN.read_bytes()).decode("utf-8", "replace").replace("\\-", "-")
    pairs = dict(re.findall(r"^\\fB(-[A-Za-z])(?:\\fR)?, (?:\\fB)?(--[a-z-]+)", text, re.M))
    assert pairs == SHORT_TO_LONG
