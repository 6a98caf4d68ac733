"""Turn a generated sweep folder into ``RunTask``s, from its ``sweep.lock.json`` only.

The lock, not a directory listing, says what belongs to the sweep: a stray YAML file in the folder is
never run, and a generated file that was edited by hand (or is stale) is refused, because the run
would then not be the run the lock and the report describe.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import shlex
import string
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen import output_keys
from sweepgen.compile.run_api import LOCK_NAME, PLAIN_HINT, YAML_SUFFIXES, Lock, LockFile, plain
from sweepgen.compile.run_api import lock as lock_model
from sweepgen.errors import ConfigError, Location, SweepgenError, UserError
from sweepgen.formats import yamlio
from sweepgen.fs.confine import in_git_folder, resolve_inside
from sweepgen.fs.confine import refuse as confine_refuse
from sweepgen.fs.outtree import read_inside
from sweepgen.run.core.base import SUMMARY_FILE, RunTask
from sweepgen.run.core.plan import trl_output_dir
from sweepgen.run.core.plan.data_digest import data_file_digest
from sweepgen.run.core.plan.shared_outputs import OutputClaims

# {config_dir} (absolute) and {config_name} (no suffix) are what a Hydra app takes: verl's
# `python -m verl.trainer.main_ppo --config-path {config_dir} --config-name {config_name}`
PLACEHOLDERS = ("config", "run_dir", "name", "variant", "config_dir", "config_name")
# paths that name or place a run rather than configure it: they differ between every two runs, so
# as columns they repeat the run name and as curve groups they would split every seed apart
NAMING_PATHS = frozenset({"run_name", "output_dir"})
# the bundled trainer, run by the same interpreter that runs sweepgen (so the venv is the same)
# `-P`: the working folder is not put on its import path, so no file of the user's (a torch.py, a
# datasets/ package) can stand in for a module the trainer imports
if sys.version_info >= (3, 11):
    DEFAULT_COMMAND: tuple[str, ...] = (sys.executable, "-P", "-m", "sweepgen_trainer", "{config}")
else:  # no -P before 3.11: the same, spelled out (`-c` puts the working folder first)
    DEFAULT_COMMAND = (
        sys.executable,
        "-c",
        "import runpy, sys; del sys.path[0]; "
        "runpy.run_module('sweepgen_trainer', run_name='__main__', alter_sys=True)",
        "{config}",
    )
DEFAULT_COMMAND_SUFFIXES = YAML_SUFFIXES
# the bundled trainer's top-level sections: sweepgen_trainer.config.RunConfig's fields (a test holds
# them equal; sweepgen never imports the trainer)
BUNDLED_SECTIONS = frozenset(
    {"run_name", "output_dir", "seed", "model", "data", "reward", "grpo", "logging"}
    | {"routing", "debate", "reward_shaping"}
)
SHELL = ("/bin/sh", "-c")  # how --shell runs a command
# words that mean a shell was expected: without --shell they would reach the trainer as arguments
SHELL_OPERATORS = frozenset({"&&", "||", "|", ";", ">", ">>", "<", "2>", "2>&1", "&"})


@dataclass(frozen=True)
class Sweep:
    dir: Path  # the generated sweep folder, as given (relative to cwd)
    lock: Lock
    tasks: list[RunTask]

    @property
    def name(self) -> str:
        return self.lock.sweep or self.dir.name


def read_lock(sweep_dir: Path) -> Lock:
    if not sweep_dir.is_dir():
        raise UserError(
            f"{sweep_dir} is not a directory", hint="give the generated sweep folder, e.g. generated/<sweep>"
        )
    path = sweep_dir / LOCK_NAME
    if not path.is_file():
        raise UserError(
            f"no {LOCK_NAME} in {sweep_dir}",
            location=Location(str(sweep_dir)),
            hint="run `sweepgen render SPEC` first; sweepgen only runs what it rendered and locked",
        )
    # one reader for every lock: the compile pipeline's typed model (version 1 or 2, damage reported
    # with the path), read without following links
    return lock_model.parse(read_inside(str(sweep_dir), LOCK_NAME) or b"", str(path))


def parse_command(command: str | None, *, shell: bool = False) -> tuple[str, ...] | None:
    """``--command`` as argv with placeholders; None means the bundled trainer. With ``shell`` the
    command is one ``/bin/sh -c`` script (``&&``, pipes, redirections), its placeholders filled in
    shell-quoted (``_fill``)."""
    if command is None:
        return None
    if shell:
        _check_placeholders([command])
        return (*SHELL, command)
    try:
        argv = tuple(shlex.split(command))
    except ValueError as err:  # an unclosed quote
        raise UserError(
            f"--command cannot be split into words: {err}",
            hint="close every quote; quote the whole --command for your shell",
        ) from None
    if not argv:
        raise UserError("--command is empty", hint='e.g. --command "python train.py {config}"')
    operators = [w for w in argv if w in SHELL_OPERATORS]
    if operators:
        raise UserError(
            f"--command has shell syntax ({' '.join(operators)}) but runs without a shell",
            hint="add --shell to run it with /bin/sh -c (placeholders are quoted for it)",
        )
    _refuse_trl_tool(argv)
    _check_placeholders(argv)
    return argv


# the `trl` CLI's commands that train nothing (TRL 1.16's trl/cli/commands: env.py, vllm_serve.py)
_TRL_TOOLS = {
    "env": "prints the versions installed (to paste into a bug report)",
    "vllm-serve": "starts a vLLM server a GRPO run generates with (`use_vllm: true`, `vllm_mode: server`)",
}


def _refuse_trl_tool(argv: Sequence[str]) -> None:
    """`--command "trl env"`: a `trl` command that trains nothing and reads no config is no run."""
    if len(argv) < 2 or os.path.basename(argv[0]) != "trl" or argv[1] not in _TRL_TOOLS:
        return
    raise UserError(
        f"--command runs `trl {argv[1]}`, which {_TRL_TOOLS[argv[1]]}: it trains nothing and reads "
        "no config, so it cannot be a run of the sweep",
        location=Location("--command"),
        hint=f"run `trl {argv[1]}` yourself in a shell; give `run` the training command, e.g. "
        "--command 'trl grpo --config {config}' (or sft, dpo, ...)",
    )


def _check_placeholders(argv: Sequence[str]) -> None:
    names = {name for arg in argv for name in _placeholders(arg)}
    unknown = names - set(PLACEHOLDERS)
    if unknown:
        raise UserError(
            f"--command uses unknown placeholder(s): {', '.join('{' + n + '}' for n in sorted(unknown))}",
            hint=f"available: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}; "
            "write {{ and }} for literal braces",
        )
    if "config" not in names and "config_name" not in names:
        # without it every run would execute the same command: certainly a mistake
        raise UserError(
            "--command must contain {config} (or {config_name}, with {config_dir}, for a Hydra app)",
            hint='e.g. --command "python train.py {config}"',
        )


def _placeholders(arg: str) -> list[str]:
    """The names of the word's placeholders, each plain ({name}: no conversion, no format spec)."""
    try:
        fields = list(string.Formatter().parse(arg))
    except ValueError as err:  # an unbalanced { or }
        raise UserError(
            f"--command word {arg!r} is not a valid template: {err}",
            hint="placeholders are written {config}; write {{ and }} for literal braces",
        ) from None
    for _, name, spec, conversion in fields:
        if name is not None and (spec or conversion):
            raise _not_plain(name, spec, conversion)
    return [name for _, name, _, _ in fields if name is not None]


