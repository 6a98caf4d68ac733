"""Prompt sets: the bundled ones (``builtin:stories``, ``builtin:arithmetic``) and JSONL files.

Every row keeps all its fields, so rewards can read columns such as ``answer`` (TRL passes dataset
columns to reward functions by name). Bad rows are errors naming file and line, never skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

from sweepgen.errors import ConfigError, Location
from trainer.config import DataConfig

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


def load_rows(data: DataConfig) -> list[dict]:
    """The prompt rows, each with a ``prompt`` key (renamed from ``data.prompt_field``)."""
    path = data_path(data)
    rows: list[dict] = []
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = Location(str(path), lineno, 1)
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise ConfigError(f"not valid JSON: {err.msg}", location=Location(
                    str(path), lineno, err.colno)) from None
            if not isinstance(row, dict):
                raise ConfigError("each JSONL line must be an object", location=where)
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
                raise ConfigError(
                    "row has both `prompt` and the prompt field; rename one", location=where
                )
            rows.append({"prompt": prompt, **row})
            if data.max_prompts is not None and len(rows) == data.max_prompts:
                break
    if not rows:
        raise ConfigError(f"data file {str(path)!r} has no rows", key="data.source")
    return rows


def load_dataset(data: DataConfig):
    """The rows as a ``datasets.Dataset`` (what TRL's GRPOTrainer takes)."""
    from datasets import Dataset

    return Dataset.from_list(load_rows(data))
