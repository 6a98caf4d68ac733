"""Prompt sets: the bundled ones (``builtin:stories``, ``builtin:arithmetic``) and JSONL files.

Every row keeps all its fields, so rewards can read columns such as ``answer`` (TRL passes dataset
columns to reward functions by name). Bad rows are errors naming file and line, never skipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepgen.errors import ConfigError, Location

if TYPE_CHECKING:  # annotations only: no run-time dependency on the config model
    from sweepgen_trainer.config import DataConfig

BUILTIN_DIR = Path(__file__).parent / "data"
BUILTIN_FILES = {"builtin:stories": "stories.jsonl", "builtin:arithmetic": "arithmetic.jsonl"}


def data_path(data: DataConfig) -> Path:
    if data.source in BUILTIN_FILES:
        return BUILTIN_DIR / BUILTIN_FILES[data.source]
    path = Path(data.source).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"data file {data.source!r} does not exist (looked in {Path.cwd()})",
            key="data.source",
            hint="data.source is relative to the directory the run starts in; or use "
            + " / ".join(BUILTIN_FILES),
        )
    return path


def load_rows(data: DataConfig) -> list[dict[str, Any]]:
    """The prompt rows, each with a ``prompt`` key (renamed from ``data.prompt_field``)."""
    return read_rows(data)[1]


def _json_object(path: Path, lineno: int, raw: bytes) -> dict[str, Any] | None:
    """One JSONL line as its object (None: a blank line); anything else names the line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"not valid UTF-8 (byte {raw[err.start]:#04x})",
            location=Location(str(path), lineno, err.start + 1),
            hint="save the data file as UTF-8",
        ) from None
    if not line.strip():
        return None
    try:
        row = json.loads(line)
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"not valid JSON: {err.msg}", location=Location(str(path), lineno, err.colno)
        ) from None
    if not isinstance(row, dict):
        raise ConfigError("each JSONL line must be an object", location=Location(str(path), lineno, 1))
    return row


def read_rows(data: DataConfig) -> tuple[Path, list[dict[str, Any]], list[int]]:
    """The data file, its prompt rows (as :func:`load_rows`) and the line number of each row."""
    path = data_path(data)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    first: tuple[int, dict[str, str]] | None = None  # line and column kinds of the first row
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            row = _json_object(path, lineno, raw)
            if row is None:
                continue
            where = Location(str(path), lineno, 1)
            if data.prompt_field not in row:
                raise ConfigError(
                    f"row has no field `{data.prompt_field}` (it has: {', '.join(sorted(row))})",
                    location=where,
                    hint="set data.prompt_field to the field that holds the prompt text",
                )
            prompt = row.pop(data.prompt_field)
            if not isinstance(prompt, str) or not prompt:
                raise ConfigError(f"`{data.prompt_field}` must be a non-empty string", location=where)
            if "prompt" in row:
                raise ConfigError("row has both `prompt` and the prompt field; rename one", location=where)
            kinds = {key: _kind(value) for key, value in row.items()}
            if first is None:
                first = (lineno, kinds)
            else:
                _check_same_columns(first, kinds, where)
            rows.append({"prompt": prompt, **row})
            lines.append(lineno)
            if data.max_prompts is not None and len(rows) == data.max_prompts:
                break
    if not rows:
        raise ConfigError(f"data file {str(path)!r} has no rows", key="data.source")
    return path, rows, lines


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    kinds: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return kinds[type(value)]


def _check_same_columns(first: tuple[int, dict[str, str]], kinds: dict[str, str], where: Location) -> None:
    """Every row has the first row's fields with the same JSON types (a dataset column has one
    type; Arrow would fail late, or a missing field would silently become None)."""
    first_line, first_kinds = first
    if set(kinds) != set(first_kinds):
        missing = sorted(set(first_kinds) - set(kinds))
        extra = sorted(set(kinds) - set(first_kinds))
        parts = ([f"lacks {', '.join(missing)}"] if missing else []) + (
            [f"adds {', '.join(extra)}"] if extra else []
        )
        raise ConfigError(
            f"row's fields differ from line {first_line}'s: it {' and '.join(parts)}",
            location=where,
            hint="every row needs the same fields",
        )
    for key, kind in kinds.items():
        if "null" not in (kind, first_kinds[key]) and kind != first_kinds[key]:
            raise ConfigError(
                f"field `{key}` is a {kind} here but a {first_kinds[key]} on line {first_line}",
                location=where,
                hint="a field must have one type in every row",
            )


def identity(data: DataConfig, path: Path, rows: list[dict[str, Any]]) -> dict[str, object]:
    """What data a run trains on: the file's sha256 and the rows used (data.json, summary.json)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    # The source as configured (not the resolved path), so a run folder means the same on any checkout.
    return {"source": data.source, "sha256": digest.hexdigest(), "rows": len(rows)}
