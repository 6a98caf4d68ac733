"""The one error root. Core modules raise these; only the CLI turns them into output and exit codes.

Every user-facing error carries where it happened (file, line, column, key path) and a hint that says
how to fix it, so the CLI can print ``path:line:col: error: message`` without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sweepgen.escape import line


@dataclass(frozen=True)
class Location:
    """A place in a user's file. ``line`` and ``col`` are 1-based; 0 means unknown."""

    path: str
    line: int = 0
    col: int = 0

    @classmethod
    def at_offset(cls, path: str, data: str | bytes, offset: int) -> Location:
        """The place of the character (or byte) at ``offset`` in ``data``, the text of ``path``."""
        newline: Any = b"\n" if isinstance(data, bytes) else "\n"
        return cls(path, data.count(newline, 0, offset) + 1, offset - data.rfind(newline, 0, offset))

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.col or 1}"
        return self.path


class SweepgenError(Exception):
    """Root of every error sweepgen raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 2
    # the keys of the user's config this refusal was read from (None: not said); a search's start
    # checks ask it whether a refusal could change with a value the search samples
    reads: frozenset[str] | None = None

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.key = key
        self.hint = hint

    def format(self) -> str:
        """``path:line:col: error: message`` plus the key path and a hint, one per line.

        Every part may hold user data (file names, keys, values), so control characters and line
        breaks in them are escaped: the output has exactly one line per part, whatever the input.
        """
        where = f"{line(str(self.location))}: " if self.location else ""
        key = f" (at `{line(self.key)}`)" if self.key else ""
        text = f"{where}error: {line(self.message)}{key}"
        if self.hint:
            text += f"\n  hint: {line(self.hint)}"
        return text


class UserError(SweepgenError):
    """Bad input: a spec, template, config or argument the user must fix. Exit code 2."""


class SpecError(UserError):
    """A spec file is malformed, has unknown keys, bad types or bad overrides."""


class TemplateError(UserError):
    """A template fails to parse or render (undefined variable, sandbox violation)."""


class ValidationError(UserError):
    """A resolved variant breaks the allowed-diff gate, a constraint or its schema."""


class ConfigError(UserError):
    """A config file given to `diff`, `run` or the trainer cannot be read or is invalid."""


# PyYAML's words for a second document where one is read (yaml.compose / safe_load)
SECOND_DOCUMENT = "but found another document"
SECOND_DOCUMENT_SAID = (
    "holds a second YAML document (`---` here): one document is read, so what follows would be "
    "ignored or mistaken"
)
