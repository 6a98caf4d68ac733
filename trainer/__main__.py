"""``python -m trainer CONFIG.yaml``: train one run. Exit 0 ok, 2 bad config or diverged, 70 a bug,
128+signum stopped by a signal (143 SIGTERM, 130 SIGINT, 140 SIGUSR2; trainer/signals.py)."""

from __future__ import annotations

import os
import sys
import traceback


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: python -m trainer CONFIG.yaml", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    # Before anything imports huggingface_hub (it reads this once): never reach for the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sweepgen.errors import SweepgenError
    from trainer.signals import Stopped

    try:
        from trainer.run import run_config_file

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
    except Exception:  # noqa: BLE001 - a bug: show everything
        traceback.print_exc()
        print(
            "internal error: this is a bug in the sweepgen trainer; please report it with the "
            "traceback above",
            file=sys.stderr,
        )
        return 70
    return 0


if __name__ == "__main__":
    sys.exit(main())
