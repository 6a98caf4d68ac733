"""What `run` refuses in the runs' rendered trainer configs before any starts: a ``trl`` command the
installed TRL CLI does not have (trl_command), one vLLM server for
runs at once (vllm_server), runs differing only in a value TRL ignores (trl_ignored), a reward
function TRL cannot load (trl_rewards), more accelerate processes than a run's GPUs
(trl_processes), an ``env:`` block choosing the GPUs (trl_env), a GRPO generation batch TRL
refuses at the run's process count (trl_generation), ``use_vllm`` without vLLM installed
(trl_vllm), a ``report_to`` tracker transformers lacks or whose library is not installed
(trl_report_to), ``use_liger_kernel`` without liger-kernel installed (trl_liger); and, judged
after the rest, a dataset or model folder of the working folder that
is not there (trl_dataset) or a checkpoint to resume from that is not there (trl_resume) (runs
started here or on Slurm, whose jobs start in the same folder, shared with the nodes); offline, a
Hub model or dataset not in the Hugging Face cache (refused for runs started here; for Slurm runs,
whose nodes' cache is not known here, a warning says the check was not made, once); and bf16
without a GPU for runs started here (trl_precision). A key the command line sets as a flag
(``--use_peft``, ``--num_generations 4``) is TRL's over the config: what reads it from the config
is not judged (``--bf16 false`` is read).

Each run's rendered config is read once (config_where.rendered) and handed to each judgment.

A search's trials are judged as each starts (trial_refusal), each against the trials still running:
a refused trial is told as failed and never runs. A refusal reading none of the keys the search
samples (its axes, its derived keys) would meet every trial, so it is the user's error at the first
one (_every_trial), before any run of the search starts: each judgment's refusal says the keys it
was read from (a missing dataset folder reads ``dataset_name``, whatever else the search samples).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.errors import Location, UserError
from sweepgen.run.core.base import Decision, RunStatus, RunTask
from sweepgen.run.core.plan.trl_output_dir import trl_script
from sweepgen.run.start import command_overrides, installed_source, vllm_server
from sweepgen.run.start.config_where import key_location, rendered, value_location
from sweepgen.run.start.trl import (
    trl_chat_template,
    trl_command,
    trl_config_keys,
    trl_cross_fields,
    trl_dataset,
    trl_dataset_config,
    trl_deepspeed,
    trl_env,
    trl_flags,
    trl_generation,
    trl_ignored,
    trl_liger,
    trl_options,
    trl_outside,
    trl_own_script,
    trl_precision,
    trl_processes,
    trl_report_to,
    trl_resume,
    trl_rewards,
    trl_vllm,
)

Note = Callable[[str], None]  # a line for stderr: a warning


def check(
    sweep_dir: Path,
    command: Sequence[str] | None,
    tasks: Sequence[RunTask],
    at_once: int,
    executor: str,
    gpus_each: int | None,
    note: Note | None = None,
) -> None:
    """Exit 2 when the ``tasks`` about to start (``at_once`` of them together, by ``executor``, each
    given ``gpus_each`` GPUs, None: not limited) would share a vLLM server or, run by ``command``
    as TRL's training script, fail or train alike as the module's docstring lists."""
    trl_command.check(command or ())  # `trl online_dpo`: no such command
    flags = command_overrides.flag_values(command or ())
    context = _context(sweep_dir, command or (), gpus_each, flags, executor == "local", note)
    if at_once < 2 and context is None:
        return  # nothing to judge: no config is read
    configs = [(task, rendered(sweep_dir, task)) for task in tasks]
    _refuse(
        vllm_server.shared_among(sweep_dir, configs, at_once, executor, vllm_server.on_command_line(flags))
    )
    if context is not None:
        _judge_trl(context, configs)


# the keys the per-run judgments read from a run's config (env: its block, at the top)
_READ = frozenset(
    {*trl_generation.READS, "reward_funcs", "num_processes", "accelerate_config", "env", "dataset_name"}
    | {"datasets", "bf16", "fp16", "use_cpu"}
)


def trial_refusal(
    sweep_dir: Path,
    command: Sequence[str] | None,
    running: Sequence[RunTask],
    new: Sequence[RunTask],
    at_once: int,
    executor: str,
    sampled: Collection[str],
    gpus_each: int | None,
    note: Note | None = None,
) -> tuple[UserError, bool] | None:
    """The refusal of a search trial's runs ``new`` (judged as ``check`` judges a grid's runs, but
    not against each other's values: a trial's repeats differ in the seed only) or of one naming a
    vLLM server one of ``running`` names, and whether it would meet every trial of a search that
    samples the dotted paths ``sampled``; None when the trial's runs may start."""
    argv = command or ()
    flags = command_overrides.flag_values(argv)
    server_flags = vllm_server.on_command_line(flags)
    shared = vllm_server.first_shared(sweep_dir, running, new, at_once, executor, server_flags)
    if shared is not None:
        return shared, False  # a server depends on the trials running
    try:
        reads = trl_script(argv) or trl_own_script.parsed_class(argv)
        configs = [(task, rendered(sweep_dir, task)) for task in new] if reads else []
        _judge_trial(sweep_dir, configs, argv, gpus_each, flags, (executor == "local", note))
    except UserError as err:
        return err, _every_trial(err, sampled)
    return None


