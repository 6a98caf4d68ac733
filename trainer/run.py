"""One training run, top to bottom: config → checks → model/data → train → summary.

Everything a user can get wrong (unknown key, unknown reward, missing model or data file, finished
run, different config in the run folder) is checked before torch is imported or a model loads.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sweepgen.errors import ConfigError
from sweepgen_trainer import checks, models, ranks, tracking
from sweepgen_trainer import data as data_mod
from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.configfile import load_config_doc, locate
from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs
from sweepgen_trainer.rundir.outputs import RunDir, config_yaml, read_jsonl, truncation_warning
from sweepgen_trainer.training.signals import GracefulStop, cycle_steps

if TYPE_CHECKING:
    from sweepgen_trainer.training.grpo import SweepgenGRPOTrainer


def _preflight(cfg: RunConfig) -> RunDir:
    """All cheap checks; raises ConfigError before any model loads."""
    models.locate_model(cfg.model)  # raises for a missing directory or an uncached hub id
    data_mod.data_path(cfg.data)
    held_out = cfg.routing_eval_data()
    if held_out is not None:
        try:
            data_mod.data_path(held_out)
        except ConfigError as err:
            err.key = "routing.eval_data"  # located at the routing key, not at data.source
            raise
    run_dir = RunDir(cfg.output_dir)
    run_dir.check_reusable(cfg)
    return run_dir


def run_config_file(path: str | Path, *, echo: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    cfg, doc = load_config_doc(path)
    try:
        return run(cfg, echo=echo, config_path=path)
    except ConfigError as err:
        raise locate(err, doc) from None


def run(
    cfg: RunConfig, *, echo: Callable[[str], None] = lambda _: None, config_path: str | Path | None = None
) -> dict[str, Any]:
    """Train ``cfg`` to the end (resuming if it was interrupted) and return summary.json's content.

    SIGTERM, SIGINT and SIGUSR2 stop it gracefully (trainer/training/signals.py): the current step finishes,
    a checkpoint is saved and ``Stopped`` is raised instead of writing summary.json.
    ``config_path``: the file ``cfg`` came from; a sweep lock beside it names the sweep for tracking."""
    if not ranks.is_main():  # under DDP, rank 0 alone speaks: each line of run.log once
        echo = _silent
    with GracefulStop(echo=echo) as stop, tracking.Tracker(cfg, config_path) as tracker:
        return _train(cfg, stop, echo, tracker)


def _silent(line: str) -> None:
    """The echo of a rank other than 0."""


def _train(
    cfg: RunConfig, stop: GracefulStop, echo: Callable[[str], None], tracker: tracking.Tracker
) -> dict[str, Any]:
    """The run's steps in order; each step below is one named function."""
    start = time.monotonic()
    run_dir, rows, data_identity = _checked_inputs(cfg, echo)
    from datasets import Dataset  # noqa: PLC0415 - lazy: torch and TRL load only when training starts
    from transformers.utils import logging as hf_logging  # noqa: PLC0415 - lazy: as above

    # run.log gets one line per step from on_step instead (transformers leaves this one unannotated)
    cast(Callable[[], None], hf_logging.disable_progress_bar)()
    # TRL's and transformers' own checks (e.g. bf16 without hardware support) before a model loads
    # and before config.yaml is written, so the corrected config is not refused as "different".
    # The arguments are built once: grpo_args.json records exactly what the trainer was given.
    args = {**grpo_kwargs(cfg, str(run_dir.checkpoints)), **ranks.device_kwargs()}
    grpo_config = grpo_config_from(args)
    model_dir, model, tokenizer = _load_model(cfg, rows)
    checkpoint, offset = _start(cfg, run_dir, args, data_identity, echo)
    _announce(cfg, run_dir, model_dir, checkpoint, echo)
    if ranks.is_main():
        tracker.open()  # logging.report_to; after the run directory is set up
    trainer = build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tokenizer,
        train_dataset=Dataset.from_list(rows),
        elapsed_offset=offset,
        on_step=_step_reporter(cfg, echo, tracker),
        grpo_config=grpo_config,
        stop=stop,
    )
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    _finish_stop(cfg, stop, trainer.state.global_step, run_dir)
    extras = {
        "wall_time_s": offset + time.monotonic() - start,
        "resumed_from": checkpoint.name if checkpoint else None,
        "data": data_identity,
        **trainer.summary_extras(),
    }
    if not ranks.is_main():
        return {}  # rank 0 writes summary.json
    return _write_summary(cfg, run_dir, extras, echo, tracker)


