"""`sweepgen run` reads a generated trainer config as the trainer does (sweepgen.formats.yamlio, YAML 1.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepgen.errors import ConfigError
from sweepgen.formats import yamlio
from sweepgen.run.core.plan.tasks import config_fingerprint, run_dir_of


def fingerprint(text: str) -> str:
    return config_fingerprint(Path("c.yaml"), text.encode())


def test_fingerprint_reads_yaml_1_2_like_the_trainer():
    # YAML 1.1 (PyYAML's safe_load) reads `yes` and `on` as true; the trainer reads strings
    text = "output_dir: runs/x\nmode: yes\nswitch: on\n"
    assert yamlio.loads(text, "c.yaml").data == {"output_dir": "runs/x", "mode": "yes", "switch": "on"}
    assert fingerprint(text) == fingerprint('output_dir: runs/x\nmode: "yes"\nswitch: "on"\n')
    assert fingerprint(text) != fingerprint("output_dir: runs/x\nmode: true\nswitch: true\n")
    # what a config says, not how: comments and quoting do not change it
    assert fingerprint("# header\noutput_dir: 'runs/x'\nmode: yes\nswitch: on\n") == fingerprint(text)


def test_run_dir_refuses_what_the_trainer_would_refuse():
    data = b"output_dir: runs/a\noutput_dir: runs/b\n"  # PyYAML keeps the last; the trainer refuses
    with pytest.raises(ConfigError) as err:
        run_dir_of(Path("c.yaml"), data, {})
    assert "not valid YAML" in err.value.message and "duplicate" in err.value.message.lower()
    assert err.value.location is not None and err.value.location.line == 2


def test_run_dir_is_the_rendered_output_dir():
    assert run_dir_of(Path("c.yaml"), b"output_dir: runs/a\n", {"output_dir": "other"}) == Path("runs/a")
