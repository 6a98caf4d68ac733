"""A command line as data: launchers peeled off, the program named, its flags and overrides nested.

``srun -N 2 torchrun --nproc_per_node 8 -m verl.trainer.main_ppo actor.lr=1e-6 --seed 3`` becomes::

    key  "verl.trainer.main_ppo"
    data {"@launcher": {"srun": {"--nodes": 2}, "torchrun": {"--nproc-per-node": 8}},
          "actor": {"lr": 1e-06}, "--seed": 3}

Rules, chosen so that equivalent spellings read the same and no change can hide:

* a command is keyed by its program: the module after ``-m``, else the script (``train.py``), else
  the command's name, so inserting a command before it shifts nothing;
* a launcher's options are spelled one way: srun's short options by their long names (srun.py),
  torchrun's and accelerate's hyphen/underscore twins alike (launcher_spelling.py);
* argparse flags keep their dashes; ``--f=v`` and ``--f v`` are the same; the words after a flag
  up to the next flag or override are its value (several make a list); a bare flag is True; a flag
  given again collects its values in a list;
* Hydra overrides ``a.b=1``, ``+a.b=1``, ``++a.b=1``, ``~a.b`` nest by their dots; the prefix stays
  on the first key (``+a``), since adding and overriding are different requests;
* values are typed by YAML 1.2 rules (``1e-5`` and ``0.00001`` are the same float), so are flow
  lists in overrides (``a=[1,2]``); words that could not be expanded stay not-evaluated nodes;
* words no flag takes are kept in order under ``@args`` (compared aligned by content, so one
  inserted word is one change); after ``--``, a wrapper's command lines (``-- source s.sh \\&\\&
  python train.py --lr 1``) are read as commands of their own under ``--``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.readers import launcher_spelling, slurm_options, srun
from sweepgen.readers.model import NotEvaluated

Word = str | NotEvaluated

_PYTHON = re.compile(r"python[0-9.]*")
_NEG_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_OVERRIDE = re.compile(r"(\+\+|\+|~)?([A-Za-z_$][\w\-$]*(?:[./@][\w\-$]+)*)(?:=(.*))?", re.S)

# Flags of each launcher that take no value; any other flag takes the next word unless that word
# is itself a flag or names a program.
_LAUNCHERS: dict[str, set[str]] = {
    "torchrun": {"--standalone", "--no-python", "--run-path", "--virtual-local-rank", "--help"},
    "deepspeed": {"--no_python", "--no_local_rank", "--force_multi", "--save_pid", "--no_ssh",
                  "--no_ssh_check", "--bind_cores_to_rank", "--autotuning"},
    "accelerate launch": {"--cpu", "--debug", "--downcast_bf16", "--dynamo_use_dynamic",
                          "--dynamo_use_fullgraph", "--dynamo_use_regional_compilation",
                          "--enable_cpu_affinity", "--help", "--fp8_use_autocast_during_eval",
                          "--multi_gpu", "--no_python", "--no_tpu_cluster",
                          "--quiet", "--same_network", "--tpu", "--tpu_cluster", "--tpu_use_sudo",
                          "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--use_parallelism_config",
                          "--use_xpu"},
    "srun": {"--exclusive", "--overlap", "--unbuffered", "-u", "--label", "-l", "--pty", "--quiet",
             "-Q", "--verbose", "-v", "--kill-on-bad-exit", "-K"},
    "uv run": {"--no-sync", "--frozen", "--locked", "--isolated", "--no-project", "--no-dev",
               "--all-extras", "--active", "--no-active", "--offline", "--quiet", "-q"},
    "ray job submit": {"--no-wait", "--verify", "-v"},
    "mpirun": {"--allow-run-as-root", "--oversubscribe", "--bind-to-none"},
    "nohup": set(),
    "time": {"-p"},
    "exec": set(),
    "stdbuf": set(),
    "env": {"-i", "--ignore-environment"},
}  # fmt: skip
_MODULE_FLAGS = {"-m", "--module"}
_SIMPLE_PROGRAMS = {"bash", "sh", "uv", "env", "nohup", "srun", "torchrun", "deepspeed", "accelerate",
                    "ray", "mpirun", "time", "exec"}  # fmt: skip
# Python's own options that take a value (`python -X dev -W ignore -m pkg`).
_PYTHON_VALUE_FLAGS = {"-X", "-W", "--check-hash-based-pycs"}


def _typed(word: Word) -> Any:
    """A word as YAML 1.2 reads a plain scalar: numbers, bools and null typed, the rest strings."""
    if isinstance(word, NotEvaluated):
        return word
    from sweepgen.readers.yamlfile import plain_scalar_12  # noqa: PLC0415 - yamlfile imports PyYAML: only for words that need it (sbatch lines need none)

    return plain_scalar_12(word) if word != "" else ""


def _override_value(word: Word, where: str, line: int) -> Any:
    """A Hydra override's value: a YAML 1.2 scalar, or a flow list/mapping such as ``[1,2]``."""
    if isinstance(word, NotEvaluated) or word[:1] not in ("[", "{", "'", '"'):
        return _typed(word)
    from sweepgen.readers.yamlfile import read_yaml  # noqa: PLC0415 - yamlfile imports PyYAML: only for flow values

    try:
        return read_yaml(word, where, "1.2").data
    except ConfigError:
        return NotEvaluated(word, where, line)