def _start(
    cfg: RunConfig,
    run_dir: RunDir,
    args: dict[str, Any],
    data_identity: dict[str, Any],
    echo: Callable[[str], None],
) -> tuple[Path | None, float]:
    """The run directory set up for (re)starting; the checkpoint to resume from and the time already
    spent. Rank 0 writes; the other ranks only find the same checkpoint (nothing writes checkpoints
    before training starts, so every rank reads the same folder) to resume their own RNG state."""
    if ranks.is_main():
        return run_dir.start(cfg, args, data_identity, warn=echo)
    return run_dir.last_checkpoint(warn=_silent), 0.0


def _checked_inputs(
    cfg: RunConfig, echo: Callable[[str], None]
) -> tuple[RunDir, list[dict[str, Any]], dict[str, Any]]:
    """Everything checkable before torch loads: the run folder, the data rows and their identity."""
    run_dir = _preflight(cfg)
    for warning in cfg.warnings():
        echo(f"warning: {warning}")
    data_file, rows, lines = data_mod.read_rows(cfg.data)
    checks.check_data_columns(cfg, data_file, rows, lines)
    held_out = cfg.routing_eval_data()
    if held_out is not None:  # the routing eval's rewards read the held-out rows' columns too
        checks.check_data_columns(cfg, *data_mod.read_rows(held_out))
    data_identity = data_mod.identity(cfg.data, data_file, rows)
    run_dir.check_reusable(cfg, data_identity)
    checks.check_device(cfg)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: nothing below may download
    return run_dir, rows, data_identity


def _load_model(cfg: RunConfig, rows: list[dict[str, Any]]) -> tuple[Path, Any, Any]:
    """The model folder, the model and its tokenizer, checked against the config and the prompts."""
    model_dir = _model_dir(cfg)
    checks.check_target_modules(cfg, model_dir)
    model, tokenizer = models.load_model_and_tokenizer(model_dir, cfg.model.dtype)
    _check_lengths(cfg, model, tokenizer, rows)
    return model_dir, model, tokenizer


def _model_dir(cfg: RunConfig) -> Path:
    """The model folder; under DDP rank 0 builds the tiny model first and the other ranks wait and
    read it (a rank saving the model beside it would publish a copy without its config)."""
    if ranks.world_size() == 1:
        return models.ensure_model_dir(cfg.model)
    from accelerate import PartialState  # noqa: PLC0415 - lazy: set up by TRL's config just before

    with PartialState().main_process_first():
        return models.ensure_model_dir(cfg.model)


def _announce(
    cfg: RunConfig, run_dir: RunDir, model_dir: Path, checkpoint: Path | None, echo: Callable[[str], None]
) -> None:
    """The resolved config, the model and the resume point, at the top of run.log."""
    echo(f"# resolved config of run {cfg.run_name} (written to {run_dir.config})")
    echo(config_yaml(cfg).rstrip())
    echo(f"# model: {model_dir}")
    if checkpoint is not None:
        echo(f"# resuming from {checkpoint}")


def _step_reporter(
    cfg: RunConfig, echo: Callable[[str], None], tracker: tracking.Tracker
) -> Callable[[dict[str, Any]], None]:
    """Each metrics row to the trackers, and one line of it to run.log."""

    def on_step(row: dict[str, Any]) -> None:
        tracker.log(row)

        # Steps that did not generate (num_iterations > 1) have no reward or completion length.
        def fmt(key: str, spec: str) -> str:
            return "-" if row.get(key) is None else format(row[key], spec)

        echo(
            f"step {row['step']}/{cfg.grpo.max_steps} reward {fmt('reward_mean', '.4f')} "
            f"kl {fmt('kl', '.4f')} loss {fmt('loss', '.4f')} len {fmt('completion_length', '.1f')}"
        )

    return on_step


