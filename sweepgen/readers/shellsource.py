"""What ``source FILE`` (``. FILE``) reads, as data: the file is not read as shell (what it binds stays
not known), but its contents are part of what the script runs, so two scripts that source files
with other contents differ. FILE is looked for beside the script (bash looks in the working
directory and on PATH, which a diff cannot know): found there, inside the project of the script
(``sweepgen.readers.basepath``: never a file outside it, links resolved), it shows as the digest of
its bytes; otherwise as why it was not read."""

from __future__ import annotations

import hashlib
import os

from sweepgen import confine
from sweepgen.readers.basepath import root_of

_CHUNK = 1 << 20


def sourced_file(script: str, word: str) -> str:
    """``sha256:…`` of the file ``source WORD`` names beside ``script``, or why it was not read."""
    if not os.path.isfile(script):
        return "not read (no script file to find it beside)"
    real = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(script)), word))
    if not confine.within(real, root_of(script)):
        return "not read (outside the project)"
    if not os.path.isfile(real):
        return "not read (not found beside the script)"
    digest = hashlib.sha256()
    try:
        with open(real, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
    except OSError as err:
        return f"not read ({err.strerror})"
    return f"sha256:{digest.hexdigest()[:16]}"