def _not_plain(name: str, spec: str | None, conversion: str | None) -> UserError:
    """The error for a placeholder with a conversion (``!r``) or a format spec (``:>8``), shown as
    written."""
    shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
    return UserError(
        f"--command placeholder {{{shown}}} has a conversion or format spec",
        hint=f"write plain {{{name}}}; write {{{{ and }}}} for literal braces",
    )


def _refuse_unquotable(key: str, value: str, lock_path: Path) -> None:
    """Exit 2 when a lock entry's ``key`` holds what a shell or an option parser would act on."""
    if not plain(value):
        raise UserError(
            f"the lock entry's {key} {value!r} holds characters a command would act on "
            "(a shell's `$`, quotes, spaces, `;`, a leading `-`...)",
            location=Location(str(lock_path)),
            key=key,
            hint=f"{PLAIN_HINT}, in run_dir, run_name and output, then render again",
        )


def _fill(command: Sequence[str], fields: dict[str, str]) -> tuple[str, ...]:
    """The run's argv: placeholders filled in; in a --shell script, each value shell-quoted."""
    if tuple(command[: len(SHELL)]) == SHELL:
        quoted = {k: shlex.quote(v) for k, v in fields.items()}
        return (*SHELL, *(arg.format_map(quoted) for arg in command[len(SHELL) :]))
    return tuple(arg.format_map(fields) for arg in command)


