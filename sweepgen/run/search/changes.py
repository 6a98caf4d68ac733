"""A search's spec checked against its study before a `run` asks anything.

The study remembers what its trials were drawn from and told against: its direction (Optuna's own),
each trial's distributions (Optuna's own), and, as study attributes written when the study is
created, the sampler and the metric. A spec changed in one of these since is refused, naming the
key: a flipped `mode` would keep the study optimising one way while the report ranks the other, a
narrower bound leaves trials outside the space, a changed axis kind (uniform to choice) breaks
Optuna's ask, a changed sampler or metric mixes two searches in one study. What may change: `n`,
`parallel`, `seed`, `prune` (later decisions only).
"""

from __future__ import annotations

from typing import Any

from sweepgen.compile.run_api import SearchBlock, Spec
from sweepgen.errors import SpecError

SAMPLER_ATTR = "sweepgen_sampler"
METRIC_ATTR = "sweepgen_metric"


def record(study: Any, block: SearchBlock) -> None:
    """The settings Optuna does not keep, written once (a study created by an older sweepgen gets
    them now: what it was run with before is not known)."""
    attrs = study.user_attrs
    if SAMPLER_ATTR not in attrs:
        study.set_user_attr(SAMPLER_ATTR, block.sampler)
    if METRIC_ATTR not in attrs:
        study.set_user_attr(METRIC_ATTR, block.metric)


def check(study: Any, spec: Spec, block: SearchBlock, dists: dict[str, Any], where: str) -> None:
    """Raise ``SpecError`` at the first setting of ``spec`` that differs from ``study`` (in ``where``)."""
    trials = study.get_trials(deepcopy=False)
    held = f"the study in {where} ({len(trials)} trial(s))"
    mode = "max" if study.direction.name == "MAXIMIZE" else "min"
    if mode != block.mode:
        _refuse(spec, ("search", "mode"), f"`search.mode` is {block.mode}, but {held} {mode}imises")
    for key, attr in (("sampler", SAMPLER_ATTR), ("metric", METRIC_ATTR)):
        was = study.user_attrs.get(attr)
        now = getattr(block, key)
        if was is not None and was != now:
            _refuse(spec, ("search", key), f"`search.{key}` is {now!r}, but {held} used {was!r}")
    _check_axes(spec, trials, dists, held)


def _check_axes(spec: Spec, trials: list[Any], dists: dict[str, Any], held: str) -> None:
    seen: dict[str, Any] = {}
    for trial in trials:
        for name, dist in trial.distributions.items():
            seen.setdefault(name, dist)
    _check_changed(spec, seen, dists, held)
    if seen:
        _check_new(spec, trials, dists, held)


def _check_changed(spec: Spec, seen: dict[str, Any], dists: dict[str, Any], held: str) -> None:
    """Every axis the study's trials were drawn on is still searched, from the same distribution."""
    for name, old in seen.items():
        new = dists.get(name)
        if new is None:
            _refuse(spec, ("search", "axes"), f"search axis {name!r} was removed, but {held} searched it")
        elif new != old:
            _refuse(
                spec,
                ("search", "axes", name),
                f"search axis {name!r} is {_shown(new)}, but {held} drew it from {_shown(old)}",
            )


def _check_new(spec: Spec, trials: list[Any], dists: dict[str, Any], held: str) -> None:
    """No axis is new: one a finished trial was not drawn on (a running trial may lack an axis
    because its controller died inside `ask`; the next controller draws the rest of its point)."""
    finished = [t for t in trials if t.state.is_finished()]
    drawn = set.intersection(*(set(t.distributions) for t in finished)) if finished else set(dists)
    for name in sorted(dists.keys() - drawn):
        message = f"search axis {name!r} is new, but {held} never searched it"
        _refuse(spec, ("search", "axes", name), message)


def _shown(dist: Any) -> str:
    kind = type(dist).__name__.replace("Distribution", "").lower()
    if hasattr(dist, "choices"):
        return f"choice {list(dist.choices)!r}"
    log = " (log)" if getattr(dist, "log", False) else ""
    step = f", step {dist.step}" if getattr(dist, "step", None) not in (None, 1) else ""
    return f"{kind} [{dist.low!r}, {dist.high!r}]{log}{step}"


def _refuse(spec: Spec, key: tuple[str, ...], message: str) -> None:
    raise SpecError(
        f"{message}: changing it would corrupt the study",
        location=spec.loc(key, key=len(key) > 2),
        key=".".join(key),
        hint="restore it; or start a new study: give the spec a new `name:` (a new sweep folder and run "
        "directories), render and run it (this study stays as it is, for `report`)",
    )
