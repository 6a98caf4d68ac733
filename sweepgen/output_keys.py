"""The config keys trainers name as where a run writes, and where a config sets them.

A run's own folder is the spec's ``run_dir`` (or a top-level ``output_dir``), one per run. A trainer
may write elsewhere too, named by its config: verl's checkpoints go to ``trainer.default_local_dir``,
torchtune's to ``checkpointer.output_dir``, OpenRLHF's to ``save_path``, llm-foundry's to
``save_folder``, NeMo's to ``exp_manager.exp_dir``, the HF Trainer's TensorBoard logs to
``logging_dir``. Two runs of one sweep holding one value there overwrite each other's checkpoints,
and a resume starts one run from the other's. A key some trainers *read* from is left out
(``checkpoint_dir``: torchtune's input checkpoint; ``ckpt_path``: Lightning's resume point), so a
shared input is never taken for a shared output.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

OUTPUT_KEYS = frozenset(
    {"output_dir", "default_local_dir", "save_dir", "save_folder", "save_path", "exp_dir", "logging_dir"}
)
MAX_DEPTH = 32  # a config nested deeper is not walked further (a generated config never is)


def folder_key(path: str) -> str:
    """One key for every spelling of one run folder: ``runs/a/``, ``runs/./a`` and ``runs/A`` are
    ``runs/a`` (folders that differ only in case are one folder on macOS and Windows)."""
    return posixpath.normpath(path).lower()


def locations(config: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    """(key path, value) for every output key ``config`` sets to a non-empty string, at any depth
    of nested mappings (lists are data, not places a trainer reads its output folder from)."""
    yield from _walk(config, ())


def _walk(node: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    if not isinstance(node, Mapping) or len(prefix) > MAX_DEPTH:
        return
    for key, value in node.items():
        path = (*prefix, str(key))
        if key in OUTPUT_KEYS and isinstance(value, str) and value.strip():
            yield path, value
        else:
            yield from _walk(value, path)