def planned_trial(
    sweep_dir: Path,
    command: Sequence[str] | None,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    executor: str,
    sampled: Collection[str],
    gpus_each: int | None,
    note: Note | None = None,
) -> bool:
    """`run --dry-run` of a search: exit 2 for what the start checks refuse in a trial's runs (their
    configs as rendered in memory, never written) that every trial would meet, as the run's first
    trial would be refused; one that reads a sampled key is the trial's own (False: judge another
    point), as in the run. True when the trial may start."""
    argv = command or ()
    flags = command_overrides.flag_values(argv)
    try:
        _judge_trial(sweep_dir, configs, argv, gpus_each, flags, (executor == "local", note))
    except UserError as err:
        if _every_trial(err, sampled):
            raise
        return False
    return True


def _judge_trial(
    sweep_dir: Path,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    command: Sequence[str],
    gpus_each: int | None,
    flags: Mapping[str, str | None],
    started: tuple[bool, Note | None],
) -> None:
    """``started``: whether the runs start here, and where to say a judgment not made."""
    trl_command.check(command)
    context = _context(sweep_dir, command, gpus_each, flags, *started)
    if context is not None:
        _judge_each(context, configs)


def _every_trial(refusal: UserError, sampled: Collection[str]) -> bool:
    """Whether a per-run judgment's refusal would meet every trial: none of the keys it was read from
    (its ``reads``, as the judgment said; else any key a judgment reads) is sampled (a count on the
    command line has no key: the same for every trial)."""
    reached = {
        part for path in sampled for part in (path.lstrip("+~").split(".")[0], path.rsplit(".", 1)[-1])
    }
    return refusal.key is None or not reached & (refusal.reads if refusal.reads is not None else _READ)


@contextlib.contextmanager
def _reading(*keys: str) -> Iterator[None]:
    """A refusal of the judgment run inside says it read ``keys`` (unless it said more exactly)."""
    try:
        yield
    except UserError as err:
        if err.reads is None:
            err.reads = frozenset(keys)
        raise


def _refuse(error: Exception | None) -> None:
    if error is not None:
        raise error


@dataclass(frozen=True)
class _Context:
    """What the TRL judgments of a sweep's runs read besides each run's own config: the sweep's
    folder, TRL's ``script`` the ``command`` runs, the GPUs each run is given (None: not limited),
    the command line's ``flags`` (command_overrides.flag_values) and whether runs start here."""

    sweep_dir: Path
    script: str
    command: Sequence[str]
    gpus_each: int | None
    flags: Mapping[str, str | None]
    local: bool
    # a script of the person's own: its word, what its parser reads, the fields it hands on
    own: tuple[str, str, frozenset[str]] | None = None
    warn: trl_dataset.Warn | None = None  # a judgment not made (a Slurm node's cache), said once


