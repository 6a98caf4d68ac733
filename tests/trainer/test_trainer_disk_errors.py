"""A full disk, a read-only file system or an exhausted quota while the trainer writes is the
environment, not a bug: exit 2 with the path and a hint, never the "bug in the trainer" exit 70."""

from __future__ import annotations

import errno
import os

import pytest

import sweepgen_trainer.run
from sweepgen_trainer.__main__ import main


def _write_to_dev_full(path: str, **_: object) -> dict:
    # /dev/full answers every write with a real ENOSPC from the kernel
    with open("/dev/full", "wb", buffering=0) as fh:
        fh.write(b"metrics row\n")
    raise AssertionError("/dev/full accepted a write")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_enospc_from_the_kernel_is_exit_2_with_the_run_directory(monkeypatch, capsys, tmp_path):
    # a failed write() carries no file name: the run directory from the config is named instead
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("run_name: r\noutput_dir: runs/r\n")
    monkeypatch.setattr(sweepgen_trainer.run, "run_config_file", _write_to_dev_full)
    assert main([str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "error: writing to the run directory runs/r: No space left on device (errno ENOSPC)" in err
    assert "bug" not in err and "Traceback" not in err


@pytest.mark.parametrize("code", [errno.EROFS, errno.EDQUOT])
def test_erofs_and_edquot_are_exit_2(monkeypatch, capsys, code):
    def fail(path: str, **_: object) -> dict:
        raise OSError(code, os.strerror(code), "runs/r/checkpoints/checkpoint-5/optimizer.pt")

    monkeypatch.setattr(sweepgen_trainer.run, "run_config_file", fail)
    assert main(["cfg.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"runs/r/checkpoints/checkpoint-5/optimizer.pt: {os.strerror(code)}" in err


def test_torch_style_wrapped_write_failure_is_exit_2(monkeypatch, capsys):
    # torch.save re-raises a failed write as RuntimeError with the OS message inside
    def fail(path: str, **_: object) -> dict:
        raise RuntimeError(
            "[enforce fail at inline_container.cc:664] . unexpected pos 64 vs 0: No space left on device"
        )

    monkeypatch.setattr(sweepgen_trainer.run, "run_config_file", fail)
    assert main(["cfg.yaml"]) == 2
    assert "No space left on device (errno ENOSPC)" in capsys.readouterr().err


def test_other_exceptions_stay_bugs(monkeypatch, capsys):
    def fail(path: str, **_: object) -> dict:
        raise ValueError("a real bug")

    monkeypatch.setattr(sweepgen_trainer.run, "run_config_file", fail)
    assert main(["cfg.yaml"]) == 70
    assert "bug in the sweepgen trainer" in capsys.readouterr().err
