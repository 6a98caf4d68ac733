"""The spec's ``search:`` block: adaptive search (Optuna ask-and-tell), driven by ``sweepgen run``.

Only the block's shape lives here; ``sweepgen.compile.spec.variants.trials`` turns a point into a trial
variant and
probes the space at render time, ``sweepgen.run.search.controller`` runs the study. The axes use the
distributions of ``sample:`` (``uniform``, ``log_uniform``, ``int_uniform``, ``choice``).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

from sweepgen import direction
from sweepgen.compile.spec.sampling.sample import Distribution

_STRICT = ConfigDict(extra="forbid", strict=True)
# The one list of each: the model accepts them, the schema and `sweepgen schema` show them, the
# tests drive a study with every one (tests/run/test_search.py)
Sampler = Literal["random", "qmc", "tpe", "cmaes", "gp"]
PruneMethod = Literal["asha", "median", "hyperband", "none"]


class Prune(BaseModel):
    """Early stopping: the metric at each logged step goes to the pruner, which may stop the trial."""

    model_config = _STRICT
    method: PruneMethod = Field(
        default="asha", description="asha: successive halving; median; hyperband; none: never prune"
    )
    # No default: it was 1, i.e. decisions from the first logged value, which in
    # benchmarks/bench_search.py pruned on noise and never reached un-pruned TPE's regret; no number
    # of steps fits every trainer's logging and learning curve, so the spec names it.
    min_steps: StrictInt = Field(
        ge=1,
        description="no decision before this step (required unless method is none): where the metric "
        "ranks trials about as their final values do, e.g. once it has covered half its rise, about a "
        "tenth of a run's steps (docs/SEARCH.md, 'How pruning decides')",
    )
    reduction: StrictInt = Field(
        default=3, ge=2, description="asha/hyperband: keep 1/reduction of the trials at each rung"
    )

    @model_validator(mode="before")
    @classmethod
    def _no_steps_without_pruning(cls, data: Any) -> Any:
        # `method: none` decides nothing, so it needs no min_steps (the value is never read)
        if isinstance(data, dict) and data.get("method") == "none" and "min_steps" not in data:
            return {**data, "min_steps": 1}
        return data


class SearchBlock(BaseModel):
    """Adaptive search: ``n`` trials, ``parallel`` at once, each a rendered and gated variant."""

    model_config = _STRICT
    n: StrictInt = Field(ge=1, le=100_000, description="trials to finish (complete + pruned + failed)")
    parallel: StrictInt = Field(default=1, ge=1, description="trials running at once")
    seed: StrictInt = Field(default=0, ge=0, description="seed of the sampler")
    sampler: Sampler = Field(default="tpe", description="Optuna sampler: " + " | ".join(get_args(Sampler)))
    metric: StrictStr = Field(
        min_length=1, description="objective, read as `report --metric` reads it (jsonl, csv, TensorBoard)"
    )
    mode: Literal["max", "min"] = Field(default="max", description="maximise or minimise the metric")
    axes: dict[StrictStr, Distribution] = Field(
        min_length=1,
        description="dotted path -> {uniform: [lo, hi]} | {log_uniform: [lo, hi]} | "
        "{int_uniform: [lo, hi]} | {choice: [values]}",
    )
    prune: Prune | None = Field(default=None, description="early stopping of trials (default: none)")
    repeats: StrictInt = Field(
        default=1, ge=1, le=100, description="seeds per trial; the mean of their metrics is told"
    )
    seed_path: StrictStr | None = Field(
        default=None, description="the config's seed (dotted path), varied by `repeats`: seed, seed+1, ..."
    )

    @model_validator(mode="before")
    @classmethod
    def _lowered_metric_says_its_mode(cls, data: Any) -> Any:
        # `mode` defaults to max; a study that maximises a loss finds the worst config and looks right
        metric = data.get("metric") if isinstance(data, dict) else None
        if isinstance(metric, str) and "mode" not in data and direction.lowered(metric):
            raise ValueError(
                f"`metric: {metric}` names something lowered, and `mode` is not given (it would be max): "
                "add `mode: min` (or `mode: max` if a higher value is better)"
            )
        return data