def _text(word: Word) -> str:
    return word.source if isinstance(word, NotEvaluated) else word


def is_flag(word: Word) -> bool:
    text = _text(word)
    return text.startswith("-") and len(text) > 1 and not _NEG_NUMBER.fullmatch(text)


def _looks_like_program(word: Word) -> bool:
    text = _text(word)
    base = os.path.basename(text)
    return bool(_PYTHON.fullmatch(base)) or base in _SIMPLE_PROGRAMS or base.endswith((".py", ".sh"))


def _launcher_name(words: list[Word]) -> tuple[str, int] | None:
    """The launcher at the head of ``words`` and how many words name it."""
    if not words:
        return None
    head = os.path.basename(_text(words[0]))
    second = _text(words[1]) if len(words) > 1 else ""
    if head in ("accelerate", "uv") and second in ("launch", "run"):
        return f"{head} {second}", 2
    if head == "ray" and second == "job" and len(words) > 2 and _text(words[2]) == "submit":
        return "ray job submit", 3
    if head in _LAUNCHERS and " " not in head:
        return head, 1
    return None


def split_launchers(words: list[Word]) -> tuple[dict[str, Any], list[Word]]:
    """Peel launchers off ``words``: ({launcher: its flags}, the inner command's words)."""
    launchers: dict[str, Any] = {}
    while True:
        found = _launcher_name(words)
        if found is None:
            return launchers, words
        name, used = found
        if name == "srun":
            pairs, i = slurm_options.read_options(
                words, used, srun.OPTIONS, _srun_value, stop_at_operand=True
            )
            flags, module = slurm_options.collect(pairs), None
        else:
            flags, i, module = _launcher_flags(name, words, used)
        launchers[name if name not in launchers else f"{name} #{len(launchers) + 1}"] = flags
        words = words[i:]
        if module is not None:
            # `torchrun -m pkg.mod`: the inner program is a module, as with `python -m`
            return launchers, ["python", "-m", module, *words]


def _part(word: Word, value: str) -> Any:
    """``value``, a part of ``word``, typed; not evaluated when its word was not."""
    return NotEvaluated(value, word.where, word.line) if isinstance(word, NotEvaluated) else _typed(value)


def _srun_value(word: Word) -> bool:
    """Whether the word after an option srun's manual does not list is that option's value."""
    return not is_flag(word) and not _looks_like_program(word) and _text(word) != "--"


