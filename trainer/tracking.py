"""Experiment tracking: ``logging.report_to: [tensorboard, wandb]`` (default: none).

The trackers get exactly the rows metrics.jsonl gets, under the same names (``reward_mean``, ``kl``,
``loss``...), so a report read from TensorBoard events agrees with one read from metrics.jsonl, and
W&B charts carry the names the docs use. TRL's own ``report_to`` stays "none": its callbacks would log
TRL's names and, for W&B, fill the run's config with ~200 TrainingArguments instead of ours.

- run name: the config's ``run_name``; TensorBoard events go to ``<output_dir>/tensorboard/``.
- W&B: group = the sweep's name, config = the resolved run config, tags = the sweep's varying values
  (``path=value``), both read from the sweep.lock.json beside the config file when it was rendered by
  sweepgen; the final summary goes into the run summary and samples.jsonl into a ``samples`` table
  at the end. The run id is derived from the run directory, so a resumed run continues its W&B run.
  Offline runs (``WANDB_MODE=offline``) land in ``<output_dir>/wandb/``.

torch's SummaryWriter and wandb are imported only when asked for; neither is a sweepgen dependency
(``pip install 'sweepgen[track]'``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepgen import paths
from sweepgen.errors import ConfigError
from sweepgen.formats import yamlio
from sweepgen.fs import filenames
from sweepgen_trainer.config import RunConfig

SAMPLE_COLUMNS = ("step", "prompt", "completion", "reward")


@dataclass(frozen=True)
class SweepContext:
    """What the sweep says about this run: its name (W&B group) and varying values (W&B tags)."""

    sweep: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tags(self) -> list[str]:
        # W&B tags are at most 64 characters
        return [f"{path}={value}"[:64] for path, value in sorted(self.values.items())]


def sweep_context(config_path: str | Path | None) -> SweepContext:
    """The lock beside a rendered config names its sweep and the values that vary; a config written
    by hand (no lock, or a lock that does not list it) has neither."""
    if config_path is None:
        return SweepContext()
    path = Path(config_path)
    lock_path = path.parent / filenames.LOCK
    try:
        lock = json.loads(lock_path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return SweepContext()
    if not any(isinstance(e, dict) and e.get("path") == path.name for e in lock.get("files") or ()):
        return SweepContext()
    # The lock keeps a variant's values as a difference from its base (every version differently);
    # the rendered config holds them resolved, as sweepgen.compile.output.lockfile.lock.Lock.values reads
    # them.
    config = yamlio.load(str(path)).data
    varying = [p for p in lock.get("varying") or () if isinstance(p, str)]
    values = {p: v for p in varying if (v := paths.get(config, p)) is not paths.MISSING}
    return SweepContext(str(lock.get("sweep") or path.parent.name), values)


def _missing(module: str, tracker: str) -> ConfigError:
    return ConfigError(
        f"logging.report_to lists {tracker}, but {module} is not installed",
        key="logging.report_to",
        hint="install it with `pip install 'sweepgen[track]'`, or remove it from logging.report_to",
    )


class Tracker:
    """Sends metrics rows, the summary and the samples to the configured trackers. A context
    manager: ``open`` starts the trackers, leaving the block closes them (after an error too)."""

    def __init__(self, cfg: RunConfig, config_path: str | Path | None = None) -> None:
        self.cfg = cfg
        self.config_path = config_path
        self._tb: Any = None
        self._wandb: Any = None  # the wandb run

    def __enter__(self) -> Tracker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        cfg = self.cfg
        report_to = list(cfg.logging.report_to)
        out = Path(cfg.output_dir)
        if "tensorboard" in report_to:
            try:
                from torch.utils.tensorboard import SummaryWriter  # noqa: PLC0415 - lazy: tensorboard loads only when report_to asks for it
            except ImportError:
                raise _missing("tensorboard", "tensorboard") from None
            self._tb = SummaryWriter(log_dir=str(out / "tensorboard"))
        if "wandb" in report_to:
            try:
                import wandb  # noqa: PLC0415 - lazy: wandb loads only when report_to asks for it
            except ImportError:
                raise _missing("wandb", "wandb") from None
            context = sweep_context(self.config_path)
            out.mkdir(parents=True, exist_ok=True)
            self._wandb = wandb.init(
                name=cfg.run_name,
                group=context.sweep,
                tags=context.tags,
                config=cfg.model_dump(mode="json"),
                dir=str(out),
                id=_run_id(cfg),
                resume="allow",
                reinit="create_new",
            )

    @property
    def active(self) -> bool:
        return self._tb is not None or self._wandb is not None

    def log(self, row: Mapping[str, Any]) -> None:
        step = row.get("step")
        if not isinstance(step, int):
            return
        scalars = {
            k: float(v)
            for k, v in row.items()
            if k != "step"
            and isinstance(v, (int, float))
            and not isinstance(v, bool)
            and math.isfinite(float(v))
        }
        if self._tb is not None:
            for key, value in scalars.items():
                self._tb.add_scalar(key, value, global_step=step)
            self._tb.flush()
        if self._wandb is not None and scalars:
            self._wandb.log(scalars, step=step)

    def finish(self, summary: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> None:
        """At the run's end: the summary and the samples table to W&B, then close."""
        if self._wandb is not None:
            import wandb  # noqa: PLC0415 - lazy: wandb loads only when report_to asks for it

            names = [c for c in SAMPLE_COLUMNS if any(c in s for s in samples)]
            if names:
                columns: list[str | int] = list(names)  # wandb's annotation (a list is invariant)
                table = wandb.Table(columns=columns, data=[[s.get(c) for c in names] for s in samples])
                self._wandb.log({"samples": table})
            for key, value in summary.items():
                if value is None or isinstance(value, (bool, int, float, str)):
                    self._wandb.summary[key] = value
        self.close()

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
            self._tb = None
        if self._wandb is not None:
            self._wandb.finish()
            self._wandb = None


def _run_id(cfg: RunConfig) -> str:
    """A W&B run id stable across restarts of the same run directory (so a resume continues it)."""
    key = f"{Path(cfg.output_dir).resolve()}|{cfg.run_name}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]
