"""A Slurm command's option table read from its installed man page (Debian's slurm-client), to hold
sweepgen's tables (sweepgen/readers/launch/sbatch.py, srun.py) to what that Slurm documents."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from sweepgen.readers.launch.slurm_options import Options

# an option's heading, the line after `.TP`: `\fB-N\fR, \fB--nodes\fR=<\fIminnodes\fR>...`,
# `\fB--exclusive\fR[={user|mcs}]`, `\fB--label\fR`
_HEADING = re.compile(r"^\\fB(?:(-[A-Za-z])(?:\\fR)?, (?:\\fB)?)?(--[a-z][a-z0-9-]*)(?:\\fR)?(\[?=)?")


def man_page(command: str) -> Path:
    return Path(f"/usr/share/man/man1/{command}.1.gz")


def options_from_man(command: str) -> Options:
    text = gzip.decompress(man_page(command).read_bytes()).decode("utf-8", "replace").replace("\\-", "-")
    lines = text.splitlines()
    headings = [after for before, after in zip(lines, lines[1:]) if before.startswith(".TP")]
    short_to_long: dict[str, str] = {}
    kinds: dict[str, set[str]] = {"=": set(), "": set(), "[=": set()}
    for heading in headings:
        found = _HEADING.match(heading)
        if found is None:
            continue
        short, long, equals = found.groups()
        if short:
            short_to_long[short] = long
        kinds[equals or ""].add(long)
    return Options(short_to_long, frozenset(kinds["="]), frozenset(kinds[""]), frozenset(kinds["[="]))
