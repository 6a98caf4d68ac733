"""``#SBATCH`` directives where sbatch reads them, for the read-back of rendered scripts.

sbatch reads a script's directives line by line from its top: a line starting with ``#SBATCH`` is
read, a blank line or one whose first non-blank character is ``#`` is skipped, and the first other
line (the first command) ends the reading, so a ``#SBATCH`` line below it is a comment to sbatch
and its value is silently not applied (Slurm's ``_opt_batch_script``, src/sbatch/opt.c). sbatch
also refuses a script whose first line is not ``#!`` and an interpreter, and a directive with an
unmatched quote. A template can make each of these (a value moved below ``set -e``, a Jinja comment
that leaves the first line blank, a value holding a quote) and its files render; the job fails or
runs with other resources only once submitted.
"""

from __future__ import annotations

import re
from collections.abc import Collection

Problem = tuple[int, int, str]  # (line, column, what), 1-based
DIRECTIVE = "#SBATCH"


def has_directives(text: str) -> bool:
    return text.startswith(DIRECTIVE) or f"\n{DIRECTIVE}" in text


def problem(text: str, comments: Collection[int] | None) -> Problem | None:
    """What sbatch would refuse or ignore in ``text``. ``comments``: the 0-based lines where the
    script's grammar sees a comment at column 0 (a ``#SBATCH`` line inside a here-document is text
    for another program, not a directive); None to take every such line."""
    lines = text.split("\n")
    read = comments if comments is not None else range(len(lines))
    directives = [i for i, line in enumerate(lines) if _directive(line) and i in read]
    if not directives:
        return None
    if not lines[0].startswith("#!"):
        return 1, 1, "sbatch refuses this script: its first line must be `#!` and an interpreter"
    first = _first_command(lines)
    return next(filter(None, (_misread(lines, i, first) for i in directives)), None)


def _misread(lines: list[str], i: int, first: int | None) -> Problem | None:
    """What sbatch does wrong with the directive on line ``i`` (0-based), ``first`` the first command."""
    if first is not None and i > first:
        return (
            i + 1,
            1,
            f"sbatch ignores this {DIRECTIVE} line: it stops reading directives at the first command "
            f"(line {first + 1}); move the line above it",
        )
    unmatched = _unmatched_quote(lines[i][len(DIRECTIVE) :])
    if unmatched is None:
        return None
    return i + 1, len(DIRECTIVE) + unmatched + 1, "sbatch refuses this directive: a quote is not closed"


def _directive(line: str) -> bool:
    return line.startswith(DIRECTIVE)


def _first_command(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if _directive(line) or line.startswith("#SLURM"):
            continue
        stripped = line.lstrip(" \t\n\v\f\r")  # C's isspace
        if stripped and not stripped.startswith("#"):
            return i
    return None


# sbatch's argument reader: a backslash escapes the next character (in quotes too), a quoted run
# may hold blanks, an unquoted `#` ends the directive; what is left is a quote never closed
_ARGUMENT_TEXT = re.compile(r"""\\.|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|(#)|(["'])""", re.S)


def _unmatched_quote(rest: str) -> int | None:
    """The column (0-based, in ``rest``) of a quote sbatch's argument reader never sees closed."""
    for match in _ARGUMENT_TEXT.finditer(rest):
        if match.group(1):
            return None
        if match.group(2):
            return match.start()
    return None