def config_fingerprint(config_path: Path, data: bytes) -> str:
    """What a config *says*, hashed: a YAML config by its parsed content (so a changed comment or
    header is not a different config), any other file by its bytes. YAML is read as the trainer
    reads it (sweepgen.formats.yamlio, YAML 1.2): `yes` is a string to both."""
    if config_path.suffix in DEFAULT_COMMAND_SUFFIXES:
        try:
            parsed = yamlio.loads(data.decode("utf-8"), str(config_path)).data
            # The data file a trainer config names is part of what it says: changed data
            # makes a run stale, as a changed config does.
            digest = data_file_digest(parsed)
            # Without a data file the fingerprint is the config's alone, so such runs never go stale by it.
            content = parsed if digest is None else {"config": parsed, "data_sha256": digest}
            encoded = json.dumps(content, sort_keys=True, default=str).encode()
            return "yaml:" + hashlib.sha256(encoded).hexdigest()
        except (UserError, UnicodeDecodeError):
            pass  # run_dir_of reports the broken YAML with its position
    return "bytes:" + hashlib.sha256(data).hexdigest()


def check_bundled_configs(tasks: Sequence[RunTask]) -> None:
    """Configs the bundled trainer does not read (a `trl grpo` config) are refused before any run
    starts: started, each would fail with a misleading diagnosis and be left failed."""
    foreign: dict[str, list[str]] = {}
    for task in tasks:
        keys = sorted(str(k) for k in task.config if k not in BUNDLED_SECTIONS)
        if keys:
            foreign.setdefault(", ".join(f"`{k}`" for k in keys), []).append(task.config_path.as_posix())
    if not foreign:
        return
    shown, files = next(iter(foreign.items()))
    more = f" (and {len(files) - 1} more file(s))" if len(files) > 1 else ""
    raise UserError(
        f"{files[0]}{more} is not a config of the bundled trainer: {shown} are not among its sections "
        f"({', '.join(sorted(BUNDLED_SECTIONS))}); no run was started",
        location=Location(files[0]),
        hint='run the trainer it is written for with --command, e.g. --command "trl grpo --config {config}"',
    )