def _finish_stop(cfg: RunConfig, stop: GracefulStop, step: int, run_dir: RunDir) -> None:
    """Raise ``Stopped`` when a signal cut the run short (signals.py)."""
    saved = run_dir.last_checkpoint()
    # named only if it is the stop step's, so the message never claims an older one was just saved
    stop.finish(
        step=step,
        max_steps=cfg.grpo.max_steps,
        checkpoint=str(saved) if saved and saved.name == f"checkpoint-{step}" else None,
    )


def _write_summary(
    cfg: RunConfig,
    run_dir: RunDir,
    extras: dict[str, Any],
    echo: Callable[[str], None],
    tracker: tracking.Tracker,
) -> dict[str, Any]:
    """summary.json, the truncation warning, the trackers' final summary; returns the summary."""
    summary = run_dir.write_summary(cfg, extras)
    cut = truncation_warning(summary, cfg)
    if cut:
        echo(cut)
    tracker.finish(summary, read_jsonl(run_dir.samples))
    echo("# summary: " + json.dumps(summary, sort_keys=True))
    return summary


def select_trainer_class(cfg: RunConfig) -> type[SweepgenGRPOTrainer]:
    """The one place that decides which trainer class runs ``cfg``.

    Each optional section that needs its own trainer adds one branch here, importing its class
    lazily (torch and TRL load only here). ``debate`` and ``routing`` each need their own class, so
    combining them is a config error (RunConfig), never one silently winning.
    """
    if cfg.routing is not None:  # gradient routing, incl. its LoRA baseline
        from sweepgen_trainer.routing.trainer import RoutedGRPOTrainer  # noqa: PLC0415 - lazy: only the trainer class the config asks for loads

        return RoutedGRPOTrainer
    if cfg.debate is not None:
        from sweepgen_trainer.debate.trainer import DebateGRPOTrainer  # noqa: PLC0415 - lazy: as above

        return DebateGRPOTrainer
    from sweepgen_trainer.training.grpo import SweepgenGRPOTrainer  # noqa: PLC0415 - lazy: as above

    return SweepgenGRPOTrainer


def build_trainer(
    cfg: RunConfig,
    run_dir: RunDir,
    *,
    model: Any,
    tokenizer: Any,
    train_dataset: Any,
    grpo_config: Any,
    elapsed_offset: float = 0.0,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    stop: GracefulStop | None = None,
) -> SweepgenGRPOTrainer:
    """The trainer for ``cfg``, its features handed to TRL's public arguments: ``reward_funcs``,
    ``rollout_func`` (debate), ``callbacks`` (run outputs, graceful stop). ``grpo_config`` is the
    trl.GRPOConfig the caller built with ``grpo_config_from(grpo_kwargs(...))`` (``run`` builds it
    once, before the model loads, so TRL's own checks come first); ``stop`` adds the graceful-stop
    callback (signals.py)."""
    cls = select_trainer_class(cfg)
    callbacks = [] if stop is None else [stop.callback(cycle_steps=cycle_steps(grpo_config))]
    return cls(
        model=model,
        reward_funcs=cls.rewards_for(cfg),
        args=grpo_config,
        train_dataset=train_dataset,
        processing_class=tokenizer,
        callbacks=callbacks,
        run_config=cfg,
        run_dir=run_dir,
        elapsed_offset=elapsed_offset,
        on_step=on_step,
        **cls.extra_init_kwargs(cfg),
    )


def _check_lengths(cfg: RunConfig, model: Any, tokenizer: Any, rows: list[dict[str, Any]]) -> None:
    """Prompt + completion must fit the model's context; TRL would fail late or truncate."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is None:
        return
    longest = max(len(tokenizer(r["prompt"])["input_ids"]) for r in rows)
    if longest + cfg.grpo.max_completion_length > limit:
        raise ConfigError(
            f"longest prompt ({longest} tokens) + grpo.max_completion_length "
            f"({cfg.grpo.max_completion_length}) exceeds the model's context of {limit} tokens",
            key="grpo.max_completion_length",
            hint="lower grpo.max_completion_length, use shorter prompts, or a model with a longer "
            "context (model.tiny.max_position_embeddings for the built-in model)",
        )
