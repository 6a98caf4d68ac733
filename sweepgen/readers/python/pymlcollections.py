"""ml_collections in the Python config reader: a module's ``get_config()`` is the file's config,
and ``ConfigDict``, ``config_dict.create``, ``FieldReference`` and ``placeholder`` are data, recognised
by the import that bound them (``import ml_collections as mlc``), never by spelling alone."""

from __future__ import annotations

from typing import Any


def is_ml(name: str | None) -> bool:
    """An ml_collections (or mmengine Config) constructor, however it was imported."""
    return name is not None and (
        name.split(".")[0] in ("ml_collections", "config_dict", "mmengine")
        or name in ("ConfigDict", "FrozenConfigDict", "placeholder", "FieldReference")
    )


def file_config(config: Any, helpers: dict[str, Any]) -> dict[str, Any]:
    """What a file with a module-level ``get_config()`` means: the config it returns, plus its other
    functions as source (a big_vision ``get_hyper`` sweep, helpers), so a change in them is never lost."""
    if isinstance(config, dict) and not helpers:
        plain: dict[str, Any] = config  # itself (a CallData stays a CallData)
        return plain
    if isinstance(config, dict) and "@functions" not in config:
        return {**config, "@functions": helpers}
    return {"get_config": config, "@functions": helpers}