def check_bundled_trainer() -> None:
    """The default command runs the bundled trainer: without the train extra every run would fail
    the same way minutes apart, so say it once, before anything starts (find_spec imports nothing)."""
    missing = [m for m in ("torch", "transformers", "trl") if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(
            f"the bundled trainer needs {', '.join(missing)}, "
            f"which {'is' if len(missing) == 1 else 'are'} not installed",
            hint="install it with `pip install 'sweepgen[train]'`, or run another trainer with --command",
        )


def parse_done_file(done_file: str | None, command: Sequence[str] | None) -> str | None:
    """``--done-file``: a file name inside the run directory that a finished run must leave, on top
    of exit 0. Only for --command: the bundled trainer's done file is always summary.json."""
    if done_file is None:
        return None
    if command is None:
        raise UserError(
            "--done-file is for a trainer given with --command",
            hint="the bundled trainer always leaves summary.json; drop --done-file",
        )
    path = Path(done_file)
    if not done_file or path.is_absolute() or ".." in path.parts or done_file.endswith("/"):
        raise UserError(
            f"--done-file {done_file!r} must be a file path inside the run directory",
            hint="e.g. --done-file metrics.csv or --done-file final/model.safetensors",
        )
    return path.as_posix()


def load_sweep(
    sweep_dir: Path, *, command: Sequence[str] | None = None, done_file: str | None = None
) -> Sweep:
    """Read the lock, check every generated file against it, and build one task per file.

    ``command`` None runs the bundled trainer, whose proof of success is summary.json; a foreign
    ``command`` succeeds on exit 0, and also needs ``done_file`` in its run directory when given."""
    lock = read_lock(sweep_dir)
    lock_path = sweep_dir / LOCK_NAME
    tasks: list[RunTask] = []
    seen_dirs: dict[str, str] = {}  # by output_keys.folder_key: `runs/A` is `runs/a` on macOS
    claims = OutputClaims()
    unset_output: list[tuple[str, Path, bytes]] = []  # (run, config, bytes) for trl_output_dir
    proof = SUMMARY_FILE if command is None else done_file
    for entry in lock.files:
        data = _entry_bytes(sweep_dir, lock_path, entry)
        task = _task(sweep_dir, lock_path, lock, entry, command, proof, data)
        folder = output_keys.folder_key(task.run_dir.as_posix())
        other = seen_dirs.get(folder)
        if other is not None:
            raise ConfigError(
                f"runs {other!r} and {task.name!r} share the output directory {task.run_dir}",
                location=Location(str(lock_path)),
                hint="make output_dir depend on every varying value (e.g. use the run name in it)",
            )
        seen_dirs[folder] = task.name
        claims.add(task.name, task.config_path, data)
        unset_output.append((task.name, task.config_path, data))
        tasks.append(task)
    trl_output_dir.check(command, unset_output)
    return Sweep(sweep_dir, lock, tasks)


def task_of(
    sweep_dir: Path, lock: Lock, entry: LockFile, command: Sequence[str] | None, done_file: str | None
) -> RunTask:
    """The task of one lock entry (a search adds its trials one at a time), with the checks and the
    proof of success of ``load_sweep``: the file must have the bytes the entry records."""
    proof = SUMMARY_FILE if command is None else done_file
    lock_path = sweep_dir / LOCK_NAME
    return _task(sweep_dir, lock_path, lock, entry, command, proof, _entry_bytes(sweep_dir, lock_path, entry))


def _entry_bytes(sweep_dir: Path, lock_path: Path, entry: LockFile) -> bytes:
    """The bytes of a lock entry's file: there, and the bytes the entry records, or exit 2."""
    config_path = sweep_dir / entry.path
    data = read_inside(str(sweep_dir), entry.path)  # no symlink, FIFO or ../ is followed
    if data is None:
        raise UserError(
            f"{config_path} is in the lock but missing",
            location=Location(str(lock_path)),
            hint="render the spec again with `sweepgen render SPEC`",
        )
    if hashlib.sha256(data).hexdigest() != entry.sha256:
        raise UserError(
            f"{config_path} differs from what sweepgen rendered (edited by hand or stale)",
            location=Location(str(config_path)),
            hint="see `sweepgen check`; change the spec and render again instead of editing the file",
        )
    return data


def _task(
    sweep_dir: Path,
    lock_path: Path,
    lock: Lock,
    entry: LockFile,
    command: Sequence[str] | None,
    done_file: str | None,
    data: bytes,
) -> RunTask:
    config_path = sweep_dir / entry.path
    config = lock.config(entry)
    name = entry.run_name or entry.variant
    run_dir = run_dir_of(config_path, data, config, entry.run_dir)
    fields = {
        "config": config_path.as_posix(),
        "run_dir": run_dir.as_posix(),
        "name": name,
        "variant": entry.variant,
        "config_dir": os.path.abspath(config_path.parent),
        "config_name": config_path.stem,
    }
    for key, value in (
        ("path", entry.path),
        ("run_dir", fields["run_dir"]),
        ("run_name", name),
        ("variant", entry.variant),
    ):
        _refuse_unquotable(key, value, sweep_dir / LOCK_NAME)
    if command is None:
        if config_path.suffix not in DEFAULT_COMMAND_SUFFIXES:
            raise UserError(
                f"no default command for {config_path.name}: the bundled trainer reads YAML configs",
                hint='say how to run it, e.g. --command "bash {config}"',
            )
        command = DEFAULT_COMMAND
    argv = _fill(command, fields)
    return RunTask(
        name=name,
        variant=entry.variant,
        config_path=config_path,
        run_dir=run_dir,
        argv=argv,
        values=lock.values(entry),
        config=config,
        fingerprint=config_fingerprint(config_path, data),
        done_file=done_file,
    )


def run_dir_of(config_path: Path, data: bytes, config: Any, run_dir: str | None = None) -> Path:
    """Where a run writes: the run dir the lock entry records (compile.rundir), when it has one;
    else the ``output_dir`` the trainer will read. For a YAML config that is the rendered
    file's own value (a template may compute it, e.g. from the run name, so it can differ from the
    lock's resolved config); for other files (sbatch scripts…) the resolved config's."""
    where = Location(str(config_path))
    if run_dir is not None:
        if not isinstance(run_dir, str) or not run_dir:
            raise ConfigError(
                "the lock entry's run_dir is not a path", location=where, hint="render the spec again"
            )
        _same_as_output_dir(config_path, data, config, run_dir)
        return _confined(run_dir, "run_dir", str(config_path.parent / LOCK_NAME))
    output_dir, source = _output_dir(config_path, data, config)
    if not isinstance(output_dir, str) or not output_dir:
        raise ConfigError(
            f"the {source} has no output_dir", location=where, key="output_dir", hint=_RUN_DIR_HINT
        )
    return _confined(output_dir, "output_dir", str(config_path))


def _output_dir(config_path: Path, data: bytes, config: Any) -> tuple[Any, str]:
    """(the ``output_dir`` the trainer will read, unchecked; which config it is from): a YAML
    config's own rendered value (a template may compute it), else the lock's resolved config's."""
    if config_path.suffix in DEFAULT_COMMAND_SUFFIXES:
        rendered = _rendered_yaml(config_path, data)
        return (rendered.get("output_dir") if isinstance(rendered, dict) else None), "rendered config"
    output_dir = config.get("output_dir") if isinstance(config, dict) else None
    return output_dir, "resolved config (in the lock)"


_RUN_DIR_HINT = (
    "sweepgen run needs the run directory (relative to where you run it): an output_dir in the "
    "config, or a `run_dir` template in the spec, e.g. "
    'run_dir: "runs/{{ sweep.name }}/{{ variant.run_name }}"'
)


def _rendered_yaml(config_path: Path, data: bytes) -> Any:
    """The rendered config as the trainer will read it (YAML 1.2, no duplicate keys), or exit 2
    naming the file."""
    where = Location(str(config_path))
    try:
        return yamlio.loads(data.decode("utf-8"), str(config_path)).data
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"the rendered config is not UTF-8 (byte {err.start})",
            location=where,
            hint="fix the template so it renders UTF-8 text",
        ) from None
    except UserError as err:
        raise ConfigError(
            f"the rendered config is not valid YAML: {err.message}",
            location=err.location or where,
            hint="fix the template so it renders valid YAML",
        ) from None