def _context(
    sweep_dir: Path,
    command: Sequence[str],
    gpus_each: int | None,
    flags: Mapping[str, str | None],
    local: bool,
    note: Note | None = None,
) -> _Context | None:
    """The TRL context of runs of ``command``: TRL's script, or a script of the person's own parsing
    TRL's config class (trl_own_script); None when the command runs neither."""
    warn = _once(note) if note is not None else None
    script = trl_script(command)
    if script is not None:
        return _Context(sweep_dir, script, command, gpus_each, flags, local, warn=warn)
    own = trl_own_script.parsed_class(command, warn)
    return _Context(sweep_dir, own[0], command, gpus_each, flags, local, own[1:], warn) if own else None


def _once(note: Note) -> trl_dataset.Warn:
    """A warning for ``note`` (a line for stderr), each said once (the first run's place), however
    many runs meet it."""
    said: set[str] = set()

    def warn(location: Location, text: str) -> None:
        if text not in said:
            said.add(text)
            note(f"warning: {location}: {text}")

    return warn


def _judge_trl(context: _Context, configs: Sequence[tuple[RunTask, Mapping[str, Any]]]) -> None:
    """Exit 2 when the runs differ only in a value TRL ignores, else at the first run (in order)
    naming a reward function TRL cannot load, asking (each run given ``gpus_each`` GPUs) for more
    processes or other GPUs, sizing a generation batch TRL refuses or, run here (``local``), naming
    a local dataset folder that is not there or training in bf16 on a machine without a GPU."""
    # the command's flags: TRL's over the config
    if context.own is None:  # what TRL's own scripts read: a person's may read it otherwise
        trl_ignored.check(context.sweep_dir, configs, frozenset(context.flags))
    _judge_each(context, configs)


def _judge_each(context: _Context, configs: Sequence[tuple[RunTask, Mapping[str, Any]]]) -> None:
    """Exit 2 at the first run a judgment refuses: TRL's script's, or a person's own (_judge_own)."""
    if context.own is not None:
        _judge_own(context, configs, *context.own)
    else:
        _judge_runs(context, configs)


def _judge_runs(context: _Context, configs: Sequence[tuple[RunTask, Mapping[str, Any]]]) -> None:
    """Exit 2 at the first run (in order) whose own config (or the command) a judgment refuses; each
    config is judged as TRL's script reads it, the values its command line gives over the config's
    (trl_flags)."""
    sweep_dir, script, command = context.sweep_dir, context.script, context.command
    gpus_each = context.gpus_each
    trl_options.check(command, script)  # an option the script's parser refuses
    given = trl_flags.given(command, script)  # the command line's values, typed as TRL's parser types them
    defaults = installed_source.same_environment(command)  # the classes installed here are the run's
    counts = trl_processes.launch_counts(command)  # the command line and its launch config, read once
    cpu_here = context.local and gpus_each is None and trl_precision.no_accelerator()
    read = [(task, trl_flags.merged(config, given)) for task, config in configs]
    for task, config in read:
        trl_config_keys.judge(sweep_dir, task, config, script, command)  # its refusal says what it read
        trl_cross_fields.judge(sweep_dir, task, config, script, command, given)
        with _reading("reward_funcs"):
            trl_rewards.judge(sweep_dir, task, config, script, command, from_command="reward_funcs" in given)
        launched = trl_processes.as_launched(config, command)  # the keys only TRL's CLI hands on
        if gpus_each is not None:
            with _reading("num_processes", "accelerate_config"):
                trl_processes.judge(sweep_dir, task, launched, counts, gpus_each)
            with _reading("env"):
                trl_env.judge(sweep_dir, task, config, gpus_each)
        trl_vllm.judge(sweep_dir, task, config, script, command, context.flags, cpu_here=cpu_here)
        trl_report_to.judge(sweep_dir, task, config, command, context.flags)
        trl_liger.judge(sweep_dir, task, config, command, context.flags)
        trl_deepspeed.judge(sweep_dir, task, config, command, context.flags)
        processes = _processes(launched, counts, command, gpus_each, cpu_here)
        with _reading(*trl_generation.READS, "num_processes", "accelerate_config"):
            trl_generation.judge(sweep_dir, task, config, script, processes, defaults=defaults, given=given)
    _judge_here(context, read, given)  # after what the configs say of TRL: what they need of the machine


