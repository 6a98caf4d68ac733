"""The run directory (docs/ARCHITECTURE.md): config.yaml, metrics.jsonl, samples.jsonl, checkpoints/,
summary.json. Nothing here imports torch.

Rules: a finished run (summary.json exists) is never overwritten; a run directory whose config.yaml
differs from the new config is never reused (resuming with other settings would mix two experiments);
whole files are written atomically (temp file in the same folder + os.replace); summary.json is
written last, so its presence means "finished".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepgen.errors import ConfigError, UserError
from sweepgen.formats import yamlio, yamlwrite
from sweepgen.fs import filenames
from sweepgen.fs.safefs import write_atomic
from sweepgen_trainer import ranks
from sweepgen_trainer.rundir import diversity
from sweepgen_trainer.rundir.checkpoint_check import TRAINER_STATE, problem

if TYPE_CHECKING:  # annotations only: no run-time dependency on the config model
    from sweepgen_trainer.config import RunConfig

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def _checkpoint_step(checkpoint: Path) -> int:
    match = _CHECKPOINT.match(checkpoint.name)
    if match is None:  # last_checkpoint only returns names that match
        raise ValueError(f"not a checkpoint folder: {checkpoint}")
    return int(match.group(1))


class TrainingDiverged(UserError):
    """Loss or reward became NaN or infinite; the run stops instead of training on garbage."""


def atomic_write_text(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"), durable=True)  # fsync: summary.json proves a finished run


def config_yaml(cfg: RunConfig) -> str:
    return yamlwrite.dumps(cfg.model_dump(mode="json"))  # read back by yamlio, as every config is


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a kill: everything after it is gone too
    return rows


def _json_value(value: Any) -> Any:
    # NaN/inf are not JSON; the trainer stops on them before logging, so this only guards metrics
    # that TRL itself reports as None.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class RunDir:
    """One run's output folder and the files in it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.config = self.path / filenames.CONFIG
        self.data = self.path / filenames.DATA
        self.grpo_args = self.path / filenames.GRPO_ARGS
        self.metrics = self.path / filenames.METRICS
        self.samples = self.path / filenames.SAMPLES
        self.summary = self.path / filenames.SUMMARY
        self.checkpoints = self.path / filenames.CHECKPOINTS

    # ---- before training ------------------------------------------------------------------
    def check_reusable(self, cfg: RunConfig, data: dict[str, Any] | None = None) -> None:
        """Refuse a finished run, and a folder holding a different run's config or data once that run
        has trained (a checkpoint or a logged step); a start that failed before training leaves
        nothing that blocks its corrected config."""
        if self.summary.exists():
            raise ConfigError(
                f"run {cfg.run_name!r} already finished: {self.summary} exists",
                key="output_dir",
                hint="a finished run is never overwritten; choose another output_dir, or move the "
                "old run directory away yourself",
            )
        if self.config.exists() and self.started():
            existing = yamlio.load(str(self.config)).data
            if existing != cfg.model_dump(mode="json"):
                raise ConfigError(
                    f"{self.config} holds a different config than this run's",
                    key="output_dir",
                    hint="resuming with other settings would mix two experiments; use a new "
                    "output_dir, or the same config as the interrupted run",
                )
        if data is not None and self.data.exists() and self.started():
            existing = json.loads(self.data.read_text(encoding="utf-8"))
            if existing != data:
                raise ConfigError(
                    f"{self.data} records other data than this run's: {existing} (now {data})",
                    key="data.source",
                    hint="the data file changed since this run started; resuming would mix two "
                    "experiments: use a new output_dir, or restore the data file",
                )

    def started(self) -> bool:
        """Whether a run trained here: it saved a checkpoint or logged a step."""
        return self.last_checkpoint() is not None or bool(read_jsonl(self.metrics))

    def last_checkpoint(self, warn: Callable[[str], None] | None = None) -> Path | None:
        """The newest complete checkpoint. A newer one that is incomplete or corrupt (a save cut by
        a crash or a full disk) is skipped, and named through ``warn`` when given."""

        steps = []
        if self.checkpoints.is_dir():
            for entry in self.checkpoints.iterdir():
                match = _CHECKPOINT.match(entry.name)
                if match and entry.is_dir():
                    steps.append((int(match.group(1)), entry))
        for _, entry in sorted(steps, reverse=True):
            if warn is None:  # a quick look (e.g. which checkpoint was just saved): no deep check
                if (entry / TRAINER_STATE).is_file():
                    return entry
                continue
            why = problem(entry, ranks.world_size())
            if why is None:
                return entry
            warn(f"warning: skipping checkpoint {entry}: {why}; resuming from an earlier one")
        return None

    def start(
        self,
        cfg: RunConfig,
        grpo_args: dict[str, Any],
        data: dict[str, Any] | None = None,
        warn: Callable[[str], None] = print,
    ) -> tuple[Path | None, float]:
        """Write config.yaml/grpo_args.json (and data.json) and roll logs back to the resume point.

        Returns the checkpoint to resume from (or None) and the wall time already spent by earlier
        sessions of this run (the ``elapsed_s`` of the last kept metrics row).
        """
        self.check_reusable(cfg, data)
        self.path.mkdir(parents=True, exist_ok=True)
        # check_reusable passed: the folder holds this config, or nothing that trained.
        atomic_write_text(self.config, config_yaml(cfg))
        if data is not None:
            atomic_write_text(self.data, json.dumps(data, indent=2, sort_keys=True) + "\n")
        atomic_write_text(self.grpo_args, json.dumps(grpo_args, indent=2, sort_keys=True, default=str) + "\n")
        checkpoint = self.last_checkpoint(warn=warn)
        step = _checkpoint_step(checkpoint) if checkpoint else 0
        # Steps after the checkpoint will be trained again; drop their rows so none is doubled.
        kept = [r for r in read_jsonl(self.metrics) if r["step"] <= step]
        self._rewrite(self.metrics, kept)
        self._rewrite(self.samples, [r for r in read_jsonl(self.samples) if r["step"] <= step])
        offset = kept[-1].get("elapsed_s", 0.0) if kept else 0.0
        return checkpoint, offset

    def _rewrite(self, path: Path, rows: list[dict[str, Any]]) -> None:
        if rows or path.exists():
            atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in rows))

    # ---- during training -------------------------------------------------------------------
    def append(self, path: Path, rows: list[dict[str, Any]]) -> None:
        with path.open("a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps({k: _json_value(v) for k, v in row.items()}) + "\n")
            handle.flush()

    # ---- at the end ------------------------------------------------------------------------
    def write_summary(self, cfg: RunConfig, extras: dict[str, Any] | None = None) -> dict[str, Any]:
        """summary.json from the logged files (so earlier sessions of a resumed run count)."""
        metrics = read_jsonl(self.metrics)
        if not metrics:
            raise UserError(
                f"{self.metrics} is empty: the run logged no step",
                hint="check run.log for why training stopped",
            )
        summary = summarize(metrics, read_jsonl(self.samples), cfg)
        summary.update(extras or {})
        atomic_write_text(self.summary, json.dumps(summary, indent=2, sort_keys=True) + "\n")
        return summary


def summarize(metrics: list[dict[str, Any]], samples: list[dict[str, Any]], cfg: RunConfig) -> dict[str, Any]:
    """final_reward: mean reward_mean of the last ``summary_window`` generation steps (logged steps that
    generated; with num_iterations k they span k·summary_window optimizer steps, recorded as
    ``summary_window_steps``); best_reward: the highest such window mean over the run (so best >=
    final); truncated_fraction: the share of completions cut at max_completion_length over the same
    window; diversity over the completions sampled at the last logged step."""
    window = cfg.logging.summary_window
    # Steps that did not generate (num_iterations > 1) log reward_mean None: not part of any window.
    generated = [row for row in metrics if row.get("reward_mean") is not None]
    rewards = [row["reward_mean"] for row in generated]
    last = generated[-window:]
    truncated = [r["truncated_fraction"] for r in last if r.get("truncated_fraction") is not None]
    means = [
        sum(rewards[max(0, i + 1 - window) : i + 1]) / len(rewards[max(0, i + 1 - window) : i + 1])
        for i in range(len(rewards))
    ]
    last_step = metrics[-1]["step"]
    # The last generating step's completions (the last logged step may not have generated).
    sample_step = max((s["step"] for s in samples if s["step"] <= last_step), default=None)
    final_samples = [s["completion"] for s in samples if s["step"] == sample_step]
    div = diversity.diversity(final_samples)
    return {
        "run_name": cfg.run_name,
        "final_reward": means[-1] if means else None,
        "best_reward": max(means) if means else None,
        "summary_window": window,
        "summary_window_steps": _window_steps(metrics, generated, window),
        "truncated_fraction": sum(truncated) / len(truncated) if truncated else None,
        # the config's word that the task fills max_completion_length, for `sweepgen report` (only
        # then: a debate's cut turn is scored on cut text whatever the config says)
        **({"truncation": "expected"} if truncation_expected(cfg) else {}),
        "steps": last_step,
        "wall_time_s": metrics[-1].get("elapsed_s"),
        "diversity": div,
        "degenerate": diversity.is_degenerate(
            div,
            min_unique_ratio=cfg.logging.degenerate_unique_ratio,
            max_jaccard=cfg.logging.degenerate_jaccard,
        ),
    }


def _window_steps(metrics: list[dict[str, Any]], generated: list[dict[str, Any]], window: int) -> int | None:
    if not generated:
        return None
    # from the window's first generation step to the last logged step (which may reuse its batch)
    return int(metrics[-1]["step"]) - int(generated[-window:][0]["step"]) + 1


def truncation_expected(cfg: RunConfig) -> bool:
    """``logging.truncation: expected`` on a run whose cut is at max_completion_length (not a debate)."""
    return cfg.logging.truncation == "expected" and cfg.debate is None


def truncation_warning(summary: dict[str, Any], cfg: RunConfig) -> str | None:
    """The warning line for a run whose completions were mostly cut, naming the limit that cut them.

    TRL counts a completion as cut when its last token is not EOS. A debate's completion is its
    transcript, whose last token is the final turn's: it is cut when that turn reached
    ``debate.max_turn_tokens``, never at ``grpo.max_completion_length`` (the trainer refuses, before
    the model loads, a debate that could reach it), so for a debate that is the limit named. With
    ``logging.truncation: expected`` a cut at max_completion_length is what the task asks for (no
    line); a debate's cut turn is still named."""
    fraction = summary.get("truncated_fraction")
    if fraction is None or fraction <= 0.5:
        return None
    share = f"warning: {fraction:.0%} of the completions in the final window were cut"
    if cfg.debate is not None:
        return (
            f"{share}: their final turn reached debate.max_turn_tokens = {cfg.debate.max_turn_tokens} "
            "without EOS and was scored on the cut text; raise debate.max_turn_tokens (and "
            "grpo.max_completion_length with it if the transcript no longer fits)"
        )
    if truncation_expected(cfg):
        return None  # the config says completions are meant to fill the limit (the fraction is kept)
    return (
        f"{share} at grpo.max_completion_length = {cfg.grpo.max_completion_length} and scored on the "
        "cut text; raise grpo.max_completion_length (or set grpo.mask_truncated_completions: true to "
        "keep them out of the loss)"
    )
