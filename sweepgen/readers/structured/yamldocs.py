"""A YAML stream of several documents (``---``), as ``yaml.safe_load_all`` and ``kubectl apply -f``
read it: the file is its documents, under ``@documents``.

Where every document is a Kubernetes object (a mapping with ``kind`` and ``metadata.name``, each
pair once), the documents are keyed by ``KIND/NAME`` (``KIND/NAMESPACE/NAME`` with a namespace),
as kubectl identifies them: one inserted, removed or edited is that change wherever it sits, and
another order is ``@order`` (kubectl applies them in file order: a CRD before its objects). Empty
documents (a trailing ``---``) are left out there, as kubectl skips them. Any other stream is a list,
one item per document: documents of two files of different lengths are aligned by content
(``sweepgen.readers.align``), so an inserted document is one change.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sweepgen.readers.model import Path, ReadResult

DOCUMENTS = "@documents"


def several(built: list[Any], result: ReadResult) -> None:
    """``result`` holding the documents ``built`` (each read at ``(DOCUMENTS, index)``)."""
    result.several_documents = True
    keys = _object_keys(built)
    if keys is None:
        result.data = {DOCUMENTS: built}
        return
    kept = {index: key for index, key in enumerate(keys) if key is not None}
    result.data = {DOCUMENTS: {key: built[index] for index, key in kept.items()}}
    result.lines = _renamed(result.lines, kept)
    result.ordered = ((DOCUMENTS,),)


def one(result: ReadResult) -> ReadResult:
    """A file of one document (of any format) as a stream of one, compared so against a YAML file
    of several: one document inserted before or after it is one change, not every key of the file,
    and its own key ``@documents`` never reads as the stream's."""
    lines = {(DOCUMENTS, 0, *path): line for path, line in result.lines.items()}
    wrapped = dataclasses.replace(result, lines=lines, ordered=())
    several([result.data], wrapped)
    return wrapped


def _object_keys(built: list[Any]) -> list[str | None] | None:
    """Each document's ``KIND[/NAMESPACE]/NAME`` (None for an empty one), where every other one is
    a Kubernetes object and no two share a key; else None (compared by position)."""
    keys: list[str | None] = []
    for document in built:
        key = None if document is None else _object_key(document)
        if key is None and document is not None:
            return None
        keys.append(key)
    named = [key for key in keys if key is not None]
    if not named or len(set(named)) != len(named):
        return None
    return keys


def _object_key(document: Any) -> str | None:
    if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
        return None
    metadata = document.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        return None
    namespace = metadata.get("namespace")
    place = [namespace] if isinstance(namespace, str) else []
    return "/".join([document["kind"], *place, metadata["name"]])


def _renamed(lines: dict[Path, int], keys: dict[int, str]) -> dict[Path, int]:
    """The line map with each document's index replaced by its key (left-out documents dropped)."""
    moved: dict[Path, int] = {}
    for path, line in lines.items():
        if len(path) < 2 or path[0] != DOCUMENTS:
            moved[path] = line
        elif path[1] in keys:
            moved[(DOCUMENTS, keys[path[1]]) + path[2:]] = line
    return moved
