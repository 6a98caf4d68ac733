"""Both routes a dataclass schema takes, for tests that hold them to one answer."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from sweepgen.compile.schema import export, jsonschema_subset
from sweepgen.compile.schema.validate import _class_validator
from sweepgen.errors import Location


@functools.cache
def validators(cls: type) -> list[Any]:
    """Its exported JSON Schema, and the class itself."""
    schema = export.export(f"tests:{cls.__name__}", cls)
    return [
        lambda config: jsonschema_subset.validate(config, schema),
        _class_validator(cls, f"tests:{cls.__name__}", Location("spec.yaml")),
    ]


def init_in_process(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    """`sweepgen init ARGS` in ``folder``, in process (CliRunner): for the tests about what `init`
    decides, not about the process (a `sweepgen` subprocess imports trl again each time, 10-25 s a
    case on CI's 2 cores). ``folder`` is a test's tmp_path: the schema cache lies in its parent, the
    session's temp folder, so the session's cases share one export of each trl schema (about a
    CPU-second a case otherwise; the cache itself is test_trl_cli_schema_real's first test's
    subject). An exception other than an exit fails."""
    from sweepgen.cli import main

    share_schema_cache(folder, monkeypatch)
    monkeypatch.chdir(folder)
    done = CliRunner().invoke(main, ["init", *args])
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    return done


def share_schema_cache(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's one trl schema cache (XDG_CACHE_HOME in ``folder``'s parent, the session's temp
    folder), for the tests about what a ``trl:<command>`` schema takes, not about its cache: the
    first case exports each command's schema (about a CPU-second with trl imported) and keeps it, as
    `init` and `render` keep it for a user; every later case reads that file, as a user's every later
    `check` does. The cache itself (written, read, rebuilt on another version) is
    test_trl_cli_schema_real's first test's subject, in a folder of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder.parent / "init-in-process-cache"))