def _judge_own(
    context: _Context,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    word: str,
    reads: str,
    handed: frozenset[str],
) -> None:
    """The runs of a person's own script parsing TRL's config class: what that class (its generation
    batch) and transformers (bf16 without a GPU) refuse, the config as its parser reads it
    (``TrlParser``: the command line's values over the config's; ``parse_args_into_dataclasses``
    alone: the command line's values alone, the rendered config read by no one); and the fields the
    script is seen to hand on (trl_own_script.handed) as TRL's scripts' are judged, the others said
    not checked."""
    command, script = context.command, context.script
    given = trl_flags.given(command, script, after=word) if reads != trl_own_script.READS_FILE else {}
    if reads == trl_own_script.READS_ARGV:
        configs = [(task, {}) for task, _ in configs]
    read = [(task, trl_flags.merged(config, given)) for task, config in configs]
    _judge_own_batches(context, read, given)
    _not_seen(context, read, word, handed)
    _judge_here(*_seen_view(context, read, handed), given)


def _seen_view(
    context: _Context, read: Sequence[tuple[RunTask, Mapping[str, Any]]], handed: frozenset[str]
) -> tuple[_Context, list[tuple[RunTask, dict[str, Any]]]]:
    """The context (its flags) and configs as the checks of TRL's scripts may read them for a
    person's script: without the checked fields it is not seen to hand on."""
    kept = {k: v for k, v in context.flags.items() if _seen(k, handed)}
    seen = [(task, {k: v for k, v in config.items() if _seen(k, handed)}) for task, config in read]
    return dataclasses.replace(context, flags=kept), seen


def _judge_own_batches(
    context: _Context, read: Sequence[tuple[RunTask, Mapping[str, Any]]], given: Mapping[str, Any]
) -> None:
    """The generation batch of each run of a person's own script (its config as read)."""
    command = context.command
    counts = trl_processes.launch_counts(command)
    cpu_here = context.local and context.gpus_each is None and trl_precision.no_accelerator()
    here = installed_source.same_environment(command)  # the classes installed here are the run's
    word = context.own[0] if context.own is not None else None
    for task, config in read:
        trl_cross_fields.judge(context.sweep_dir, task, config, context.script, command, given, own=word)
        processes = _processes(config, counts, command, context.gpus_each, cpu_here)
        with _reading(*trl_generation.READS, "num_processes", "accelerate_config"):
            trl_generation.judge(
                context.sweep_dir, task, config, context.script, processes, defaults=here, given=given
            )


def _seen(key: str, handed: frozenset[str]) -> bool:
    """Whether a person's script is seen to hand ``key`` on where TRL's scripts' checks judge it."""
    return key in handed or key not in trl_own_script.CHECKED


def _not_seen(
    context: _Context, configs: Sequence[tuple[RunTask, Mapping[str, Any]]], word: str, handed: frozenset[str]
) -> None:
    """A warning naming the fields the runs set that TRL's scripts' checks would judge and a
    person's ``word`` script is not seen to hand on: not checked, said so."""
    unseen = sorted(
        {key for _, config in configs for key, value in config.items() if not _seen(key, handed) and value}
    )
    if unseen and context.warn is not None:
        context.warn(
            Location(word),
            f"not checked before the runs: {', '.join(unseen)} (your script is read, never run, and "
            "is not seen to hand them on as TRL's own scripts do, e.g. load_dataset(script_args."
            "dataset_name), from_pretrained(model_args.model_name_or_path), trainer.train("
            "resume_from_checkpoint=training_args.resume_from_checkpoint), so a value TRL's scripts "
            "would refuse is not refused here)",
        )


def _processes(
    config: Mapping[str, Any],
    counts: tuple[tuple[int, str] | None, tuple[int, str] | None],
    command: Sequence[str],
    gpus_each: int | None,
    cpu_here: bool,
) -> int | None:
    """How many processes a run starts, where `run` knows it: the count asked for; else one for one
    GPU a run (accelerate starts one process for one GPU), or one on this machine without a GPU
    where nothing asks accelerate for more (trl_processes.one_process); None: not known."""
    asked = trl_processes.asked(config, counts)
    if asked is not None:
        return asked
    if gpus_each == 1 or (cpu_here and trl_processes.one_process(command, config)):
        return 1
    return None


