"""Load any config ``diff`` can compare, chosen by file suffix, never by guessing from content.

Supported: ``.yaml``/``.yml`` (YAML 1.2 rules, duplicate keys are errors), ``.json``, ``.toml``,
``.py`` (read through the AST, never imported), ``.sh``/``.bash``/``.sbatch`` (flags of the
script's command lines). ``SPEC.yaml:VARIANT`` is resolved by the CLI through the compile API.
Every read error is a ``ConfigError`` naming the file and, where the parser knows it, line and
column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location

SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".bash", ".sbatch")


def load_config(ref: str, *, resolve_bases: bool = False) -> Any:
    """The data in the config named by ``ref``: a file path, or ``spec.yaml:variant``.

    ``resolve_bases`` merges mmengine-style ``_base_`` files in and substitutes names bound
    earlier in a Python file (see ``sweepgen.readers.pyinherit``); without it, files are read as written.
    """
    path = Path(ref)
    if resolve_bases and path.is_file() and path.suffix.lower() in _LOADERS:
        from sweepgen.readers.pyinherit import load_with_bases

        return load_with_bases(path)
    if not path.is_file():
        if path.exists():
            raise ConfigError("not a regular file", location=Location(ref))
        raise ConfigError(
            "no such file",
            location=Location(ref),
            hint="give a config file path, or SPEC.yaml:VARIANT for a variant of a sweep spec",
        )
    loader = _LOADERS.get(path.suffix.lower())
    if loader is None:
        raise ConfigError(
            f"cannot tell the format of a {path.suffix or 'suffix-less'} file",
            location=Location(ref),
            hint=f"supported suffixes: {', '.join(SUFFIXES)}",
        )
    return loader(path)


def load_yaml(path: Path) -> Any:
    from sweepgen import yamlio

    # the spec's own reader (YAML 1.2 scalars, duplicate keys are errors); configs may have
    # non-string keys such as label ids, which a spec may not
    return yamlio.load(str(path), string_keys=False).data


def load_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates(path))
    except _DuplicateKey as dup:
        raise ConfigError(
            f"duplicate key {dup.key!r} in JSON object",
            location=_duplicate_location(text, str(path)),
            hint="remove one of the two entries; JSON readers silently keep the last",
        ) from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"invalid JSON: {err.msg}", location=Location(str(path), err.lineno, err.colno)
        ) from err


def load_toml(path: Path) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(_read_text(path))
    except tomllib.TOMLDecodeError as err:
        # tomllib puts the place in the message: "... (at line 3, column 7)"
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        line, col = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(err))
        raise ConfigError(f"invalid TOML: {message}", location=Location(str(path), line, col)) from err


def load_python(path: Path) -> Any:
    from sweepgen.readers.pyast import load_python_config

    return load_python_config(path)


def load_shell(path: Path) -> Any:
    from sweepgen.readers.shellconfig import load_shell_config

    return load_shell_config(path)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read file: {err}", location=Location(str(path))) from err


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicates(path: Path) -> Callable[[list[tuple[str, Any]]], dict]:
    def build(pairs: list[tuple[str, Any]]) -> dict:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise _DuplicateKey(key)
            result[key] = value
        return result

    return build


def _duplicate_location(text: str, path: str) -> Location:
    """json.loads knows no positions by the time a duplicate shows; the YAML reader (JSON is
    YAML 1.2) finds the second key's line and column. Only the place comes from it."""
    from sweepgen import yamlio
    from sweepgen.errors import UserError

    try:
        yamlio.loads(text, path, string_keys=False)
    except UserError as err:
        if "duplicate key" in err.message and err.location is not None:
            return err.location
    return Location(path)


_LOADERS: dict[str, Callable[[Path], Any]] = {
    ".yaml": load_yaml,
    ".yml": load_yaml,
    ".json": load_json,
    ".toml": load_toml,
    ".py": load_python,
    ".sh": load_shell,
    ".bash": load_shell,
    ".sbatch": load_shell,
}
