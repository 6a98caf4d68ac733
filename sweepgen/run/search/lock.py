"""A search sweep's lock, rewritten one trial at a time in time that does not grow with the trials.

``lock.dumps(lock.build(...))`` encodes every entry again on each write: O(n) per trial, O(n^2) per
search. ``LockText`` keeps each entry's encoded line (``lock.entry_line``) and re-encodes only what
a trial changed, then splices the lines into the text ``lock.dumps`` gives for the rest of the lock,
so the bytes are the same as the compile pipeline's (``check`` compares them, and a test holds the
two together).
"""

from __future__ import annotations

from typing import Any

from sweepgen import paths
from sweepgen.compile.run_api import Lock, LockFile, lock, lock_digest

_FILES_EMPTY = '  "files": [\n  ]'


class LockText:
    def __init__(self, current: Lock) -> None:
        self.head = current
        self.entries: dict[str, LockFile] = {f.variant: f for f in current.files}
        self._layer_keys: dict[str, frozenset[tuple[str, str]]] = {}  # variant -> its layer-set key
        self._lines: dict[str, tuple[int, str]] = {}  # variant -> (layer index, encoded entry)
        self._candidates = {p for e in self.entries.values() for p in _touched(e)}
        self._varying = {p for p in self._candidates if self._differs(p, list(self.entries.values()))}

    def put(self, entries: list[LockFile]) -> None:
        """Add or replace entries (made by ``lock.entry_for``). A trial rendered again has the same
        values, so a path that varies keeps varying: only the new entry is compared, with one other."""
        for entry in entries:
            name = entry.variant
            self.entries[name] = entry
            self._layer_keys.pop(name, None)
            self._lines.pop(name, None)
            self._candidates |= set(_touched(entry))
            other = next((e for n, e in self.entries.items() if n != name), None)
            if other is not None:
                self._varying |= {
                    p for p in self._candidates - self._varying if self._differs(p, [entry, other])
                }

    def _differs(self, path: str, entries: list[LockFile]) -> bool:
        values = [_value(self.head.base, path, e) for e in entries]
        return any(not paths.same(values[0], v) for v in values[1:])

    def varying(self) -> list[str]:
        """As ``pipeline.varying_paths``: the paths whose value is not the same in every entry."""
        return sorted(self._varying)

    def text(self) -> str:
        """The lock's text, byte for byte what the pipeline writes: ``lock.dumps(lock.build(...))``,
        sealed with its digest (``lock_digest.seal``)."""
        layer_sets: list[dict[str, str]] = []
        index: dict[frozenset[tuple[str, str]], int] = {}
        lines = []
        for name in sorted(self.entries):
            entry = self.entries[name]
            key = self._layer_keys.get(name)
            if key is None:
                key = self._layer_keys[name] = lock.layers_key(entry.layers)
            if key not in index:
                index[key] = len(layer_sets)
                layer_sets.append(entry.layers)
            cached = self._lines.get(name)
            if cached is None or cached[0] != index[key]:
                cached = self._lines[name] = (index[key], lock.entry_line(entry, index[key]))
            lines.append("    " + cached[1])
        data = self._build()
        data["layer_sets"] = layer_sets
        shell = lock.dumps(data)
        assert _FILES_EMPTY in shell  # (lock.dumps writes an empty file list so)
        files = '  "files": [\n' + ",\n".join(lines) + ("\n" if lines else "") + "  ]"
        return lock_digest.seal(shell.replace(_FILES_EMPTY, files, 1))

    def _build(self) -> dict[str, Any]:
        """The lock without its files: ``text`` splices the cached entry lines in."""
        h = self.head
        return lock.build(
            sweep=h.sweep,
            spec=h.spec,
            spec_sha256=h.spec_sha256,
            inputs=h.inputs,
            varying=self.varying(),
            base=h.base,
            files=[],
            resources=h.resources,
            report=h.report,
        )


def _touched(entry: LockFile) -> list[str]:
    return [*entry.set, *entry.deleted]


def _value(base: dict[str, Any], path: str, entry: LockFile) -> Any:
    if path in entry.set:
        return entry.set[path]
    return paths.MISSING if path in entry.deleted else paths.get(base, path)