_STARTS_OVER = (
    "{0} was left by an earlier attempt, but resume_from_checkpoint is unset: TRL's script trains "
    "this run from step 0 again and saves over those checkpoints; to resume (transformers restores "
    "the model, optimizer, scheduler and random state), set `resume_from_checkpoint: true` in the "
    "spec's base and render again, or move the folder away for a fresh start"
)
# save_only_model's checkpoints hold the weights alone: transformers would take the step from
# trainer_state.json and start a fresh optimizer and learning-rate schedule, a run unlike either
_MODEL_ONLY = (
    "{0} was left by an earlier attempt, but save_only_model is true, so it holds the model alone: "
    "transformers cannot restore the optimizer, scheduler or random state from it, and this run trains "
    "from step 0 again, saving over those checkpoints; unset save_only_model to make attempts resumable"
)


def _say_started_over(context: _Context, task: RunTask, config: Mapping[str, Any]) -> None:
    """A warning for a run of TRL's own script (which resumes only from what
    resume_from_checkpoint names) that starts over beside checkpoints no attempt on record left
    (those an attempt on record left are resumed from: resumed)."""
    own_flags = command_overrides.flag_values(task.argv)  # the command's, and a resume added here
    resumable = context.own is None or _own_resumes((context.script, *context.own))
    over = trl_resume.started_over(config, own_flags) if resumable else None
    if over is not None and context.warn is not None:
        words = _MODEL_ONLY if trl_resume.model_only(config, own_flags) else _STARTS_OVER
        context.warn(key_location(context.sweep_dir, task, ()), words.format(over))
    unlisted = trl_resume.unlisted(config, context.flags, over=resumable)
    if unlisted is not None and context.warn is not None:  # past MAX_LISTED: said, never a quiet pass
        where = value_location(context.sweep_dir, task, "output_dir", "output_dir" in context.flags)
        context.warn(where, unlisted)


RESUME_FLAG = "--resume_from_checkpoint"


def resumed(
    sweep_dir: Path, command: Sequence[str] | None, decisions: Sequence[Decision], note: Note | None = None
) -> list[Decision]:
    """``decisions`` with each run of TRL's own script (``trl grpo``, ``-m trl.scripts.grpo``; or a
    person's own script that resumes as TRL's do: resumes_by_flag) started again after an attempt
    on record (``--rerun-failed``, a run lost by a `run` that died) resuming
    from the newest complete ``checkpoint-N`` (holding trainer_state.json, which transformers writes
    last) that attempt left in its ``output_dir``: ``--resume_from_checkpoint <output_dir>/checkpoint-N``
    added to its command, as a TRL user restarts a run by hand. TRL's scripts resume only from what
    ``resume_from_checkpoint`` names, so without it the run trained from step 0 again and saved over
    those checkpoints. A run whose config or command sets ``resume_from_checkpoint`` is left as it
    says; each resumed run is said (``note``)."""
    if not command or not resumes_by_flag(command):
        return list(decisions)
    flags = command_overrides.flag_values(command)
    return [_resuming(sweep_dir, d, flags, note) for d in decisions]


def _resuming(
    sweep_dir: Path, decision: Decision, flags: Mapping[str, str | None], note: Note | None
) -> Decision:
    if not decision.start:
        return decision  # not started: nothing to resume
    task = _resumed_task(sweep_dir, decision.task, decision.previous, flags, note)
    return decision if task is decision.task else dataclasses.replace(decision, task=task)


def resumes_by_flag(command: Sequence[str]) -> bool:
    """Whether runs of ``command`` resume from the checkpoint ``--resume_from_checkpoint`` names, and
    only from it: TRL's own script, or a person's own script parsing TRL's config class with
    ``TrlParser`` (its command line over the config) and seen handing it to
    ``trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)`` as TRL's do."""
    return trl_script(command) is not None or _own_resumes(trl_own_script.parsed_class(command))


