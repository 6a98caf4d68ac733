"""The objective `report` takes, without --metric, for runs of a TRL trainer other than GRPO/RLOO.

GRPO and RLOO log a `reward`, which `report` takes as it takes any trainer's reward. `trl sft`,
`trl dpo`, `trl kto`, `trl reward` and `trl distillation` log none: they are judged by what each
trainer itself logs (the keys below are the ones TRL 1.16 writes to trainer_state.json's
log_history; an eval pass adds the same names with ``eval_`` in front). Each trainer's list is its
natural objective, best first, and the first one the runs logged is taken:

- sft, kto, distillation: the loss (eval_loss if an eval ran, else the training loss), lower is
  better; the loss is what these trainers minimise, and KTO logs no accuracy.
- dpo: ``rewards/accuracies`` (the share of pairs whose chosen answer the policy prefers, the
  number TRL's DPO docs read), eval's first, higher is better; else the loss.
- reward: ``accuracy`` (the share of pairs the reward model ranks right), eval's first, higher is
  better; else the loss.

The runs are known to be TRL's from the command each run's status recorded (``trl X ...``,
``python -m trl.scripts.X``, or TRL's own ``trl/scripts/X.py``), or, where no command names a TRL
trainer (a script of the person's own), from the spec's ``schema: trl:X``, which the lock records
as a name (``report.trl``: data, never run); nothing is guessed otherwise, and `report` still asks
for --metric. The direction is the metric name's
(sweepgen.direction.default_mode), and every output says which metric was chosen, why, and how to
choose another.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence

# each trainer's natural objective, best first (eval before train)
_LOSS = ("eval_loss", "loss")
OBJECTIVES: dict[str, tuple[str, ...]] = {
    "sft": _LOSS,
    "kto": _LOSS,
    "distillation": _LOSS,
    "dpo": ("eval_rewards/accuracies", "rewards/accuracies", *_LOSS),
    "reward": ("eval_accuracy", "accuracy", *_LOSS),
}
_SCRIPTS = "trl.scripts."


def trainer(commands: Iterable[Sequence[str]]) -> str | None:
    """The TRL trainer every one of ``commands`` runs (``sft`` for ``trl sft --config c.yaml``);
    None when one is not a TRL trainer's or they run different ones."""
    found = {_trainer_of(words) for words in commands}
    if len(found) != 1:
        return None
    return found.pop()


def any_trainer(commands: Iterable[Sequence[str]]) -> bool:
    """Whether one of ``commands`` runs a TRL trainer."""
    return any(_trainer_of(words) is not None for words in commands)


def _trainer_of(words: Sequence[str]) -> str | None:
    """The TRL command ``words`` runs: ``trl X``, ``-m trl.scripts.X``, ``.../trl/scripts/X.py``; a
    word with spaces (a --shell command's script) is split as the shell would split it."""
    split = [w for word in words for w in (_words(word) if " " in word else [word])]
    return next(filter(None, (_named_at(split, i) for i in range(len(split)))), None)


def _named_at(split: Sequence[str], i: int) -> str | None:
    """The TRL command ``split[i]`` starts naming, else None."""
    word, following = split[i], split[i + 1] if i + 1 < len(split) else ""
    if os.path.basename(word) == "trl" and following.isidentifier():
        return following
    if word == "-m" and following.startswith(_SCRIPTS):
        return following[len(_SCRIPTS) :] or None
    head, _, script = word.replace("\\", "/").rpartition("/trl/scripts/")
    return script.removesuffix(".py") if head and script.endswith(".py") else None


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def choose(name: str | None, logged: Sequence[str]) -> str | None:
    """The objective of TRL trainer ``name`` the runs logged; None: not a trainer listed here, or
    none of its objectives logged."""
    return next((m for m in OBJECTIVES.get(name or "", ()) if m in logged), None)


def why(name: str, metric: str, mode: str, told: str = "their recorded command") -> str:
    """The note every output carries: what was chosen, why (``told``: what says the runs are
    ``name``'s), and how to choose another."""
    listed = ", ".join(OBJECTIVES[name])
    return (
        f"the runs are TRL `{name}` runs ({told}): reporting `{metric}`, {mode} is better, "
        f"the first of its objectives ({listed}) the runs logged; choose another with --metric NAME "
        "(and --mode max|min)"
    )
