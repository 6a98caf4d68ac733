"""JSON and TOML files as data; YAML through ``yamlfile``. Duplicate keys are errors."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import jsonkeys
from sweepgen.formats.tomllines import error_place, toml_lines
from sweepgen.formats.yamlio import decode_utf8
from sweepgen.readers import inputsize
from sweepgen.readers.model import (
    BIG_DIGITS,
    MAX_VALUES,
    BigInt,
    NotEvaluated,
    ReadResult,
    big_int,
    tree_size,
)
from sweepgen.readers.structured.yamlfile import json_lines, read_yaml


def _read_text(path: Path, kind: str) -> str:
    """The file's UTF-8 text, within diff's limit for ``kind`` (``inputsize``); a byte that is not
    UTF-8 is an error at its line and column."""
    return decode_utf8(inputsize.read_bytes(path, kind), str(path))


def read_yaml_file(
    path: Path, version: str = "1.1", *, raw: bool = False, header: bool = False
) -> ReadResult:
    """``header``: a Hydra ``# @package`` header shows as the key ``@package`` (a file compared as
    written: composed, it places the file instead)."""
    text = _read_text(path, "yaml")
    result = read_yaml(text, str(path), version, raw=raw, streams=not raw)
    package = _header(text) if header else None
    if package is not None and isinstance(result.data, dict):
        if "@package" in result.data:
            raise ConfigError(
                "a key `@package` beside a `# @package` header",
                location=Location(str(path), result.lines.get(("@package",), 0)),
                hint="rename the key: the header shows as `@package` in a diff",
            )
        result.data["@package"], result.lines[("@package",)] = package
    return result


_HEADER = re.compile(r"#\s*@(\S*) +(\S+)$")


def header_package(text: str) -> str | None:
    found = _header(text)
    return None if found is None else found[0]


def _header(text: str) -> tuple[str, int] | None:
    """The ``# @package`` of a config's header and its line, as Hydra reads it: the ``# @KEY
    VALUE`` lines before any other line (blank lines skipped), the last one winning; a plain
    comment ends the header, so a ``# @package`` after it, or after the first key, is a comment."""
    package = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        found = _HEADER.match(stripped)
        if found is None:
            break
        if found.group(1) == "package":
            package = (found.group(2), number)
    return package


def read_json_file(path: Path) -> ReadResult:
    text = _read_text(path, "json")
    try:
        data = json.loads(text, object_pairs_hook=jsonkeys.no_duplicate_keys, parse_int=_json_int)
    except jsonkeys.DuplicateKey as dup:
        raise ConfigError(
            f"duplicate key {dup.key!r} in JSON object",
            location=_duplicate_location(text, str(path)),
            hint="remove one of the two entries; JSON readers silently keep the last",
        ) from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"invalid JSON: {err.msg}",
            location=Location(str(path), err.lineno, err.colno),
            hint=_json_hint(text, err.pos),
        ) from err
    except RecursionError:
        raise ConfigError("JSON nested too deeply to read", location=Location(str(path))) from None
    result = ReadResult(str(path), data)
    if tree_size(data) > MAX_VALUES:  # refused by read_config: its lines (a node each) never looked for
        return result
    with contextlib.suppress(ConfigError, RecursionError):  # JSON is YAML 1.2: it knows each key's line
        lines = json_lines(text, str(path))
        result.lines = lines if lines is not None else read_yaml(text, str(path), "1.2").lines
    return result


def _json_hint(text: str, pos: int) -> str:
    """How to fix the JSON at ``pos``: comments and trailing commas (jsonc, json5) are the usual
    cause, and the programs that read these files (DeepSpeed, transformers) refuse them too."""
    if text.startswith(("//", "/*", "#"), pos):
        return "JSON has no comments (json.load, as DeepSpeed and transformers use it, refuses them)"
    if text.startswith(("}", "]"), pos) and text[:pos].rstrip().endswith(","):
        return "JSON allows no comma before a closing } or ]: remove the trailing comma"
    return "fix the JSON syntax there (quotes are double, keys are quoted, no comments)"


def read_toml_file(path: Path) -> ReadResult:
    # function-local: a TOML parser is only needed for .toml files
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415 - a TOML parser only for .toml files
    else:  # Python 3.10
        import tomli as tomllib  # noqa: PLC0415 - the same, on Python 3.10
    text = _read_text(path, "toml")
    try:
        return ReadResult(str(path), _toml_loads(tomllib, text, str(path)), lines=toml_lines(text))
    except tomllib.TOMLDecodeError as err:
        message, line, col = error_place(str(err), text)
        raise ConfigError(f"invalid TOML: {message}", location=Location(str(path), line, col)) from err
    except RecursionError:
        raise ConfigError("TOML nested too deeply to read", location=Location(str(path))) from None


def _json_int(text: str) -> int | BigInt:
    """A JSON integer; one too long for ``int()`` (4,300 digits) as its exact digits."""
    return big_int(text) or int(text)


def _duplicate_location(text: str, path: str) -> Location:
    """json.loads knows no positions by the time a duplicate shows; the YAML reader does."""
    try:
        read_yaml(text, path, "1.2")
    except UserError as err:
        if "duplicate key" in err.message and err.location is not None:
            return err.location
    return Location(path)


STRUCTURED: dict[str, Callable[[Path], ReadResult]] = {
    ".json": read_json_file,
    ".toml": read_toml_file,
}


_TOML_BIG = re.compile(r"(?<![\w.\"'])([-+]?[0-9][0-9_]{" + str(BIG_DIGITS) + r",})(?![\w.])")


def _toml_loads(tomllib: Any, text: str, path: str) -> Any:
    """tomllib's reading; integers too long for ``int()`` come back as their exact digits. They are
    swapped for numbered placeholder strings before parsing and restored after."""
    found: list[str] = []

    def hide(match: re.Match[str]) -> str:
        found.append(match.group(1))
        return f'"\\u0000bigint{len(found) - 1}"'  # a TOML escape: parsed to a NUL-led string

    hidden = _TOML_BIG.sub(hide, text) if len(text) > BIG_DIGITS else text
    data = tomllib.loads(hidden)
    return _restore(data, found, path) if found else data


def _restore(value: Any, found: list[str], path: str) -> Any:
    if isinstance(value, dict):
        return {k: _restore(v, found, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, found, path) for v in value]
    return _restore_text(value, found, path) if isinstance(value, str) else value


def _restore_text(value: str, found: list[str], path: str) -> Any:
    """A placeholder string back to its number; a placeholder inside a longer string refused."""
    if re.fullmatch("\x00bigint[0-9]+", value):
        text = found[int(value[len("\x00bigint") :])]
        return big_int(text) or NotEvaluated(text)
    if "\x00bigint" in value or "\\u0000bigint" in value:
        # a long run of digits inside a string was taken for a number: refuse rather than guess
        raise ConfigError(
            f"a string holds a run of more than {BIG_DIGITS:,} digits",
            location=Location(path),
            hint="sweepgen reads such TOML numbers exactly, but not digit runs inside strings",
        )
    return value
