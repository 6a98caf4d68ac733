"""The Optuna study of a search sweep: where it lives, how it is opened, and the spec's sampler,
pruner and distributions as Optuna objects (Optuna's own; sweepgen writes no sampler).

Storage: Optuna's journal file storage, ``<sweep>/.search/study.journal``. It is an append-only log
of operations (create trial, set param, report, tell), one JSON line each, replayed on open:

- a killed controller leaves at most a cut last line, which the reader skips (`status` and `report`
  name it) and the next writer cuts off (``_heal``); a reader (``load_study``) opens nothing to
  write; every operation before it is intact, so a SIGKILL never loses a told trial nor corrupts
  the study;
- writers append under an ``flock`` (``_FlockLock``), which Linux honours across NFS clients and
  which dies with its holder (SQLite's own locking over NFS is what breaks SQLite studies on cluster
  file systems); appends are whole lines, so readers never need the lock;
- there is no server to run, and ``optuna-dashboard <sweep>/.search/study.journal`` opens it.

Optuna is the optional ``search`` extra, imported only by search sweeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import assert_never

from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.fs import filenames, runfs

if TYPE_CHECKING:  # optuna loads on use; the search block with the spec model (pydantic), for a search only
    import optuna

    from sweepgen.compile.run_api import SearchBlock

STATE_DIR = filenames.SEARCH_DIR
JOURNAL = filenames.SEARCH_JOURNAL
STUDY_NAME = "sweepgen"
HEAL_WINDOW = 1 << 20  # an operation is one JSON line, far shorter than this
INSTALL_HINT = "install it with `pip install 'sweepgen[search]'`"


def state_dir(sweep_dir: Path) -> Path:
    """``<sweep>/.search``; a link there (or at the journal) is refused, never followed: a committed
    link would make `run` create and append files wherever it points."""
    path = sweep_dir / STATE_DIR
    for part in (path, path / JOURNAL):
        if part.is_symlink():
            raise ConfigError(
                f"{part} is a symbolic link",
                location=Location(str(part)),
                hint="sweepgen never reads or writes the search's state through a link; delete it",
            )
    return path


def journal_path(sweep_dir: Path) -> Path:
    return state_dir(sweep_dir) / JOURNAL


def import_optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise UserError("a search sweep needs optuna, which is not installed", hint=INSTALL_HINT) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # its per-trial INFO lines would drown ours
    return optuna


class _FlockLock:
    """The journal's writer lock as an ``flock`` on ``study.journal.flock``, in place of Optuna's
    symlink lock: the kernel (or the NFS server, for the Linux client maps ``flock`` to byte-range
    locks) releases it when its holder dies, so a controller SIGKILLed while appending leaves no
    stale lock for the next one to wait out (the symlink lock is only broken after a grace period)."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.path = journal.with_name(journal.name + ".flock")
        self._fd: int | None = None

    def acquire(self) -> bool:
        from sweepgen.run.search.journal_file import open_in_state  # noqa: PLC0415 - imports optuna

        fd = open_in_state(self.path, os.O_RDWR | os.O_CREAT)  # never a link followed
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _heal(self.journal)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def _heal(journal: Path) -> None:
    """Cut a last line that a writer killed mid-append left without its newline: that operation never
    happened, and the next append must not glue itself to it (Optuna would then refuse the log)."""
    from sweepgen.run.search.journal_file import open_in_state  # noqa: PLC0415 - imports optuna

    try:
        with os.fdopen(open_in_state(journal, os.O_RDWR), "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            start = max(0, size - HEAL_WINDOW)
            fh.seek(start)
            tail = fh.read()
            cut = tail.rfind(b"\n")
            fh.truncate(start + cut + 1 if cut >= 0 else start)
    except FileNotFoundError:
        return


def storage(sweep_dir: Path, *, read_only: bool = False) -> optuna.storages.JournalStorage:
    """The study's journal storage. ``read_only`` (`status`, `report`): the journal is opened only to
    read, no folder or lock file is made and no cut last line healed (a reader writes nothing where
    others write, and reads a `cp -al` backup, whose journal has two names); an append raises."""
    lib = import_optuna()
    from sweepgen.run.search.journal_file import NoFollowJournal, ReadOnlyLock  # noqa: PLC0415 - imports optuna

    path = journal_path(sweep_dir)
    lock: Any
    if read_only:
        lock = ReadOnlyLock(path)
    else:
        runfs.makedirs(path.parent)  # a linked .search (or folder on the way) is ELOOP, never followed
        lock = _FlockLock(path)  # Optuna calls acquire/release only
    # Optuna's backend opens the journal by path (a link followed); ours never follows one
    backend = NoFollowJournal(str(path), lock_obj=lock, read_only=read_only)
    journal = lib.storages.JournalStorage(backend)
    return cast("optuna.storages.JournalStorage", journal)


def cut_last_line(study: optuna.Study) -> int | None:
    """The journal's line a read left out because it was cut (a writer killed mid-append, or one
    appending as it was read), or None: a reader names it, and never heals it."""
    backend: Any = getattr(study._storage, "_backend", None)
    return getattr(backend, "cut_line", None)


def deferred_sync(study: optuna.Study) -> contextlib.AbstractContextManager[None]:
    """The study's journal appends fsynced together (journal_file.NoFollowJournal.deferred)."""
    backend: Any = getattr(study._storage, "_backend", None)
    return backend.deferred() if hasattr(backend, "deferred") else contextlib.nullcontext()


def sync(study: optuna.Study) -> None:
    """fsync the study's journal appends made in a ``deferred_sync`` block so far."""
    backend: Any = getattr(study._storage, "_backend", None)
    if hasattr(backend, "sync"):
        backend.sync()


def open_study(sweep_dir: Path, search: SearchBlock) -> optuna.Study:
    """The sweep's study, created on first use; the same study for every later or concurrent `run`."""
    lib = import_optuna()
    _check_sampler(search)
    try:
        study = lib.create_study(
            storage=storage(sweep_dir),
            study_name=STUDY_NAME,
            load_if_exists=True,
            sampler=sampler(search),
            pruner=pruner(search),
            direction="maximize" if search.mode == "max" else "minimize",
        )
    except (
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        AssertionError,
        RecursionError,
    ) as err:
        raise unreadable_journal(sweep_dir, err) from None
    return cast("optuna.Study", study)


def load_study(sweep_dir: Path) -> optuna.Study | None:
    """The study for reading (status, report), or None before the first trial was asked."""
    if not journal_path(sweep_dir).is_file():
        return None
    lib = import_optuna()
    try:
        study = lib.load_study(study_name=STUDY_NAME, storage=storage(sweep_dir, read_only=True))
        return cast("optuna.Study", study)
    except (
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        AssertionError,
        RecursionError,
    ) as err:
        raise unreadable_journal(sweep_dir, err) from None


def unreadable_journal(sweep_dir: Path, err: Exception) -> ConfigError:  # Optuna asserts on an unknown op
    """A journal Optuna cannot replay (garbage, an unknown operation, a wrong type): exit 2 naming it."""
    reason = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
    return ConfigError(
        f"the search's study journal cannot be read: {reason}",
        location=Location(str(journal_path(sweep_dir))),
        hint=getattr(err, "hint", None)
        or "this file is written by sweepgen run (Optuna's journal); restore it from a backup, or "
        "delete the .search folder to start the search over",
    )


SAMPLER_NEEDS = {"cmaes": ("cmaes",), "gp": ("torch", "scipy")}  # what Optuna imports for them


def _check_sampler(search: SearchBlock) -> None:
    """The sampler's own dependencies, said before the first trial (find_spec imports nothing)."""
    missing = [m for m in SAMPLER_NEEDS.get(search.sampler, ()) if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(
            f"sampler {search.sampler} needs {', '.join(missing)}, which Optuna imports for it",
            hint="`pip install 'sweepgen[search]'` brings cmaes; gp needs torch and scipy "
            "(`pip install 'sweepgen[train]'`), or choose tpe",
        )


def sampler(search: SearchBlock, salt: int = 0) -> optuna.samplers.BaseSampler:
    """The spec's sampler; ``salt`` (the next trial's number) varies the seed per ask."""
    lib = import_optuna()
    samplers = lib.samplers
    seed = (search.seed * 1_000_003 + salt) % 2**32
    made: Any  # optuna's samplers, untyped where optuna is imported lazily
    match search.sampler:
        case "random":
            made = samplers.RandomSampler(seed=seed)
        case "qmc":
            # one scrambled sequence for the whole study: the trial number indexes it
            made = samplers.QMCSampler(seed=search.seed, scramble=True, warn_asynchronous_seeding=False)
        case "tpe":
            # constant_liar: parallel trials still running count as bad guesses, so `parallel`
            # asks in a row do not all land on the same promising point
            made = samplers.TPESampler(seed=seed, constant_liar=search.parallel > 1)
        case "cmaes":
            # its search state lives in the study; the seed only draws this generation's point
            made = samplers.CmaEsSampler(
                seed=seed, consider_pruned_trials=True, warn_independent_sampling=False
            )
        case "gp":
            made = samplers.GPSampler(seed=seed, warn_independent_sampling=False)
        case unknown:  # a sampler added to the spec's Literal without one here fails mypy
            assert_never(unknown)
    return cast("optuna.samplers.BaseSampler", made)


def pruner(search: SearchBlock) -> optuna.pruners.BasePruner:
    lib = import_optuna()
    pruners = lib.pruners
    prune = search.prune
    if prune is None:
        return cast("optuna.pruners.BasePruner", pruners.NopPruner())
    made: Any  # as in sampler()
    match prune.method:
        case "none":
            made = pruners.NopPruner()
        case "asha":
            made = pruners.SuccessiveHalvingPruner(
                min_resource=prune.min_steps, reduction_factor=prune.reduction
            )
        case "median":
            # no decision before min_steps, and none before a few trials have shown the median
            made = pruners.MedianPruner(n_startup_trials=search.parallel, n_warmup_steps=prune.min_steps)
        case "hyperband":
            made = pruners.HyperbandPruner(min_resource=prune.min_steps, reduction_factor=prune.reduction)
        case unknown:  # as in sampler()
            assert_never(unknown)
    return cast("optuna.pruners.BasePruner", made)


def distributions(search: SearchBlock) -> dict[str, optuna.distributions.BaseDistribution]:
    """The spec's axes as Optuna distributions, keyed by dotted path."""
    optuna = import_optuna()
    dist = optuna.distributions
    out: dict[str, Any] = {}
    for key, axis in search.axes.items():
        if axis.uniform is not None:
            out[key] = dist.FloatDistribution(float(axis.uniform[0]), float(axis.uniform[1]))
        elif axis.log_uniform is not None:
            out[key] = dist.FloatDistribution(
                float(axis.log_uniform[0]), float(axis.log_uniform[1]), log=True
            )
        elif axis.int_uniform is not None:
            out[key] = dist.IntDistribution(axis.int_uniform[0], axis.int_uniform[1])
        else:
            assert axis.choice is not None
            out[key] = dist.CategoricalDistribution(axis.choice)
    return out


def draw_missing(trial: optuna.trial.Trial, dists: dict[str, Any]) -> dict[str, Any]:
    """The trial's whole point: the values it holds, and the study's sampler's draw for each axis it
    lacks (recorded in the study, as ``ask`` records them). Optuna's public ``suggest_*`` return a
    value the trial already holds without drawing again."""
    lib = import_optuna()
    dist = lib.distributions
    out: dict[str, Any] = {}
    for key, d in dists.items():
        if isinstance(d, dist.FloatDistribution):
            out[key] = trial.suggest_float(key, d.low, d.high, log=d.log, step=d.step)
        elif isinstance(d, dist.IntDistribution):
            out[key] = trial.suggest_int(key, d.low, d.high, log=d.log, step=d.step)
        else:
            out[key] = trial.suggest_categorical(key, d.choices)
    return out
