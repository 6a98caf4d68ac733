"""A ``--command`` that sets, for every run, a value the runs differ in: refused before any run starts.

``trl grpo --config {config} --beta 0.1`` on a sweep over ``beta``: TRL (HfArgumentParser, argparse,
Hydra's ``beta=0.1``) takes the command line over the config, so every run trains with 0.1 while
the report compares ``beta0.0`` with ``beta0.04``, a wrong result that looks right. A flag
(``--beta``, ``--beta=0.1``, ``--learning-rate``) naming the last part of a path the runs differ in,
or a Hydra override naming the whole path (``trainer.beta=0.1``, ``+trainer.beta=0.1``), is refused,
unless its value is a placeholder filled per run (``--output_dir {run_dir}``). The run's own folder
and name (``output_dir``, ``run_name``) are left to the run-folder checks. A search's axes count
as values the runs differ in: ``--lr 1e-5`` on a search over ``lr`` makes every trial one point.
One value for every run of a folder a run writes (``--output_dir runs/x``, ``--logging_dir``) or of
a checkpoint it resumes (``--resume_from_checkpoint``) is refused too: all runs would write into, or
start from, the same one.
"""

from __future__ import annotations

import json
import shlex
import string
from collections.abc import Iterator, Sequence

from sweepgen.errors import UserError
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.plan.tasks import SHELL

_NAMING = frozenset({"run_name", "output_dir"})  # as tasks.NAMING_PATHS: checked as run folders


# the folders a run writes its checkpoints and logs to: one value for every run is one folder for all
_FOLDERS = frozenset({"output_dir", "logging_dir"})
# a Hugging Face Trainer's checkpoint to resume from: one for every run is one start for all
_RESUME = "resume_from_checkpoint"
# placeholders filled with each run's own value ({config_dir} is the sweep's, the same for all)
_PER_RUN = frozenset({"run_dir", "name", "variant", "config", "config_name"})


def check(argv: Sequence[str], tasks: Sequence[RunTask]) -> None:
    """Exit 2 when ``argv`` sets a value the ``tasks`` differ in, or one folder for all of them."""
    if len(tasks) > 1:
        _check_folders(argv, f"all {len(tasks)} runs")
    _check(argv, varying(tasks))


def check_search(argv: Sequence[str], axes: Sequence[str]) -> None:
    """Exit 2 when ``argv`` sets a value a search samples (every trial would be the same point), or
    one folder for every trial."""
    _check_folders(argv, "every trial")
    _check(argv, {path: {"sampled by the search"} for path in axes})


def flag_values(argv: Sequence[str]) -> dict[str, str | None]:
    """Key (with underscores) -> the value ``argv`` gives it as a ``--flag`` (the last one wins, as
    argparse takes it); None for a bare flag (``--use_vllm``: true for a boolean field). The keys
    are what TRL takes over the config (HfArgumentParser takes ``--use-peft`` for ``use_peft``), so
    a start check reading one of them from the config alone would judge a value the run never sees."""
    values: dict[str, str | None] = {}
    for word, flag, name, value in _settings(_words(argv)):
        if flag:
            bare = value is None or ("=" not in word and value.startswith("--"))  # the next flag
            values[name.replace("-", "_")] = None if bare else value
    return values


_TRUE, _FALSE = {"true", "yes", "t", "y", "1"}, {"false", "no", "f", "n", "0"}  # HfArgumentParser's


def flag_bool(value: str | None) -> bool | str:
    """A boolean flag's value as HfArgumentParser reads it (a bare ``--use_vllm`` is true); a word
    it does not read as one, as written."""
    if value is None or value.lower() in _TRUE:
        return True
    return False if value.lower() in _FALSE else value


