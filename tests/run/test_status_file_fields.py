"""A status file (``sweepgen_status.json``) is data anyone with the runs folder may write: each field
is read as sweepgen writes it, or the whole file is an unreadable status naming it (never a
traceback in `status`, `report`, `cancel` or `run`, never a done file looked for outside the run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunState, RunStatus


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("done_file", 5),
        ("done_file", "../../.ssh/id_rsa"),
        ("done_file", "/etc/passwd"),
        ("config", 5),
        ("sweep_dir", ["x"]),
        ("command", "train"),
        ("command", [1]),
        ("attempt", "2"),
        ("attempt", True),
        ("exit_code", "0"),
        ("ids", []),
        ("reason", {"a": 1}),
        ("executor", 5),
        ("started", 5),
        ("started", "not a date"),
        ("started", "2024-01-01T00:00:00"),  # no zone: elapsed time against an aware now was a TypeError
        ("ended", [1]),
        ("config_fingerprint", 5),
        ("version", "1"),
    ],
)
def test_a_status_file_field_of_the_wrong_kind_is_an_unreadable_status(key, value, tmp_path: Path):
    """A status file is data anyone with the runs folder may write: each field holds what sweepgen
    writes there, or the whole file is unreadable (ConfigError naming it), never a traceback later."""
    data = {"state": "running", "executor": "local", "started": "2024-01-01T00:00:00.000+00:00", key: value}
    with pytest.raises(ConfigError, match=repr(key)) as err:
        RunStatus.from_json(data, path=tmp_path / "sweepgen_status.json")
    assert "sweepgen_status.json" in str(err.value.location)


def test_a_status_file_sweepgen_wrote_reads_back(tmp_path: Path):
    from sweepgen.run.core.base import utc_now

    status = RunStatus(
        RunState.FINISHED,
        "local",
        0,
        utc_now(),
        utc_now(),
        None,
        ["true", "x"],
        "c.yaml",
        "g",
        2,
        {"pid": 1},
        "f",
        "out/summary.json",
    )
    assert RunStatus.from_json(json.loads(json.dumps(status.to_json())), path=tmp_path) == status
