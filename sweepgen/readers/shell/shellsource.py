"""What ``source FILE`` (``. FILE``) reads, as data: the file is not read as shell (what it binds stays
not known), but its contents are part of what the script runs, so two scripts that source files
with other contents differ. FILE is looked for beside the script (bash looks in the working
directory and on PATH, which a diff cannot know): found there, inside the project of the script
(``sweepgen.readers.basepath``: never a file outside it, links resolved), it shows as the digest of
its bytes and of every file it sources in turn (``source`` chains: a file two deep is part of what
runs too); otherwise as why it was not read.

A path the script builds from what is not known (``"$(dirname "$0")/env.sh"``, ``$DIR/env.sh``) is
taken, where its last part is literal, as that part beside the script (beside the sourcing file,
for a file that sources another: the ``$(dirname "${BASH_SOURCE[0]}")`` idiom), and says so: the
digest can only make two scripts differ, never equal ones whose files differ."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from sweepgen.fs import confine
from sweepgen.readers.basepath import root_of

_CHUNK = 1 << 20
_MAX_FILES = 64  # files one `source` follows through its chain: real ones read a handful
# a `source`/`.` at the start of a line of a sourced file, and the rest of its line
_NESTED = re.compile(rb"^[ \t]*(?:source|\.)[ \t]+([^\n]+)", re.M)
# a comment ending the line (a `#` after a blank, no quote after it)
_COMMENT = re.compile(r"\s+#[^\"'`]*$")
# the literal tail of a path built from expansions: what follows the last `$`, `)` or `}`
_TAIL = re.compile(r"[)}]?(/[^$`\"'(){}*?\[\]\s]+)[\"']?$")


def sourced_file(script: str, word: str, known: bool = True) -> str:
    """``sha256:…`` of the file ``source WORD`` names beside ``script`` (and of the files it
    sources), or why it was not read. ``known``: WORD was expanded; else it is the word's source."""
    if not os.path.isfile(script):
        return "not read (no script file to find it beside)"
    here = os.path.dirname(os.path.realpath(script))
    if known:
        return _digest(os.path.join(here, word), here, root_of(script))
    tail = literal_tail(word)
    if tail is None:
        return "not read (its path is not known)"
    digest = _digest(os.path.join(here, tail), here, root_of(script))
    return f"{digest} (if it names {tail} beside the script)"


def literal_tail(source: str) -> str | None:
    """``env.sh`` of ``"$(dirname "$0")/env.sh"``, ``../c/env.sh`` of ``$DIR/../c/env.sh``: the
    literal path after the last expansion, relative; None where there is none."""
    found = _TAIL.search(source)
    return found.group(1).lstrip("/") if found else None


def _digest(path: str, here: str, root: str) -> str:
    """The digest of ``path`` and, in order, of each file it sources that is found (a literal path
    beside the script, where bash's working directory is taken to be; a built one beside the file)."""
    digest = hashlib.sha256()
    seen: set[str] = set()
    problem = _fold(digest, path, here, root, seen)
    if problem is not None:
        return problem
    return f"sha256:{digest.hexdigest()[:16]}"


def _fold(digest: Any, path: str, here: str, root: str, seen: set[str]) -> str | None:
    """Fold ``path``'s bytes and its chain into ``digest``; why the first file was not read, if so
    (a file further down that cannot be read is folded in as its reason, never skipped)."""
    real = os.path.realpath(path)
    if not confine.within(real, root):
        return "not read (outside the project)"
    if not os.path.isfile(real):
        return "not read (not found beside the script)"
    head = b""  # the first part of the file, searched for the files it sources
    try:
        with open(real, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
                head = head or chunk
    except OSError as err:
        return f"not read ({err.strerror})"
    digest.update(b"\0")  # where this file ends and the next of the chain begins
    seen.add(real)
    _fold_sourced(digest, head, real, here, root, seen)
    return None


def _fold_sourced(digest: Any, head: bytes, real: str, here: str, root: str, seen: set[str]) -> None:
    """Fold in each file the head of ``real`` sources, each once (its line alone where it leads
    nowhere readable, or past the bound of files)."""
    for nested in _NESTED.finditer(head):
        word = nested.group(1).decode("utf-8", "surrogateescape")
        target = _nested_target(word, here, os.path.dirname(real))
        if target is None or os.path.realpath(target) in seen or len(seen) >= _MAX_FILES:
            digest.update(f"\0{word}\0".encode("utf-8", "surrogateescape"))
            continue
        why = _fold(digest, target, here, root, seen)
        digest.update(f"\0{word}\0{why or ''}".encode("utf-8", "surrogateescape"))


def _nested_target(word: str, here: str, beside: str) -> str | None:
    """Where a sourced file's own ``source WORD ...`` line leads: a plain word from the script's
    folder, a path built from expansions (its line ending there) by its literal tail beside the
    sourcing file; None where neither (the line is folded in as text)."""
    word = _COMMENT.sub("", word)
    first = word.split()[0]
    if not any(mark in first for mark in "$`\"'"):
        return os.path.join(here, first)
    tail = literal_tail(word.rstrip().rstrip(";").rstrip())
    return None if tail is None else os.path.join(beside, tail)