def _check_folders(argv: Sequence[str], who: str) -> None:
    """``--output_dir runs/x`` (or ``trainer.output_dir=runs/x``) in --command: the command line wins
    over each run's config, so every run would write its checkpoints, trainer state and logs into
    one folder, over the others', and resume from another run's checkpoint; ``--resume_from_checkpoint
    X`` starts every run from one checkpoint's state."""
    for word, flag, name, value in _settings(_words(argv)):
        key = name.replace("-", "_") if flag else name.rsplit(".", 1)[-1]
        shared = value is not None and not filled_per_run(value)
        if key == _RESUME and shared and str(value).lower() not in ("true", "false"):
            raise UserError(
                f"--command sets `{word}` {value!r} for every run: {who} would load that one "
                "checkpoint's optimizer and scheduler (its learning rate, not the config's) and random "
                "state (not the run's seed)",
                hint=f"remove `{word}` from --command; to start the runs from one trained model, name "
                "its folder in model_name_or_path",
            )
        if key in _FOLDERS and shared:
            raise UserError(
                f"--command sets `{word}` {value!r} for every run: the command line wins over the "
                f"config, so {who} would write their checkpoints and logs into that one folder, over "
                "each other's",
                hint=f"remove `{word}` from --command (the rendered configs give each run its own "
                f"folder), or give each its own: `--{name} {{run_dir}}`"
                if flag
                else f"remove `{word}` from --command: the rendered configs give each run its own folder",
            )


def _check(argv: Sequence[str], varying: dict[str, set[str]]) -> None:
    if not varying:
        return
    by_flag = {path.rsplit(".", 1)[-1]: path for path in varying}
    for word, flag, name, value in _settings(_words(argv)):
        path = _named_path(flag, name, by_flag, varying)
        if path is None or (value is not None and filled_per_run(value)):
            continue
        raise _refusal(word, path, varying[path])


def filled_per_run(value: str) -> bool:
    """Whether a value holds a placeholder `run` fills with each run's own value, read as `run`
    fills it (str.format): `{{...}}` is literal braces (a JSON value, the same for every run) and
    `{config_dir}` the sweep's folder, the same for every run."""
    try:
        return any(name in _PER_RUN for _, name, _, _ in string.Formatter().parse(value))
    except ValueError:  # unbalanced braces: parse_command refused the word already
        return False


def _named_path(flag: bool, name: str, by_flag: dict[str, str], varying: dict[str, set[str]]) -> str | None:
    """The varying path a setting names, if any: a flag names a key's last part (dashes for its
    underscores), a Hydra override the whole path."""
    if flag:
        return by_flag.get(name.replace("-", "_"))
    return name if name in varying else None


def _refusal(word: str, path: str, values: set[str]) -> UserError:
    shown = ", ".join(sorted(values)[:3])
    return UserError(
        f"--command sets `{word}` for every run, but the runs differ in `{path}` ({shown}): the "
        "command line wins over the config, so every run would train with the command's value",
        hint=f"remove `{word}` from --command: the rendered configs set `{path}` per run",
    )


def varying(tasks: Sequence[RunTask]) -> dict[str, set[str]]:
    """Path -> the values the runs hold there (as JSON), for the paths holding more than one; the
    run's own folder and name (``_NAMING``) are left to the run-folder checks."""
    seen: dict[str, set[str]] = {}
    for task in tasks:
        for path, value in task.values.items():
            if path.rsplit(".", 1)[-1] not in _NAMING:
                seen.setdefault(path, set()).add(json.dumps(value, sort_keys=True, default=str))
    return {path: values for path, values in seen.items() if len(values) > 1}


def _words(argv: Sequence[str]) -> list[str]:
    """The command's words (one word may hold spaces: `--system_prompt "You are ..."`); a
    ``--shell`` script's words as the shell splits them."""
    if tuple(argv[: len(SHELL)]) != SHELL or len(argv) != len(SHELL) + 1:
        return list(argv)
    try:
        return shlex.split(argv[-1])
    except ValueError:  # an unclosed quote: the shell refuses the script, nothing to look at
        return []


def _settings(words: Sequence[str]) -> Iterator[tuple[str, bool, str, str | None]]:
    """(word, is a flag, name, value) for each ``--name value``, ``--name=value`` (a flag: its name
    is a key's last part) and ``a.b=value`` word (a Hydra override: its name is the whole path)."""
    for i, word in enumerate(words):
        if word.startswith("--") and len(word) > 2:  # more than the dashes
            name, eq, value = word[2:].partition("=")
            following = words[i + 1] if i + 1 < len(words) else None
            yield word, True, name, value if eq else following
        elif "=" in word and not word.startswith("-"):
            name, _, value = word.lstrip("+~").partition("=")
            yield word, False, name, value