def _own_resumes(own: tuple[str, str, str, frozenset[str]] | None) -> bool:
    """``own`` (trl_own_script.parsed_class) reads the command line over the config and hands
    ``resume_from_checkpoint`` to ``train`` as TRL's scripts do."""
    return own is not None and own[2] == trl_own_script.READS_BOTH and "resume_from_checkpoint" in own[3]


def resumed_trial(
    sweep_dir: Path,
    command: Sequence[str] | None,
    task: RunTask,
    previous: RunStatus | None,
    note: Note | None,
) -> RunTask:
    """A search trial's run ``task`` started again after an attempt on record (``previous``: its
    status when started again; a run lost with its controller, or cancelled) resumed as ``resumed``
    resumes a grid's run: ``--resume_from_checkpoint <output_dir>/checkpoint-N`` added to its command
    where TRL's own script runs it; else ``task`` as it is."""
    if not command or not resumes_by_flag(command):
        return task
    return _resumed_task(sweep_dir, task, previous, command_overrides.flag_values(command), note)


def _resumed_task(
    sweep_dir: Path,
    task: RunTask,
    previous: RunStatus | None,
    flags: Mapping[str, str | None],
    note: Note | None,
) -> RunTask:
    if previous is None:
        return task  # a first start: nothing of an attempt of ours to resume
    config = rendered(sweep_dir, task)
    last = trl_resume.started_over(config, flags)
    if last is None or trl_resume.model_only(config, flags):
        return task  # nothing to resume from, or weights alone (said by _say_started_over)
    if note is not None:
        note(
            f"{task.name}: resuming from {last}, the newest complete checkpoint of attempt "
            f"{previous.attempt} ({RESUME_FLAG} {last} added to its command)"
        )
    return dataclasses.replace(task, argv=(*task.argv, RESUME_FLAG, last))


def _judge_here(
    context: _Context, configs: Sequence[tuple[RunTask, Mapping[str, Any]]], given: Mapping[str, Any]
) -> None:
    """What the runs need of the machine: their dataset and model folders and the checkpoints they
    resume from, in the working folder (the one a Slurm job starts in too, which a Slurm sweep
    shares with the nodes); the Hugging Face cache where the Hub is off (this machine's is a local
    run's; a Slurm node's is not known here: warned as not checked); and, run here, a GPU for bf16
    where no GPU is given (--gpus says there are), the run's transformers is the one installed here
    (another environment's is not known to raise) and the machine has none."""
    bf16_judged = context.local and context.gpus_each is None
    cpu_only = (
        bf16_judged and installed_source.same_environment(context.command) and trl_precision.no_accelerator()
    )
    # `trl X`: the config's env: reaches huggingface_hub
    where = trl_dataset.Where(trl_command.runs_cli(context.command), context.local, context.warn)
    for task, config in configs:
        trl_dataset.judge(context.sweep_dir, task, config, from_command="dataset_name" in given, where=where)
        trl_dataset.judge_model(
            context.sweep_dir, task, config, from_command="model_name_or_path" in given, where=where
        )
        if context.own is None and context.script in trl_rewards.SCRIPTS:  # their script args' reward model
            reward_model = "reward_model_name_or_path"
            trl_dataset.judge_model(
                context.sweep_dir,
                task,
                config,
                from_command=reward_model in given,
                where=where,
                key=reward_model,
            )
        trl_dataset_config.judge(context.sweep_dir, task, config, from_command="dataset_config" in given)
        trl_chat_template.judge(context.sweep_dir, task, config, from_command="chat_template_path" in given)
        with _reading("resume_from_checkpoint", "output_dir"):
            trl_resume.judge(context.sweep_dir, task, config, command_overrides.flag_values(task.argv))
        _say_started_over(context, task, config)
        if context.warn is not None:
            trl_outside.judge(context.sweep_dir, task, config, given, context.warn)
        if cpu_only:
            with _reading("bf16", "fp16", "use_cpu"):
                trl_precision.judge(context.sweep_dir, task, config, context.flags)