def _launcher_flags(name: str, words: list[Word], i: int) -> tuple[dict[str, Any], int, Word | None]:
    """The flags of launcher ``name`` from ``words[i:]``, where its command starts, and the module
    it runs when it is given one (``torchrun -m pkg``)."""
    booleans = _LAUNCHERS[name]
    flags: dict[str, Any] = {}
    while i < len(words):
        word = words[i]
        text = launcher_spelling.respell(name, _text(word)) if is_flag(words[i]) else _text(word)
        if name == "env" and "=" in text and not text.startswith("-"):
            key, _, value = text.partition("=")
            flags[key] = value
            i += 1
            continue
        if text == "--":
            return flags, i + 1, None
        if not is_flag(word):
            if name == "ray job submit":
                # everything up to `--` is ray's; a stray word is ray's too
                _add(flags, "@args", _typed(word))
                i += 1
                continue
            break
        if text in _MODULE_FLAGS and i + 1 < len(words):
            return flags, i + 2, words[i + 1]
        if text.startswith("--") and "=" in text:
            key, _, value = text.partition("=")
            _add(flags, key, _part(word, value))
            i += 1
        elif (
            text not in booleans
            and i + 1 < len(words)
            and not is_flag(words[i + 1])
            and not _looks_like_program(words[i + 1])
            and _text(words[i + 1]) != "--"
        ):
            _add(flags, text, _typed(words[i + 1]))
            i += 2
        else:
            _add(flags, text, True)
            i += 1
    return flags, i, None


def program(words: list[Word], launchers: dict[str, Any]) -> tuple[str, list[Word]]:
    """The program's identity and its own arguments; Python's interpreter options join launchers."""
    if not words:
        return "(empty)", []
    head = _text(words[0])
    if _PYTHON.fullmatch(os.path.basename(head)):
        options: dict[str, Any] = {}
        i = 1
        while i < len(words) and is_flag(words[i]) and _text(words[i]) not in ("-m", "-c"):
            text = _text(words[i])
            if text in _PYTHON_VALUE_FLAGS and i + 1 < len(words):
                _add(options, text, _typed(words[i + 1]))
                i += 2
            else:
                _add(options, text, True)
                i += 1
        if options:
            launchers[head] = options
        if i + 1 < len(words) and _text(words[i]) == "-m":
            return _text(words[i + 1]), words[i + 2 :]
        if i + 1 < len(words) and _text(words[i]) == "-c":
            return f"{head} -c", words[i + 1 :]
        if i < len(words):
            return _text(words[i]), words[i + 1 :]
        return head, []
    return head, words[1:]


def parse_arguments(words: list[Word], where: str, lines: list[int]) -> tuple[dict[str, Any], dict[str, int]]:
    """argparse flags and Hydra overrides as a nested mapping; the line of each top-level key."""
    out: dict[str, Any] = {}
    at: dict[str, int] = {}
    i = 0
    while i < len(words):
        word, line = words[i], lines[i]
        text = _text(word)
        if text == "--":
            rest = words[i + 1 :]
            inner = _inner_commands(rest, where, lines[i + 1 :])
            if inner is not None:
                out["--"] = inner
                at.setdefault("--", line)
                break
            for word in rest:
                _add(out, "@args", _typed(word), always_list=True)
            break
        if _spread(word):
            _add(out, text, word)  # its own key: never a flag's value, and order does not matter
            at.setdefault(text, line)
            i += 1
            continue
        if is_flag(word):
            if text.startswith("--") and "=" in text:
                key, _, value = text.partition("=")
                unknown = isinstance(word, NotEvaluated)
                _add(out, key, NotEvaluated(value, where, line) if unknown else _typed(value))
                at.setdefault(key, line)
                i += 1
                continue
            values: list[Any] = []
            j = i + 1
            while (
                j < len(words)
                and not is_flag(words[j])
                and not _spread(words[j])
                and _override(words[j]) is None
            ):
                values.append(_typed(words[j]))
                j += 1
            _add(out, text, True if not values else values[0] if len(values) == 1 else values)
            at.setdefault(text, line)
            i = j
            continue
        override = _override(word)
        if override is not None:
            prefix, dotted, raw = override
            parsed = None if raw is None else _override_value(raw, where, line)
            _set_override(out, prefix, dotted, parsed)
            at.setdefault(prefix + dotted.split(".")[0], line)
        else:
            _add(out, "@args", _typed(word), always_list=True)
        i += 1
    return out, at


