"""Is a checkpoint folder complete? Cheap structural checks, without torch, before resuming from it.

A checkpoint cut short (the disk filled up, the node died during the save, a copy was interrupted)
must not be resumed from: loading it fails deep inside transformers with an error that names no
file, or worse, loads half a state. Each file is checked by its own format's framing, which a
truncation always breaks:

- ``*.safetensors``: the 8-byte header length and JSON header, and a file exactly as long as the
  tensors the header lists;
- ``*.pt``, ``*.pth``, ``*.bin`` (torch.save's zip format): the zip's central directory, which is
  written last, and every member lying inside the file;
- ``*.json``: parses (``trainer_state.json``, written last by transformers, must exist);
- a run of several processes: each process's ``rng_state_<rank>.pth`` is there (rank 0 writes
  ``trainer_state.json`` while another rank may still be saving its own).
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

from sweepgen.fs import filenames

TRAINER_STATE = filenames.TRAINER_STATE


def problem(folder: Path, processes: int = 1) -> str | None:
    """Why ``folder`` cannot be resumed from (naming the file), or None if it looks complete.
    ``processes``: the run's process count now; each process of a multi-process run resumes its
    own RNG state (``rng_state_<rank>.pth``), which transformers, finding none, replaces with a
    note in its log: the resume would not be exact."""
    if not (folder / TRAINER_STATE).is_file():
        return f"{folder / TRAINER_STATE} is missing (the save did not finish)"
    if processes > 1:
        missing = next((r for r in range(processes) if not (folder / f"rng_state_{r}.pth").is_file()), None)
        if missing is not None:
            return (
                f"{folder / f'rng_state_{missing}.pth'} is missing (process {missing}'s save did not finish)"
            )
    for path in sorted(folder.iterdir()):
        if not path.is_file():
            continue
        try:
            why = _file_problem(path)
        except OSError as err:
            why = f"cannot be read: {err.strerror or err}"
        if why:
            return f"{path}: {why}"
    return None


def _file_problem(path: Path) -> str | None:
    if path.suffix == ".safetensors":
        return _safetensors_problem(path)
    if path.suffix in (".pt", ".pth", ".bin"):
        return _zip_problem(path)
    if path.suffix == ".json":
        try:
            json.loads(path.read_bytes())
        except ValueError as err:
            return f"not valid JSON ({err})"
    return None


def _safetensors_problem(path: Path) -> str | None:
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            return f"truncated ({size} bytes, shorter than the safetensors header)"
        (n,) = struct.unpack("<Q", head)
        if 8 + n > size:
            return f"truncated ({size} bytes; the header alone needs {8 + n})"
        try:
            header = json.loads(fh.read(n))
        except ValueError:
            return "the safetensors header is not valid JSON"
    ends = [
        t["data_offsets"][1]
        for k, t in header.items()
        if k != "__metadata__" and isinstance(t, dict) and "data_offsets" in t
    ]
    expected = 8 + n + max(ends, default=0)
    if size != expected:
        return f"truncated ({size} bytes; its header lists tensors up to byte {expected})"
    return None


def _zip_problem(path: Path) -> str | None:
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.header_offset + info.compress_size > size:
                    return f"truncated (member {info.filename} runs past the end of the file)"
    except zipfile.BadZipFile:
        return f"truncated or corrupt ({size} bytes; not a complete torch.save archive)"
    return None
