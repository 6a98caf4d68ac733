"""The lock's own digest, and when ``check`` may trust a lock without rendering.

``sweep.lock.json`` carries ``"digest"``: the sha256 of the lock's text without that line, so over
every input hash, every file's sha256, the resolved base and each variant's values. The fast path
(``check_fast``) trusts a lock only when its digest holds: a hand edit of a file plus its sha256 in
the lock (the careless way to make ``check`` pass) no longer holds, and the spec is rendered again.

What this does *not* guarantee: the digest is no secret, so whoever edits a lock can recompute it.
Only rendering again proves that a file is what the spec produces. So under ``CI=true`` (set by
GitHub Actions, GitLab CI, CircleCI, Travis and others) the fast path is never taken: ``check``
renders every spec and compares bytes, and a forged lock cannot talk it past. Locally the fast path
stays (a pre-commit hook must be quick) and ``check --full`` does the same as CI.
"""

from __future__ import annotations

import hashlib
import os
import re

KEY = "digest"
_LINE = re.compile(rb'^  "digest": "([0-9a-f]{64})",$', re.M)
_OFF = {"", "0", "false", "no", "off"}


def seal(text: str) -> str:
    """``lock.dumps`` output with the digest line added at its sorted place among the top-level keys."""
    return sealed(text.encode("utf-8")).decode("utf-8")


_TOP_KEY = re.compile(rb'^  "([^"]*)"|^}$', re.M)  # a top-level key's line, or the closing brace


def sealed(raw: bytes) -> bytes:
    """``seal`` on the UTF-8 bytes of ``lock.dumps`` output, without splitting a large lock into
    lines (a 100,000-file lock is 24 MB): the digest line goes before the first top-level key that
    sorts after it, or before the closing brace."""
    digest = hashlib.sha256(raw).hexdigest()
    at = next(
        m.start()
        for m in _TOP_KEY.finditer(raw)
        if m.start() > 0 and (m.group(1) is None or m.group(1).decode("utf-8") > KEY)
    )
    view = memoryview(raw)
    return b"".join((view[:at], f'  "{KEY}": "{digest}",\n'.encode("ascii"), view[at:]))


def holds(raw: bytes) -> bool:
    """Whether ``raw`` (a lock file's bytes) carries exactly one digest line and it is right."""
    found = list(_LINE.finditer(raw))
    if len(found) != 1:
        return False
    match = found[0]
    rest = raw[: match.start()] + raw[match.end() + 1 :]  # the line and its newline
    return hashlib.sha256(rest).hexdigest() == match.group(1).decode("ascii")


def edited(raw: bytes) -> bool:
    """Whether ``raw`` carries a digest line that does not hold (a lock from before digests has none)."""
    return _LINE.search(raw) is not None and not holds(raw)


def in_ci() -> bool:
    """``CI`` set to anything but an explicit no: every ``check`` renders in full."""
    return os.environ.get("CI", "").strip().lower() not in _OFF
