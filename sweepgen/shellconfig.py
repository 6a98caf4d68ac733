"""Read a shell or sbatch script as data: its ``#SBATCH`` directives and its commands' flags.

Trainers sweepgen does not bundle are launched by scripts such as::

    #SBATCH --partition=gpu --gres=gpu:1
    export HF_HOME=/scratch/hf
    srun python -m rm.train \\
        --model Qwen/Qwen2.5-7B --lr 5e-6 --use_lora

which this module reads, without running anything, into::

    {"sbatch": {"--partition": "gpu", "--gres": "gpu:1"},
     "env": {"HF_HOME": "/scratch/hf"},
     "commands": {"srun python": {"-m": "rm.train", "--model": "Qwen/Qwen2.5-7B",
                                  "--lr": "5e-6", "--use_lora": True}}}

Rules, chosen so that a diff never hides a change:

* flags keep their dashes (``-n`` and ``--n`` stay different keys); values stay strings, exactly as
  the shell passes them; a bare flag is ``True``; a repeated flag collects its values in a list;
* a flag takes the next token as its value unless that token is itself a flag (a negative number
  is a value); tokens after ``--`` or that no flag takes are kept in order under ``args``;
* a command is keyed by its leading words up to the first flag (``srun python``); a second
  command with the same key gets `` #2``; ``VAR=x cmd`` keeps ``VAR`` under the command's ``env``;
* ``#SBATCH`` lines count only before the first command, as sbatch itself reads them;
* lines ending in ``\\`` are joined; ``;``, ``&&``, ``||``, ``|`` separate commands; a here-document's
  body is kept verbatim under the command's ``heredoc``; other comments are ignored.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location

_SEPARATORS = {";", "&&", "||", "|", "&", ";;"}
_KEYWORDS = {"then", "do", "else"}
_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def load_shell_config(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read shell script: {err}", location=Location(str(path))) from err
    return parse_shell_config(text, str(path))


def parse_shell_config(text: str, filename: str = "<string>") -> dict[str, Any]:
    result: dict[str, Any] = {"sbatch": {}, "env": {}, "commands": {}}
    seen_command = False
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        i += 1
        stripped = line.strip()
        if stripped.startswith("#"):
            if stripped.startswith("#SBATCH") and not seen_command:
                tokens = _split(stripped[len("#SBATCH") :], filename, start + 1)
                _add_flags(result["sbatch"], tokens, None)
            continue
        # join continuation lines, and lines inside an open quote, into one logical line
        while _continues(line) and i < len(lines):
            line = line[:-1] + " " + lines[i] if line.endswith("\\") else line + "\n" + lines[i]
            i += 1
        if _continues(line):
            raise ConfigError(
                "unterminated quote or line continuation at end of script",
                location=Location(filename, start + 1, 1),
                hint="close the quote, or remove the trailing backslash",
            )
        heredoc = _HEREDOC.search(line)
        body = None
        if heredoc:
            end = heredoc.group(2)
            body_lines = []
            while i < len(lines) and lines[i].strip() != end:
                body_lines.append(lines[i])
                i += 1
            if i == len(lines):
                raise ConfigError(
                    f"here-document is not closed by a line `{end}`",
                    location=Location(filename, start + 1, heredoc.start() + 1),
                    hint=f"add a line containing only {end}",
                )
            i += 1
            body = "\n".join(body_lines)
            line = line[: heredoc.start()] + line[heredoc.end() :]
        tokens = _split(line, filename, start + 1)
        for command in _commands(tokens):
            seen_command = True
            _add_command(result, command, body)
            body = None
    return {key: value for key, value in result.items() if value}


def _continues(line: str) -> bool:
    if line.endswith("\\") and (len(line) - len(line.rstrip("\\"))) % 2 == 1:
        return True
    try:
        list(_lexer(line))  # raises on an open quote
    except ValueError:
        return True
    return False


def _lexer(text: str) -> shlex.shlex:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return lexer


def _split(text: str, filename: str, line: int) -> list[str]:
    try:
        return list(_lexer(text))
    except ValueError as err:
        raise ConfigError(
            f"cannot split shell line: {err}", location=Location(filename, line, 1)
        ) from err


def _commands(tokens: list[str]) -> list[list[str]]:
    commands, current = [], []
    for token in tokens:
        if token in _SEPARATORS:
            if current:
                commands.append(current)
            current = []
        else:
            current.append(token)
    if current:
        commands.append(current)
    return commands


def _add_command(result: dict[str, Any], tokens: list[str], heredoc: str | None) -> None:
    env: dict[str, str] = {}
    while tokens and _ASSIGNMENT.match(tokens[0]):
        name, _, value = tokens.pop(0).partition("=")
        env[name] = value
    if tokens and tokens[0] == "export":
        for token in tokens[1:]:
            name, sep, value = token.partition("=")
            result["env"][name] = value if sep else True
        return
    if not tokens:  # plain `VAR=value` lines set shell variables
        result["env"].update(env)
        return
    while tokens and tokens[0] in _KEYWORDS:  # `then srun ...` is the command `srun ...`
        tokens.pop(0)
    if not tokens:
        return
    words = []
    while tokens and not _is_flag(tokens[0]):
        words.append(tokens.pop(0))
    key = " ".join(words) if words else tokens[0]
    mapping: dict[str, Any] = {}
    _add_flags(mapping, tokens, heredoc)
    if env:
        mapping["env"] = env
    commands = result["commands"]
    unique, n = key, 1
    while unique in commands:
        n += 1
        unique = f"{key} #{n}"
    commands[unique] = mapping


def _add_flags(mapping: dict[str, Any], tokens: list[str], heredoc: str | None) -> None:
    args: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            args.extend(tokens[i:])
            break
        if not _is_flag(token):
            args.append(token)
            continue
        name, sep, value = token.partition("=")
        if not (sep and name.startswith("--")):
            name, value = token, True
            if i < len(tokens) and not _is_flag(tokens[i]) and tokens[i] != "--":
                value = tokens[i]
                i += 1
        if name in mapping:
            previous = mapping[name]
            mapping[name] = (previous if isinstance(previous, list) else [previous]) + [value]
        else:
            mapping[name] = value
    if args:
        mapping["args"] = args
    if heredoc is not None:
        mapping["heredoc"] = heredoc


def _is_flag(token: str) -> bool:
    return token.startswith("-") and token not in ("-", "--") and not _NUMBER.fullmatch(token)
