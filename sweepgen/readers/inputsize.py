"""How much of a config file ``diff`` reads: each file within its format's limit, and the files of one
diff (both sides, every base ``--resolve-bases`` pulls in) within twice that, together.

A pull request's files are read by ``sweepgen diff`` in CI, and reading costs far more per byte in
some formats than in others (measured on a shared 2-core machine, per MiB of one file: JSON ~2 s, a
JSON file's key lines found through the YAML composer included; YAML, TOML, shell ~5 s; a Python
config ~8 s): a committed 34 MB Hydra base held ``diff --resolve-bases`` over 120 s at 2.1 GB, a
3.7 MB YAML 43 s. Each format's limit keeps a diff of two files at it near a minute there, and
leaves room for what real configs are (a 17 MB ``tokenizer.json`` is read; a YAML, TOML or Python
config of 2 MiB is far past any written by hand). Past it the file is refused, from its size before
anything is read, naming the file, its size, the limit and ``--max-bytes``, the person's own flag
(one limit for every format; nothing in the checkout raises it).

A file is charged once however often the diff reads it (a YAML pair read again as OmegaConf reads
it, a base two files name): the charge is its share of its own limit, and the shares of one diff add
up to at most 2 (two files at their limits, or a chain of bases as large together).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from sweepgen.errors import ConfigError, Location
from sweepgen.fs import regular

MIB: Final = 1 << 20
LIMITS: Final = {"json": 32 * MIB, "yaml": 2 * MIB, "toml": 2 * MIB, "python": 2 * MIB, "shell": 1 * MIB}
_SHARES: Final = 2.0  # two files at their limits, per diff
_NAMES: Final = {"json": "JSON", "yaml": "YAML", "toml": "TOML", "python": "Python", "shell": "shell"}


@dataclass
class _Budget:
    max_bytes: int | None  # --max-bytes: one limit for every format
    spent: float = 0.0  # the shares of their limits the files read so far take
    total: int = 0  # their bytes
    charged: set[tuple[int, int]] = field(default_factory=set)  # (device, inode) of each file read

    def limit(self, kind: str) -> int:
        return self.max_bytes if self.max_bytes is not None else LIMITS[kind]


_BUDGET: ContextVar[_Budget | None] = ContextVar("sweepgen_diff_input_budget", default=None)


@contextlib.contextmanager
def bounded(max_bytes: int | None = None) -> Iterator[None]:
    """The files read inside share one diff's budget; ``max_bytes`` (``--max-bytes``) is each
    file's limit whatever its format."""
    token = _BUDGET.set(_Budget(max_bytes))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def read_bytes(path: Path, kind: str) -> bytes:
    """The bytes of the regular file ``path`` read as ``kind`` (json, yaml, toml, python, shell),
    within its limit and the diff's budget; a ``ConfigError`` at the file otherwise."""
    budget = _BUDGET.get() or _Budget(None)
    limit = budget.limit(kind)
    try:
        raw = regular.read(str(path), limit=limit)
    except regular.NotRead as err:
        raise _refused(path, kind, err, limit, budget) from None
    _charge(path, kind, len(raw), budget)
    return raw


def _refused(path: Path, kind: str, err: regular.NotRead, limit: int, budget: _Budget) -> ConfigError:
    if err.why == "too large":
        return ConfigError(
            f"the {_NAMES[kind]} file is {_size(err.size)}, over diff's limit of {_size(limit)} for "
            f"{'every' if budget.max_bytes is not None else 'a ' + _NAMES[kind]} file",
            location=Location(str(path)),
            hint=_raise(err.size),
        )
    if err.why == "not regular":
        return ConfigError(
            "not a regular file (a FIFO, device or folder); never read", location=Location(str(path))
        )
    reason = err.strerror or err.why
    return ConfigError(f"cannot read file: {reason}", location=Location(str(path)))


def _raise(size: int) -> str:
    return (
        "reading costs seconds a MiB; if the file is yours and meant to be this large, raise the "
        f"limit for this command: sweepgen diff --max-bytes {-(-size // MIB)}M ..."
    )


def _charge(path: Path, kind: str, size: int, budget: _Budget) -> None:
    """Add the file's share of its limit to the diff's, once per file; refuse it past the budget."""
    try:
        info = os.stat(path)
        key = (info.st_dev, info.st_ino)
    except OSError:
        key = (-1, hash(str(path)))
    if key in budget.charged:
        return
    share = size / max(budget.limit(kind), 1)
    if budget.spent + share > _SHARES:
        raise ConfigError(
            f"the files this diff reads ({_size(size)} here, as {_NAMES[kind]}) are together more "
            f"than twice diff's limit for one file",
            location=Location(str(path)),
            hint="bases read by --resolve-bases count with the two files; "
            + _raise((budget.total + size) // 2),
        )
    budget.spent += share
    budget.total += size
    budget.charged.add(key)


def _size(size: int) -> str:
    return f"{size / MIB:.1f} MiB" if size >= MIB else f"{size:,} bytes"
