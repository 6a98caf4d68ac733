"""Files beside generated output that are not orphans: what tools make on their own, and what git
ignores.

Importing a generated Python config makes ``__pycache__/x.cpython-311.pyc``; macOS writes
``.DS_Store``; editors leave swap and backup files. None of them is a stale output or a hand-made
file that someone expects sweepgen to own, so ``check`` leaves them alone, as it leaves alone
whatever the repository's ``.gitignore`` files ignore (asked of git itself, which knows every rule:
nested ignore files, negations, ``info/exclude``, the global excludes file). Everything else in a
generated folder that the lock does not list is still an orphan.
"""

from __future__ import annotations

import fnmatch
import os

from sweepgen.fs import filenames, gitquery

# (a path component pattern) tools create without being asked
TOOL_PATTERNS = (
    "__pycache__",
    "*.pyc",
    "*.pyo",
    ".DS_Store",
    "Thumbs.db",
    ".*.swp",
    ".*.swo",
    ".*.swx",
    "*~",
    ".#*",
    "#*#",
    filenames.SEARCH_DIR,  # a search sweep's study journal and controller locks: state, not output
)


def _is_tool_file(rel: str) -> bool:
    """True for a path (relative, posix) with a component tools create on their own."""
    return any(fnmatch.fnmatchcase(part, pattern) for part in rel.split("/") for pattern in TOOL_PATTERNS)


def foreign_ok(folder: str, rels: list[str]) -> set[str]:
    """The paths among ``rels`` that are not orphans: tool files and git-ignored files."""
    tools = {r for r in rels if _is_tool_file(r)}
    rest = [r for r in rels if r not in tools]
    return tools | gitquery.ignored(os.path.abspath(folder), rest)
