"""Every `sweepgen` command line in README.md and docs/*.md (fenced blocks and inline code) names a
command and options that exist: the docs cannot drift from the CLI's spelling (a renamed option, a
flag that is not there). Each line is parsed by the CLI itself (click), not run: running the
walkthroughs is what the end-to-end tests (tests/test_first_hour.py, the demo's) do."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from sweepgen.cli import _hoist_console_flags, main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^[ \t]*```([a-z]*)\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`(sweepgen [^`\n]+)`")
SHELL = {"", "bash", "sh", "shell", "console"}
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…")


def _split(text: str) -> list[str]:
    """The `sweepgen ...` commands of a shell text: continuation lines joined, comments dropped,
    each command of a `&&` / `|` chain on its own."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip().removeprefix("$ ").split(" #", 1)[0]
        out += [p for p in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line) if p.startswith("sweepgen ")]
    return out


def _commands() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for lang, body in FENCE.findall(text):
            if lang in SHELL:
                out += [(f"{doc.name}: {c}", c) for c in _split(body)]
        for inline in INLINE.findall(FENCE.sub("", text)):
            if "[" not in inline:  # `sweepgen check [SPEC…] [--diff]`: a synopsis, not a command
                out += [(f"{doc.name}: {c}", c) for c in _split(inline)]
    return list(dict.fromkeys(out))


def problem(line: str) -> str | None:
    """Why the CLI would refuse ``line``'s spelling (no such command or option), else None."""
    try:
        words = [w for w in shlex.split(line)[1:] if not PLACEHOLDER.fullmatch(w)]
    except ValueError:
        return "not a shell command line"
    args = _hoist_console_flags(words)
    while args and args[0] in ("-q", "-v", "--quiet", "--verbose"):
        args = args[1:]
    if not args or args[0] in ("--help", "--version"):
        return None
    ctx = click.Context(main)
    command = main.get_command(ctx, args[0])
    if command is None:
        return f"no command {args[0]!r}"
    try:
        command.make_context(args[0], args[1:], parent=ctx)
    except click.NoSuchOption as err:
        return err.format_message()
    except click.UsageError:
        return None  # a placeholder (SPEC, DIR), a file of the walkthrough, an option named in prose
    return None


COMMANDS = _commands()


def test_the_docs_hold_the_commands_and_the_check_catches_a_misspelling():
    assert len(COMMANDS) > 40
    assert problem("sweepgen render specs/a.yaml --dry-runn") is not None
    assert problem("sweepgen rendr specs/a.yaml") is not None
    assert problem("sweepgen run generated/x -q") is None  # -q after the command is the group's


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_parses(where, line):
    said = problem(line)
    assert said is None, f"{where}: {said}"
