"""``--command 'trl grpo --config {config} --num_generation 4'``: an option TRL's script does not take,
refused before any run starts.

TRL's scripts parse their command line with HfArgumentParser (argparse): an option that is none of
the script's (``--num_processes`` to ``python -m trl.scripts.grpo``, ``--no_bf16``, whose field
defaults to None) raises "Some specified arguments are not used", and a prefix of several
(``--num_generation``: ``--num_generations`` and ``--num_generations_eval``; ``--lr``) "ambiguous
option", at each run's start, after trl's import. argparse takes a prefix of exactly one option as
that option. ``trl NAME`` hands the options its script does not take to ``accelerate launch``, whose
parser takes its own by their whole names alone (``allow_abbrev=False``). The options are read
from the installed sources, never imported: the script's dataclasses (sweepgen.compile.schema.
trl_guess) and accelerate's launch parser; judged only where the command's program is installed
beside sweepgen (installed_source.same_environment).
"""

from __future__ import annotations

import ast
import difflib
import functools
import os
from collections.abc import Sequence

from sweepgen.compile import run_api
from sweepgen.errors import ConfigError, Location
from sweepgen.formats import pysource
from sweepgen.run.start import installed_source
from sweepgen.run.start.trl.trl_flags import script_words


def check(command: Sequence[str], script: str) -> None:
    """Exit 2 when ``command`` gives TRL's ``script`` an option its parser (or, for ``trl NAME``,
    accelerate's) refuses."""
    options, launch = known(command, script)
    if not options:
        return
    cli = os.path.basename(command[0]) == "trl"
    for word, flag in _flags(script_words(command, script), cli):
        problem = refused(flag, options)
        if problem is not None and not (cli and _accelerate_s(flag, problem, launch)):
            raise _refusal(word, flag, script, problem, options | launch)


def known(command: Sequence[str], script: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the options TRL's ``script`` takes, those ``accelerate launch`` takes: for ``trl NAME``
    alone), where the command's environment is sweepgen's own (another's may be another release);
    empty otherwise."""
    if not installed_source.same_environment(command):
        return frozenset(), frozenset()
    cli = os.path.basename(command[0]) == "trl"
    return run_api.trl_guess.script_options(script), _launch_options() if cli else frozenset()


def _flags(words: Sequence[str], cli: bool) -> list[tuple[str, str]]:
    """(word, its option) of each option word; TrlParser takes ``--config`` itself, and TRL's CLI
    (``cli``) the word ``--accelerate_config`` (that spelling alone) before accelerate sees it."""
    own = _CLI_OWN if cli else _OWN
    found = [(word, word.partition("=")[0]) for word in words if word not in own]
    return [(word, flag) for word, flag in found if flag.startswith("--") and flag != "--"]  # `--`: the end


_OWN = frozenset({"--config"})
_CLI_OWN = _OWN | {"--accelerate_config"}


def _accelerate_s(flag: str, problem: str, launch: frozenset[str]) -> bool:
    """Whether ``trl NAME`` hands ``flag``, none of its script's, to accelerate, which takes it (or
    whose options are not known here); an ambiguous one its script's parser refuses itself."""
    return problem == _NONE and (not launch or flag in launch)  # accelerate's parser: no abbreviations


_NONE = "no such option"


def refused(flag: str, options: frozenset[str]) -> str | None:
    """Why argparse refuses ``flag`` among ``options`` (None: it takes it)."""
    matches = [flag] if flag in options else _prefix_of(flag, options)
    if len(matches) == 1:
        return None
    return f"ambiguous option: it could match {', '.join(matches[:4])}" if matches else _NONE


def _prefix_of(flag: str, options: frozenset[str]) -> list[str]:
    """The options ``flag`` is a prefix of (argparse's abbreviations)."""
    return sorted(o for o in options if o.startswith(flag))


def _refusal(word: str, flag: str, script: str, problem: str, known: frozenset[str]) -> ConfigError:
    return ConfigError(
        f"--command gives `{word}` to TRL's {script} script, whose parser refuses it ({problem}): every "
        "run would fail at its start",
        location=Location("--command"),
        hint=did_you_mean(flag, known)
        + f"write the option's whole name (`trl {script} --help` lists them), or remove it from --command",
    )


def did_you_mean(flag: str, known: frozenset[str]) -> str:
    """``--no_bf16`` of a field with no ``--no_`` switch: ``--bf16 false``; else the closest option."""
    negated = "--" + flag[5:] if flag.startswith(("--no_", "--no-")) else None
    if negated in known:
        return f"did you mean `{negated} false`? "
    close = difflib.get_close_matches(flag, sorted(known), n=1, cutoff=0.75)
    return f"did you mean `{close[0]}`? " if close else ""


@functools.cache
def _launch_options() -> frozenset[str]:
    """The options ``accelerate launch`` takes, read from its parser's source (each ``add_argument``'s
    names, and the dashed spelling accelerate adds of each); empty where it is not installed."""
    tree = pysource.parsed("accelerate.commands.launch")
    flags = {name for call in _add_argument_calls(tree) for name in _option_names(call)}
    return frozenset(flags | {f.replace("_", "-") for f in flags if f.startswith("--")})


def _add_argument_calls(tree: ast.Module | None) -> list[ast.Call]:
    calls = [n for n in ast.walk(tree or ast.Module(body=[], type_ignores=[])) if isinstance(n, ast.Call)]
    return [c for c in calls if getattr(c.func, "attr", None) == "add_argument"]


def _option_names(call: ast.Call) -> set[str]:
    names = [str(a.value) for a in call.args if isinstance(a, ast.Constant)]
    return {n for n in names if n.startswith("-")}
