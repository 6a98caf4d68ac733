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
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location

_KEYWORDS = {"then", "do", "else"}
_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"(?<!<)<<-?(?!<)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


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
    lines = text.split("\n")  # only \n ends a line for the shell; splitlines() also splits on \r, \x1c, ...
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
            line = line + "\n" + lines[i]
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


class _Incomplete(Exception):
    """The text ends inside a quote, a ``$(...)`` or after a backslash: the line continues."""


def _continues(line: str) -> bool:
    try:
        _tokenize(line)
    except _Incomplete:
        return True
    return False


def _split(text: str, filename: str, line: int) -> list[str | _Op]:
    try:
        return _tokenize(text)
    except _Incomplete as err:  # an #SBATCH line with an open quote: directives do not continue
        raise ConfigError(f"cannot split shell line: {err}", location=Location(filename, line, 1)) from err


class _Op(str):
    """An unquoted control operator (``;``, ``&&``, ``|`` ...), never a quoted ``'&'`` argument."""


def _tokenize(text: str) -> list[str | _Op]:
    """POSIX shell words: quotes removed, backslash escapes and continuations applied, comments
    dropped, ``$(...)``/``${...}``/backticks kept verbatim, control operators as ``_Op``.

    shlex cannot be used: it returns a quoted ``'&'`` exactly like the operator ``&``.
    """
    tokens: list[str | _Op] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal in_word
        if in_word:
            tokens.append("".join(word))
            word.clear()
            in_word = False

    while i < n:
        c = text[i]
        if c in " \t\n":
            end_word()
            i += 1
        elif c == "#" and not in_word:
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif c == "\\":
            if i + 1 >= n:
                raise _Incomplete("trailing backslash")
            if text[i + 1] != "\n":  # backslash-newline is a continuation: both vanish
                word.append(text[i + 1])
                in_word = True
            i += 2
        elif c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                raise _Incomplete("unterminated single quote")
            word.append(text[i + 1 : close])
            in_word = True
            i = close + 1
        elif c == '"':
            i = _double_quoted(text, i + 1, word)
            in_word = True
        elif c == "$" and text.startswith(("$(", "${"), i) or c == "`":
            close = _matching(text, i)
            word.append(text[i : close + 1])
            in_word = True
            i = close + 1
        elif c in ";&|" and not (c == "&" and word and word[-1].endswith((">", "<"))):
            end_word()
            op = text[i : i + 2] if text[i : i + 2] in ("&&", "||", ";;") else c
            tokens.append(_Op(op))
            i += len(op)
        else:
            word.append(c)
            in_word = True
            i += 1
    end_word()
    return tokens


def _double_quoted(text: str, i: int, word: list[str]) -> int:
    """Read a double-quoted string starting after its quote; returns the index after it."""
    while i < len(text):
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                word.append(text[i + 1])
            i += 2
        elif c == "$" and text.startswith("$(", i) or c == "`":
            close = _matching(text, i)
            word.append(text[i : close + 1])
            i = close + 1
        else:
            word.append(c)
            i += 1
    raise _Incomplete("unterminated double quote")


def _matching(text: str, i: int) -> int:
    """Index of the character closing the ``$(``, ``${`` or backtick that starts at ``i``."""
    if text[i] == "`":
        close = text.find("`", i + 1)
        if close < 0:
            raise _Incomplete("unterminated backtick")
        return close
    opener, closer = text[i + 1], ")" if text[i + 1] == "(" else "}"
    depth, j = 0, i + 1
    while j < len(text):
        if text[j] == opener:
            depth += 1
        elif text[j] == closer:
            depth -= 1
            if depth == 0:
                return j
        elif text[j] in "'\"":  # skip quoted text inside the substitution
            close = text.find(text[j], j + 1)
            if close < 0:
                break
            j = close
        j += 1
    raise _Incomplete(f"unterminated {text[i : i + 2]}")


def _commands(tokens: list[str]) -> list[list[str]]:
    commands, current = [], []
    for token in tokens:
        if isinstance(token, _Op):
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
        # `A=1 export B=2`: the prefix is part of the script too (in POSIX mode it persists)
        result["env"].update(env)
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