_SEPARATORS = {"&&", "||", ";"}


def _inner_commands(words: list[Word], where: str, lines: list[int]) -> dict[str, Any] | None:
    """A wrapper's ``-- source setup.sh && python train.py --lr 1e-6 ...`` (the separators
    escaped, for the shell the wrapper starts): each command read as one, keyed by its program;
    None when no word after ``--`` starts a program (plain arguments)."""
    segments: list[tuple[list[Word], list[int]]] = [([], [])]
    for word, line in zip(words, lines):
        if _text(word) in _SEPARATORS:
            segments.append(([], []))
        else:
            segments[-1][0].append(word)
            segments[-1][1].append(line)
    segments = [(w, n) for w, n in segments if w]
    if not any(_looks_like_program(w[0]) or _text(w[0]) in ("source", ".") for w, _ in segments):
        return None
    out: dict[str, Any] = {}
    for segment, at in segments:
        launchers: dict[str, Any] = {}
        name, arguments = program(segment, launchers)
        parsed, _ = parse_arguments(arguments, where, at[len(at) - len(arguments) :])
        key = name if name not in out else f"{name} #{sum(k.split(' #')[0] == name for k in out) + 1}"
        out[key] = {**parsed, **({"@launcher": launchers} if launchers else {})}
    return out


_SPREAD = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\[[@*]\]\}|\$[@*]|\$\{[@*]\}")


def _spread(word: Word) -> bool:
    """An array expansion that could not be evaluated (``${ARGS[@]}``, ``$@``): it may stand for
    any number of words, flags included, so it is a part of its own."""
    return isinstance(word, NotEvaluated) and bool(_SPREAD.fullmatch(word.source))


def _override(word: Word) -> tuple[str, str, Word | None] | None:
    if isinstance(word, NotEvaluated):
        found = _OVERRIDE.fullmatch(word.source)
        if not found or found.group(3) is None or "$" in found.group(2):
            return None
        return found.group(1) or "", found.group(2), NotEvaluated(found.group(3), word.where, word.line)
    found = _OVERRIDE.fullmatch(word)
    if not found or "$" in found.group(2):
        return None
    prefix, dotted, value = found.group(1) or "", found.group(2), found.group(3)
    if value is None and prefix != "~":
        return None
    return prefix, dotted, value


def _set_override(out: dict[str, Any], prefix: str, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    parts[0] = prefix + parts[0]
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if part in node:  # `a=1 a.b=2`: keep the second spelled out rather than lose one
                _add(out, prefix + dotted, value)
                return
            child = node[part] = {}
        node = child
    _add(node, parts[-1], value)


def _add(out: dict[str, Any], key: str, value: Any, *, always_list: bool = False) -> None:
    """Set ``key``; a key given again collects its values in a list, in order."""
    if always_list:
        out.setdefault(key, []).append(value)
    elif key in out:
        seen = out[key]
        if isinstance(seen, _Repeated):
            seen.append(value)  # in place: a flag given n times costs n, not n squared
        else:
            out[key] = _Repeated([seen, value])
    else:
        out[key] = value


class _Repeated(list):  # type: ignore[type-arg]
    """The values of a flag given more than once (a plain list once the command is read)."""


def plain(value: Any) -> Any:
    """Turn ``_Repeated`` markers back into plain lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