def _confined(run_dir: str, key: str, source: str) -> Path:
    """A run directory read from a lock or a config: relative, never climbing out, and (links
    resolved) inside the folder runs start from, or exit 2 naming the key and the file."""
    real = resolve_inside(os.getcwd(), run_dir)
    if real is None:
        raise confine_refuse("the run directory", run_dir, key=key, source=source, root=os.getcwd())
    if in_git_folder(real, os.path.realpath(os.getcwd())):
        raise ConfigError(
            f"the run directory {run_dir!r} lies in git's own .git folder",
            location=Location(source),
            key=key,
            hint="git runs what its folder holds (hooks, config): render a run_dir in the work tree",
        )
    return Path(run_dir)


def _same_as_output_dir(config_path: Path, data: bytes, config: Any, run_dir: str) -> None:
    """A config that also names an output_dir must name the same folder as the spec's run_dir, or
    the trainer would write where run.log, the status file and `report` do not look."""
    output_dir = config.get("output_dir") if isinstance(config, dict) else None
    if config_path.suffix in DEFAULT_COMMAND_SUFFIXES:
        try:  # generated trainer YAML is read one way everywhere: sweepgen.formats.yamlio (YAML 1.2)
            rendered = yamlio.loads(data.decode("utf-8"), str(config_path)).data
        except (SweepgenError, UnicodeDecodeError):
            rendered = None
        if isinstance(rendered, dict) and "output_dir" in rendered:
            output_dir = rendered["output_dir"]
    if isinstance(output_dir, str) and os.path.normpath(output_dir) != os.path.normpath(run_dir):
        raise ConfigError(
            f"the spec's run_dir {run_dir!r} and the config's output_dir {output_dir!r} differ",
            location=Location(str(config_path)),
            key="output_dir",
            hint="the trainer writes to output_dir: drop run_dir from the spec, or derive output_dir "
            'from the same template (derived: {output_dir: "..."})',
        )


def select(tasks: Sequence[RunTask], only: Iterable[str]) -> list[RunTask]:
    """Keep the tasks named in ``only`` (run name or variant name; commas split too), in lock order.
    An unknown name is an error with the closest names, never silently nothing."""
    only = list(only)
    if not only:
        return list(tasks)
    wanted = _names(only)
    _refuse_unknown(wanted, run_names(tasks))
    keep = set(wanted)
    return [t for t in tasks if t.name in keep or t.variant in keep]


def only_names(only: Iterable[str]) -> list[str]:
    """The names --only gives: each item's comma-separated names, stripped, empty ones left out."""
    return [n.strip() for item in only for n in item.split(",") if n.strip()]


def run_names(tasks: Iterable[RunTask]) -> set[str]:
    """Every name --only may give of a run: its own and its variant's."""
    return {name for t in tasks for name in (t.name, t.variant)}


def _names(only: Sequence[str]) -> list[str]:
    """The names --only gives (commas split too); none at all is an error."""
    wanted = only_names(only)
    if not wanted:
        # `--only ""` or `--only ,`: selecting everything here would run (or cancel) the whole sweep
        raise UserError(
            "--only names no run",
            hint="give run or variant names, e.g. --only lr0.1,lr0.01; leave --only out for every run",
        )
    return wanted


def _refuse_unknown(wanted: Sequence[str], known: set[str]) -> None:
    """An --only name that is neither a run's nor a variant's: exit 2 with the closest names."""
    for name in wanted:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            raise UserError(
                f"--only {name!r} names no run of this sweep",
                hint=f"did you mean {', '.join(close)}?"
                if close
                else "see `sweepgen list SPEC` for the names",
            )
