"""``python -m sweepgen_trainer CONFIG.yaml``: train one run. Exit 0 ok, 2 bad config or diverged, 70 a bug,
128+signum stopped by a signal (143 SIGTERM, 130 SIGINT, 140 SIGUSR2; trainer/training/signals.py)."""

from __future__ import annotations

import errno
import os
import sys
import traceback

from sweepgen.errors import SweepgenError
from sweepgen.formats import yamlio
from sweepgen_trainer.training.signals import Stopped


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: python -m sweepgen_trainer CONFIG.yaml", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    # Before anything imports huggingface_hub (it reads this once): never reach for the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from sweepgen_trainer.run import run_config_file  # noqa: PLC0415 - after HF_HUB_OFFLINE is set: huggingface_hub reads it once, on import

        run_config_file(argv[0], echo=lambda line: print(line, flush=True))
    except SweepgenError as err:
        print(err.format(), file=sys.stderr, flush=True)
        return err.exit_code
    except Stopped as stop:  # SIGTERM/SIGINT/SIGUSR2: checkpoint saved (if training), no summary
        print(stop.message, file=sys.stderr, flush=True)
        return stop.exit_code
    except KeyboardInterrupt:  # Ctrl-C before the handlers are installed (during imports)
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - a bug: show everything, unless the disk refused a write
        disk = _disk_error(err, _output_dir(argv[0]))
        if disk is not None:
            print(f"error: {disk}", file=sys.stderr, flush=True)
            print(
                "hint: free space, raise the quota or point output_dir at a writable disk, then run "
                "again: the run resumes from its last complete checkpoint",
                file=sys.stderr,
                flush=True,
            )
            return 2
        traceback.print_exc()
        print(
            "internal error: this is a bug in the sweepgen trainer; please report it with the "
            "traceback above",
            file=sys.stderr,
        )
        return 70
    return 0


# The environment, not a bug: a full disk, a read-only file system, an exhausted quota.
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT})
_DISK_MESSAGES = {os.strerror(code): code for code in _DISK_ERRNOS}


def _output_dir(config_path: str) -> str:
    """Where the run writes, for a disk error that names no file (a failed write() has none)."""
    try:
        data = yamlio.load(config_path).data  # read as the trainer reads its config (YAML 1.2)
        return f"the run directory {data['output_dir']}"
    except Exception:  # noqa: BLE001 - only a better message is at stake
        return f"the run directory of {config_path}"


def _disk_error(err: BaseException, fallback: str) -> str | None:
    """ "PATH: No space left on device" if ``err`` (or what caused it) is a disk error. torch and
    safetensors re-raise write failures as RuntimeError carrying only the message: matched by it."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _DISK_ERRNOS:
            where = current.filename or f"writing to {fallback}"
            return f"{where}: {current.strerror} (errno {errno.errorcode[current.errno]})"
        for message, code in _DISK_MESSAGES.items():
            if message in str(current):
                return f"writing to {fallback} failed: {current} (errno {errno.errorcode[code]})"
        current = current.__cause__ or current.__context__
    return None


if __name__ == "__main__":
    sys.exit(main())
